// A database whose writer closed its connection when idle: a query its
// writer has not prepared yet runs on a reader, which wakes neither the
// writer nor, replicated, its replicator; what the writer was asked to do
// before that query still comes first; and the database's close leaves the
// files as SQLite's last close does, though only a reader opened them.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, readerExecuted, tempDir, until } from '../engine-helpers.mjs';

const tmp = tempDir('dozing-writer');
after(() => tmp.cleanup());

Database.configure({ idleTimeout: 100 });
after(() => Database.configure({ idleTimeout: null }));

const connections = () => Database.stats().connections;
const filesOf = (file) => fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(path.basename(file)));

test('a query first asked after the writer closed when idle runs on a reader: a replicated database stays at rest', async () => {
  const file = tmp.file('rested');
  const db = await Database.open(file, { readers: 1, replica: { url: `file://${path.join(tmp.dir, 'rested-replica')}` } });
  try {
    await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1), (2), (3)');
    await until(() => connections() === 0, 'the writer and its replicator at rest');
    const before = db.stats();
    const rows = await Promise.all([
      db.prepare('SELECT sum(v) AS s FROM t').get(),
      db.prepare('SELECT count(*) AS n FROM t WHERE v > ?').get(1),
      db.prepare('VALUES (42)').all(),
    ]);
    assert.deepEqual(rows, [{ __proto__: null, s: 6 }, { __proto__: null, n: 2 }, [{ __proto__: null, column1: 42 }]]);
    const stats = db.stats();
    assert.equal(readerExecuted(stats) - readerExecuted(before), 3);
    assert.equal(stats.writer.executed, before.writer.executed, 'the writer ran none of them');
    // One reader's connection: the writer's would count 3 (itself and the
    // replicator's two read-only connections).
    assert.equal(connections(), 1);
    // A write still wakes the writer, and the replica gets it.
    await db.exec('INSERT INTO t VALUES (4)');
    assert.equal((await db.syncReplica()).txid > 0, true);
    assert.deepEqual(await db.prepare('SELECT sum(v) AS s FROM t').get(), { __proto__: null, s: 10 });
  } finally {
    await db.close();
  }
});

test('what the writer was asked first comes first: a TEMP table made while it dozed is seen by the query after it', async () => {
  for (let i = 0; i < 8; i++) {
    const db = await Database.open(tmp.file('temp'));
    try {
      await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
      await until(() => connections() === 0, 'every connection closed when idle');
      // Neither awaited before the other is asked: the query is queued
      // while the writer still dozes, with the TEMP table's job queued.
      const made = db.exec(`CREATE TEMP TABLE tmp(a); INSERT INTO tmp VALUES (${i})`);
      const read = db.prepare('SELECT a FROM tmp').get();
      await made;
      assert.deepEqual(await read, { __proto__: null, a: i });
    } finally {
      await db.close();
    }
  }
});

test("close() after reads that only a reader served leaves the files as SQLite's last close does", async () => {
  const file = tmp.file('reads-only');
  const db = await Database.open(file);
  await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
  await until(() => connections() === 0, 'every connection closed when idle');
  assert.deepEqual(filesOf(file), [path.basename(file)]);
  // A reader opens the WAL and its index, and cannot remove them.
  assert.deepEqual(await db.prepare('SELECT v FROM t').get(), { __proto__: null, v: 1 });
  await until(() => connections() === 0, 'the reader closed when idle');
  await db.close();
  assert.deepEqual(filesOf(file), [path.basename(file)]);
});
