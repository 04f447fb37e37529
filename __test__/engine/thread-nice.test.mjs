// threadNice: the database's threads run at a lower scheduling priority
// than the event loop, on Linux, when asked.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';

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
