// threadNice: the SQLite threads that run a database's work (the pool's,
// one pool per nice value asked for) run at a lower scheduling priority
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

/** Nice values of this process's SQLite threads (the pool's). */
function poolNices() {
  return fs
    .readdirSync('/proc/self/task')
    .filter((tid) => {
      try {
        return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith('offloop-sql-');
      } catch {
        return false; // The thread ended while we looked.
      }
    })
    .map(niceOfThread);
}

/** Waits until the pool threads of databases closed earlier have left. */
async function noPoolThreads() {
  for (let i = 0; i < 200 && poolNices().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(poolNices(), [], 'the threads of closed databases left');
}

test('threadNice: 7 runs the database on threads of nice 7; the JS thread keeps its own', { skip: process.platform !== 'linux' }, async () => {
  await noPoolThreads();
  const own = niceOfThread(process.pid);
  const db = await Database.open(path.join(tmp.dir, 'nice.db'), { readers: 2, threadNice: 7 });
  try {
    // Reads on every reader at once, a write, a checkpoint: every lane ran.
    await Promise.all([db.exec('CREATE TABLE IF NOT EXISTS t(x)'), ...Array.from({ length: 20 }, () => db.prepare('SELECT 1').get())]);
    await db.checkpoint();
    const nices = poolNices();
    assert.ok(nices.length >= 1, 'a pool thread runs');
    assert.deepEqual(nices, nices.map(() => Math.max(7, own)));
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
        .filter((tid) => fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').startsWith('offloop-sql-'))
        .map(nice);
      await db.close();
      console.log(JSON.stringify({ own: nice(process.pid), threads }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { own, threads } = JSON.parse(child.stdout);
  assert.equal(own, 10);
  assert.ok(threads.length >= 1, 'a pool thread runs');
  assert.deepEqual(threads, threads.map(() => 10), 'the pool threads stay at the JS thread\'s nice');
});

test('threadNice defaults to 0 and is validated as an integer from 0 to 19', async () => {
  if (process.platform === 'linux') await noPoolThreads();
  const db = await Database.open(path.join(tmp.dir, 'default.db'), { readers: 1 });
  try {
    // Threads start with their creator's nice value: the JS thread's.
    if (process.platform === 'linux') {
      await db.prepare('SELECT 1').get();
      const own = niceOfThread(process.pid);
      const nices = poolNices();
      assert.ok(nices.length >= 1, 'a pool thread runs');
      assert.deepEqual(nices, nices.map(() => own));
    }
  } finally {
    await db.close();
  }
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: 20 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => new Database(path.join(tmp.dir, 'bad.db'), { threadNice: 1.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
});
