// The completion path as JS sees it: results come back from SQLite threads
// through the addon's own event-loop signal and are settled inside a
// callback scope, as any other event-loop callback: continuations keep
// their caller's async context, and process.nextTick callbacks queued in a
// continuation run before the event loop moves on.

import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';

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
