// serialize() and deserialize(): side by side with node:sqlite under
// Node 24 (images, attached schemas, errors), and what only offloop has to
// show: an image is taken on the writer in arrival order, a database with
// reader threads or a replica refuses an image, and a file database
// without readers takes one without its file changing.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const tmp = tempDir('image');
after(() => tmp.cleanup());

const COUNT = 'SELECT count(*) AS n FROM t';

test('node:sqlite parity: serialize and deserialize', { skip: skipWithoutNode24 }, async (t) => {
  const results = runUnderNode24('image.cjs');
  for (const r of results) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('a serialize queued behind writes holds exactly the writes queued before it', async () => {
  const db = await Database.open(tmp.file('queued.db'));
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v)');
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    const calls = [];
    const images = [];
    for (let i = 0; i < 200; i++) {
      calls.push(insert.run(i));
      if (i % 50 === 49) images.push(db.serialize());
    }
    const runs = await Promise.all(calls);
    assert.deepEqual(
      runs.map((r) => r.lastInsertRowid),
      runs.map((_, i) => i + 1),
    );
    const counts = [];
    for (const image of await Promise.all(images)) {
      const copy = await Database.open(':memory:');
      await copy.deserialize(image);
      counts.push((await copy.prepare(COUNT).get()).n);
      await copy.close();
    }
    assert.deepEqual(counts, [50, 100, 150, 200]);
  } finally {
    await db.close();
  }
});

test('a database with reader threads refuses an image, and keeps answering from its file', async () => {
  const db = await Database.open(tmp.file('readers.db'), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    const image = await db.serialize();
    await assert.rejects(db.deserialize(image), {
      code: 'ERR_INVALID_STATE',
      message: /without reader threads/,
    });
    const reads = await Promise.all(Array.from({ length: 32 }, () => db.prepare(COUNT).get()));
    assert.deepEqual(
      reads.map((r) => r.n),
      reads.map(() => 1),
    );
  } finally {
    await db.close();
  }
});

test('a replicating database refuses an image', async () => {
  const db = await Database.open(tmp.file('replicating.db'), { readers: 0, replica: { url: `file://${tmp.dir}/replica` } });
  try {
    await db.exec('CREATE TABLE t(x)');
    await assert.rejects(db.deserialize(await db.serialize()), {
      code: 'ERR_INVALID_STATE',
      message: /replicates/,
    });
  } finally {
    await db.close();
  }
});

test('a file database without readers takes an image in memory; its file keeps what it had', async () => {
  const file = tmp.file('memory-image.db');
  const db = await Database.open(file, { readers: 0 });
  const source = await Database.open(':memory:');
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    await source.exec('CREATE TABLE t(x)');
    await source.exec('INSERT INTO t VALUES (10), (20), (30)');
    await db.deserialize(await source.serialize());
    const inserts = await Promise.all(Array.from({ length: 50 }, (_, i) => db.prepare('INSERT INTO t VALUES (?)').run(i)));
    assert.ok(inserts.every((r) => r.changes === 1));
    assert.equal((await db.prepare(COUNT).get()).n, 53);
    // As in node:sqlite: main is no longer the file.
    assert.equal(db.location(), null);
    const reopened = await Database.open(file, { readers: 1 });
    assert.equal((await reopened.prepare(COUNT).get()).n, 1);
    await reopened.close();
  } finally {
    await source.close();
    await db.close();
  }
});

test('a statement prepared before deserialize runs against the new image', async () => {
  const db = await Database.open(':memory:');
  const source = await Database.open(':memory:');
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    const count = db.prepare(COUNT);
    assert.equal((await count.get()).n, 1);
    await source.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)');
    await db.deserialize(await source.serialize());
    assert.equal((await count.get()).n, 2);
  } finally {
    await source.close();
    await db.close();
  }
});

test('an image of a WAL file database opens in memory and, written to a file, as a database', async () => {
  const db = await Database.open(tmp.file('wal.db'));
  try {
    await db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('kept')");
    const image = await db.serialize();
    const { writeFileSync } = await import('node:fs');
    const copyFile = tmp.file('from-image.db');
    writeFileSync(copyFile, image);
    const copy = await Database.open(copyFile);
    assert.deepEqual(await copy.prepare('SELECT x FROM t').all(), [{ __proto__: null, x: 'kept' }]);
    assert.equal((await copy.prepare('PRAGMA journal_mode').get()).journal_mode, 'wal');
    await copy.close();
  } finally {
    await db.close();
  }
});
