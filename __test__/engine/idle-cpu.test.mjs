// An idle database uses no CPU: the SQLite threads and the JS thread may
// spin for a few microseconds waiting for a call or a reply due soon, never
// once the calls stop. Counted from the kernel's per-thread CPU time
// (/proc/self/task/*/schedstat), not timed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Database, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('idle-cpu');
after(() => tmp.cleanup());

const linux = process.platform === 'linux';

/** Each thread of this process: its name and the CPU time it used, in ns. */
function threadCpu() {
  const byThread = new Map();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      byThread.set(Number(tid), { name, ns });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return byThread;
}

test('after thousands of back-to-back calls, an idle database and its event loop use no CPU', { skip: !linux && 'reads /proc' }, async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const get = db.prepare('SELECT v FROM t WHERE id = ?');
    // Lone awaited calls, one after another: what teaches the threads that
    // work comes quickly, so that they spin before they park.
    for (let i = 1; i <= 2000; i++) {
      await ins.run(`v${i}`);
      assert.equal((await get.get(i)).v, `v${i}`);
    }
    // Any spin ends within microseconds of the last call; then count.
    await sleep(50);
    const before = threadCpu();
    await sleep(500);
    const now = threadCpu();
    let offloop = 0;
    let js = 0;
    const used = [];
    for (const [tid, { name, ns }] of now) {
      const delta = ns - (before.get(tid)?.ns ?? ns);
      if (name.startsWith('offloop')) offloop += delta;
      if (tid === process.pid) js = delta;
      used.push(`${name}: ${(delta / 1e6).toFixed(2)} ms`);
    }
    // A thread spinning through the half second would show about 500 ms.
    assert.ok(offloop < 5e6, `the database's threads used ${offloop / 1e6} ms while idle: ${used.join(', ')}`);
    assert.ok(js < 25e6, `the JS thread used ${js / 1e6} ms while idle: ${used.join(', ')}`);
  } finally {
    await db.close();
  }
});
