// The completion path as JS sees it: results come back from SQLite threads
// through the addon's own event-loop signal and are settled inside a
// callback scope, as any other event-loop callback: continuations keep
// their caller's async context, and process.nextTick callbacks queued in a
// continuation run before the event loop moves on.

import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, test } from 'node:test';

import { Database, readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('completion');
let db;

before(async () => {
  db = await Database.open(tmp.file(), { readers: 4 });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  await db.batch(Array.from({ length: 100 }, (_, i) => ['INSERT INTO t(v) VALUES (?)', [`v${i}`]]));
});

after(async () => {
  await db.close();
  tmp.cleanup();
});

test('each awaited call resumes in its own caller\'s AsyncLocalStorage store, with 100 callers interleaved', async () => {
  const als = new AsyncLocalStorage();
  const get = db.prepare('SELECT v FROM t WHERE id = ?');
  const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
  const caller = (k) =>
    als.run({ k }, async () => {
      const seen = [];
      for (let i = 0; i < 20; i++) {
        const row = await get.get(((k + i) % 100) + 1);
        seen.push(als.getStore().k === k && row.v === `v${(k + i) % 100}`);
        await ins.run(`from ${k}`);
        seen.push(als.getStore().k === k);
      }
      return seen.every(Boolean);
    });
  const results = await Promise.all(Array.from({ length: 100 }, (_, k) => caller(k)));
  assert.deepEqual(results, Array(100).fill(true));
});

test('a nextTick queued in a continuation runs before a setImmediate queued there, for every call of a burst', async () => {
  const get = db.prepare('SELECT v FROM t WHERE id = ?');
  const order = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      get.get(i + 1).then(
        () =>
          new Promise((resolve) => {
            const seen = [];
            setImmediate(() => {
              seen.push('immediate');
              resolve(seen.join(','));
            });
            process.nextTick(() => seen.push('tick'));
          }),
      ),
    ),
  );
  assert.deepEqual(order, Array(50).fill('tick,immediate'));
});

test('a burst of results larger than one slice is settled over several turns of the loop, every row intact', async () => {
  const s = await Database.open(tmp.file('slices'), { readers: 2 });
  try {
    await s.exec('CREATE TABLE r(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)');
    await s.batch(Array.from({ length: 200 }, (_, i) => ['INSERT INTO r(a, b, c) VALUES (?, ?, ?)', [i, `row ${i}`, i / 2]]));
    const all = s.prepare('SELECT id, a, b, c FROM r WHERE id > ? ORDER BY id LIMIT 100');
    await all.all(0); // routed to the readers from here on
    const CALLS = 64;
    const executed = () => {
      const stats = s.stats();
      return stats.writer.executed + readerExecuted(stats);
    };
    const before = executed();
    // The loop's turns, counted by an immediate that queues the next one.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const turns = [];
    const calls = Array.from({ length: CALLS }, (_, i) =>
      all.all(i).then((rows) => {
        turns.push(turn);
        return rows;
      }),
    );
    // Calls go out at the end of the microtask checkpoint they were made
    // in. Then hold the JS thread until every call has run and (a moment
    // later) queued its completion, so they all wait for the same drain:
    // 64 results of 100 rows of 4 values are several slices' work.
    await Promise.resolve();
    const deadline = Date.now() + 20_000;
    while (executed() < before + CALLS && Date.now() < deadline) sleepSync(5);
    sleepSync(200);
    const results = await Promise.all(calls);
    counting = false;
    results.forEach((rows, i) => {
      assert.equal(rows.length, 100);
      rows.forEach((row, k) => {
        const n = i + k;
        assert.deepEqual({ ...row }, { id: n + 1, a: n, b: `row ${n}`, c: n / 2 });
      });
    });
    assert.ok(new Set(turns).size > 1, `all ${CALLS} calls settled in one turn of the loop`);
    assert.deepEqual(turns, [...turns].sort((a, b) => a - b));
  } finally {
    await s.close();
  }
});

/** Blocks the JS thread for `ms` milliseconds. */
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
