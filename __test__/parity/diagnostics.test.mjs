// The `sqlite.db.query` diagnostics channel: side by side with node:sqlite
// under Node 24 (the message's shape, failures, no subscriber), and over
// many calls in flight at once: one message per call, each once its call
// settled, none after the last subscriber left.

import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const tmp = tempDir('diagnostics');
after(() => tmp.cleanup());

const channel = diagnosticsChannel.channel('sqlite.db.query');

test('node:sqlite parity: sqlite.db.query messages', { skip: skipWithoutNode24 }, async (t) => {
  for (const r of runUnderNode24('diagnostics.cjs')) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('every call in flight publishes one message, before its caller continues', async () => {
  const db = await Database.open(tmp.file('many'), { readers: 2 });
  const seen = [];
  const listener = (m) => seen.push(m);
  channel.subscribe(listener);
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v UNIQUE)');
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    const read = db.prepare('SELECT v FROM t WHERE id = ?');
    const calls = [];
    for (let i = 0; i < 100; i++) {
      calls.push(insert.run(i % 90).then((r) => ({ ok: r.changes === 1, published: seen.length })));
      calls.push(read.get(1).then(() => ({ ok: true, published: seen.length })));
    }
    const settled = await Promise.all(
      calls.map((c) => c.catch((err) => ({ ok: err.code === 'ERR_SQLITE_ERROR', published: seen.length }))),
    );
    // 90 distinct values: the last 10 inserts fail on UNIQUE, and publish too.
    assert.equal(settled.filter((s) => s.ok).length, 200);
    // A caller continues after its own message (and exec's) was published.
    assert.ok(settled.every((s) => s.published >= 2));
    assert.equal(seen.length, 201);
    const count = (sql) => seen.filter((m) => m.sql === sql).length;
    assert.equal(count('INSERT INTO t(v) VALUES (?)'), 100);
    assert.equal(count('SELECT v FROM t WHERE id = ?'), 100);
    assert.ok(seen.every((m) => m.database === db && Number.isInteger(m.duration) && m.duration >= 0));
  } finally {
    channel.unsubscribe(listener);
    await db.close();
  }
});

test('no message is published once the last subscriber left, even for calls it saw start', async () => {
  const db = await Database.open(tmp.file('left'));
  const seen = [];
  const listener = (m) => seen.push(m);
  channel.subscribe(listener);
  const pending = Array.from({ length: 20 }, () => db.prepare('SELECT 1 AS one').get());
  channel.unsubscribe(listener);
  try {
    const rows = await Promise.all(pending);
    assert.ok(rows.every((r) => r.one === 1));
    await db.exec('SELECT 1');
    assert.equal(seen.length, 0);
  } finally {
    await db.close();
  }
});
