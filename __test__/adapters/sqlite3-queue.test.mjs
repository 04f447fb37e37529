// offloop/sqlite3's waiting lines under many queued calls: the order of
// every callback when hundreds of thousands of calls wait at once, on a
// statement and on the database, and the ring buffer that holds them
// (adapters/sqlite3/fifo.js). How fast they drain is bench/sqlite3.mjs's
// business, not this file's.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';

import { Database } from 'offloop/sqlite3';

import { tempDir } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const { Fifo } = require('../../adapters/sqlite3/fifo.js');

const tmp = tempDir('sqlite3-queue');
after(() => tmp.cleanup());

const QUEUED = 200_000;

const close = (db) => new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));

test('200,000 stmt.run() calls queued in one serialize() loop each call back once, in the order they were made, with their own row', async () => {
  const db = new Database(tmp.file());
  const order = [];
  const lastIds = [];
  await new Promise((resolve, reject) => {
    db.serialize(() => {
      db.run('CREATE TABLE foo (id INT, txt TEXT)');
      db.run('BEGIN');
      const stmt = db.prepare('INSERT INTO foo VALUES (?, ?)');
      for (let i = 0; i < QUEUED; i++) {
        // A string built piece by piece, as node-sqlite3's fixture builds its own.
        let text = 'row';
        for (let j = 0; j < i % 7; j++) text += String.fromCharCode(97 + j);
        stmt.run(i, text, function (err) {
          if (err) reject(err);
          order.push(i);
          lastIds.push(this.lastID);
        });
      }
      stmt.finalize();
      db.run('COMMIT', (err) => (err ? reject(err) : resolve()));
    });
  });
  assert.equal(order.length, QUEUED);
  for (let i = 0; i < QUEUED; i++) {
    if (order[i] !== i) assert.fail(`callback ${i} was call ${order[i]}'s`);
    if (lastIds[i] !== i + 1) assert.fail(`call ${i} saw lastID ${lastIds[i]}`);
  }
  const rows = await new Promise((resolve, reject) => db.all('SELECT id, txt FROM foo ORDER BY rowid', (err, r) => (err ? reject(err) : resolve(r))));
  assert.equal(rows.length, QUEUED);
  for (let i = 0; i < QUEUED; i++) {
    const want = `row${'abcdefg'.slice(0, i % 7)}`;
    if (rows[i].id !== i || rows[i].txt !== want) assert.fail(`row ${i} is ${JSON.stringify(rows[i])}`);
  }
  await close(db);
});

test('200,000 db.run() calls queued in serialize() run in the order they were made', async () => {
  const db = new Database(tmp.file());
  const order = [];
  await new Promise((resolve, reject) => {
    db.serialize(() => {
      db.run('CREATE TABLE t (i INT)');
      db.run('BEGIN');
      for (let i = 0; i < QUEUED; i++) {
        db.run('INSERT INTO t VALUES (?)', i, (err) => {
          if (err) reject(err);
          order.push(i);
        });
      }
      db.run('COMMIT', (err) => (err ? reject(err) : resolve()));
    });
  });
  assert.equal(order.length, QUEUED);
  for (let i = 0; i < QUEUED; i++) if (order[i] !== i) assert.fail(`callback ${i} was call ${order[i]}'s`);
  const rows = await new Promise((resolve, reject) => db.all('SELECT i FROM t ORDER BY rowid', (err, r) => (err ? reject(err) : resolve(r))));
  for (let i = 0; i < QUEUED; i++) if (rows[i].i !== i) assert.fail(`row ${i} is ${rows[i].i}`);
  await close(db);
});

test('a Fifo gives its entries back in the order they were pushed, across growth and wrap-around', () => {
  const fifo = new Fifo(3);
  let pushed = 0;
  let shifted = 0;
  // Pushes and shifts interleaved, so the front wraps around the ring
  // while it grows.
  for (let round = 0; round < 200; round++) {
    for (let k = 0; k < round % 37; k++, pushed++) fifo.push(pushed, `b${pushed}`, pushed * 2);
    for (let k = 0; k < round % 23 && fifo.length > 0; k++, shifted++) {
      assert.equal(fifo.peek(1), `b${shifted}`);
      assert.equal(fifo.peek(2), shifted * 2);
      assert.equal(fifo.shift(), shifted);
    }
    assert.equal(fifo.length, pushed - shifted);
  }
  while (fifo.length > 0) assert.equal(fifo.shift(), shifted++);
  assert.equal(shifted, pushed);
  assert.equal(fifo.shift(), undefined);
  assert.equal(fifo.peek(), undefined);
});
