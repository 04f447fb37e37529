// threadNice: the database's threads run at a lower scheduling priority
// than the event loop, on Linux, when asked.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('thread-nice');
after(() => tmp.cleanup());

/** The nice value of thread `tid` of this process (field 19 of its stat). */
function niceOfThread(tid) {
  const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  // The name in field 2 may hold spaces: count from its closing ')'.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Nice values of this process's threads whose name starts with `prefix`. */
function niceOf(prefix) {
  return fs
    .readdirSync('/proc/self/task')
    .filter((tid) => fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith(prefix))
    .map(niceOfThread);
}

test('threadNice: 7 gives the writer, readers and checkpointer nice 7; the JS thread keeps its own', { skip: process.platform !== 'linux' }, async () => {
  const own = niceOfThread(process.pid);
  const db = await Database.open(path.join(tmp.dir, 'nice.db'), { readers: 2, threadNice: 7 });
  try {
    await db.prepare('SELECT 1').get();
    const nices = niceOf('offloop-');
    assert.equal(nices.length, 4, 'writer, two readers, checkpointer');
    assert.deepEqual(nices, [7, 7, 7, 7].map((n) => Math.max(n, own)));
    assert.equal(niceOfThread(process.pid), own);
  } finally {
    await db.close();
  }
});

test('threadNice never raises a thread above the JS thread, even with the privilege to (root)', { skip: process.platform !== 'linux' }, async () => {
  // The child's JS thread lowers its own priority to nice 10 first; the
  // database's threads start from it and ask for 7.
  const child = await runChild(
    tmp.dir,
    `
    const fs = require('node:fs');
    const os = require('node:os');
    const { Database } = require(OFFLOOP);
    const nice = (tid) => {
      const stat = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    os.setPriority(10);
    (async () => {
      const db = await Database.open(${JSON.stringify(path.join(tmp.dir, 'niced.db'))}, { readers: 1, threadNice: 7 });
      await db.prepare('SELECT 1').get();
      const threads = fs
        .readdirSync('/proc/self/task')
        .filter((tid) => fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').startsWith('offloop-'))
        .map(nice);
      await db.close();
      console.log(JSON.stringify({ own: nice(process.pid), threads }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { own, threads } = JSON.parse(child.stdout);
  assert.equal(own, 10);
  assert.deepEqual(threads, [10, 10, 10], 'writer, reader and checkpointer stay at the JS thread\'s nice');
});

test('threadNice defaults to 0 and is validated as an integer from 0 to 19', async () => {
  const db = await Database.open(path.join(tmp.dir, 'default.db'), { readers: 1 });
  try {
    // Threads start with their creator's nice value: the JS thread's.
    if (process.platform === 'linux') {
      const own = niceOfThread(process.pid);
      assert.deepEqual(niceOf('offloop-'), [own, own, own]);
    }
  } finally {
    await db.close();
  }
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: 20 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: 1.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
});
