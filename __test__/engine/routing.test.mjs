// Which thread runs what: read-only statements on the reader pool, writes
// and everything else on the writer, proven with db.stats().

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('routing');
after(() => tmp.cleanup());

async function withTable(options) {
  const db = await Database.open(tmp.file(), options);
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  return db;
}

test('a new SQL text first runs on the writer, then read-only calls run on readers', async () => {
  const db = await withTable({ readers: 2 });
  try {
    await db.prepare('INSERT INTO t(v) VALUES (?)').run('a');
    const sel = db.prepare('SELECT v FROM t WHERE id = ?');
    const before = db.stats();
    assert.deepEqual({ ...(await sel.get(1)) }, { v: 'a' });
    const learned = db.stats();
    assert.equal(learned.writer.executed, before.writer.executed + 1, 'first call runs on the writer');
    assert.equal(readerExecuted(learned), readerExecuted(before));

    for (let i = 0; i < 50; i++) assert.equal((await sel.get(1)).v, 'a');
    const after50 = db.stats();
    assert.equal(after50.writer.executed, learned.writer.executed, 'no read went to the writer');
    assert.equal(readerExecuted(after50), readerExecuted(learned) + 50);
    assert.equal(after50.readers.length, 2);
    assert.equal(after50.readerQueue, 0);
  } finally {
    await db.close();
  }
});

test('the learned route belongs to the SQL text, not the Statement object', async () => {
  const db = await withTable({ readers: 2 });
  try {
    const text = 'SELECT count(*) AS n FROM t';
    await db.prepare(text).get();
    const before = db.stats();
    for (let i = 0; i < 20; i++) assert.equal((await db.prepare(text).get()).n, 0);
    const now = db.stats();
    assert.equal(now.writer.executed, before.writer.executed);
    assert.equal(readerExecuted(now), readerExecuted(before) + 20);
  } finally {
    await db.close();
  }
});

test('get, all, iterate and columns of a read-only statement all run on readers', async () => {
  const db = await withTable({ readers: 2 });
  try {
    await db.prepare('INSERT INTO t(v) VALUES (?), (?)').run('a', 'b');
    const sel = db.prepare('SELECT id, v FROM t ORDER BY id');
    await sel.all();
    const before = db.stats();
    assert.equal((await sel.get()).v, 'a');
    assert.deepEqual((await sel.all()).map((r) => r.v), ['a', 'b']);
    const seen = [];
    for await (const row of sel.iterate()) seen.push(row.v);
    assert.deepEqual(seen, ['a', 'b']);
    assert.deepEqual((await sel.columns()).map((c) => c.name), ['id', 'v']);
    const now = db.stats();
    assert.equal(now.writer.executed, before.writer.executed);
    assert.equal(readerExecuted(now), readerExecuted(before) + 4);
  } finally {
    await db.close();
  }
});

test('writes, exec, pragmas and transaction control always run on the writer', async () => {
  const db = await withTable({ readers: 2 });
  try {
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const upd = db.prepare('UPDATE t SET v = ? WHERE id = ?');
    const returning = db.prepare('INSERT INTO t(v) VALUES (?) RETURNING id');
    const pragma = db.prepare('PRAGMA user_version');
    await ins.run('warm');
    await upd.run('warm', 1);
    await returning.get('warm');
    await pragma.get();
    const before = db.stats();
    for (let i = 0; i < 10; i++) {
      await ins.run(`v${i}`);
      await upd.run(`u${i}`, 1);
      await returning.get(`r${i}`);
      assert.equal((await pragma.get()).user_version, 0);
      await db.exec('BEGIN; COMMIT');
    }
    const now = db.stats();
    assert.equal(readerExecuted(now), readerExecuted(before), 'no writer job reached a reader');
    assert.equal(now.writer.executed, before.writer.executed + 50);
  } finally {
    await db.close();
  }
});

test('reads waiting for a busy reader pool are counted in readerQueue', async () => {
  // One reader, held by a long query: the short reads issued after it wait
  // in the shared queue, where stats() sees them.
  const db = await withTable({ readers: 1 });
  try {
    const long = db.prepare(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c',
    );
    const short = db.prepare('SELECT 1 AS one');
    await long.get(1);
    await short.get();
    const base = db.stats().readers[0].executed;
    let longDone = false;
    const longRun = long.get(3_000_000).then((r) => {
      longDone = true;
      return r;
    });
    // The reader counts a job when it starts it: once it shows one more
    // job, it is on the long query (millions of rows). Reads issued in the
    // same burst as the long one would share its read transaction (taken
    // with it); these are issued after it started, and wait behind it.
    while (db.stats().readers[0].executed === base) {
      await new Promise((r) => setImmediate(r));
    }
    const shorts = Array.from({ length: 5 }, () => short.get());
    await new Promise((r) => setImmediate(r));
    const during = db.stats();
    assert.equal(longDone, false);
    assert.equal(during.readers[0].executed, base + 1);
    assert.equal(during.readerQueue, 5, 'the short reads wait in the shared queue');
    assert.equal((await longRun).n, 3_000_000);
    for (const r of await Promise.all(shorts)) assert.equal(r.one, 1);
    const done = db.stats();
    assert.equal(done.readerQueue, 0);
    assert.equal(done.readers[0].executed, base + 6);
  } finally {
    await db.close();
  }
});

test('readers: 0 runs every statement on the writer', async () => {
  const db = await withTable({ readers: 0 });
  try {
    const sel = db.prepare('SELECT count(*) AS n FROM t');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const before = db.stats();
    for (let i = 0; i < 20; i++) {
      await ins.run('x');
      assert.equal((await sel.get()).n, i + 1);
    }
    const now = db.stats();
    assert.deepEqual(now.readers, []);
    assert.equal(now.readerQueue, 0);
    assert.equal(now.writer.executed, before.writer.executed + 40);
  } finally {
    await db.close();
  }
});

for (const location of [':memory:', 'file::memory:', '']) {
  test(`an in-memory or temporary database (${JSON.stringify(location)}) runs everything on the writer, even with readers: 4`, async () => {
    const db = await Database.open(location, { readers: 4 });
    try {
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
      const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
      const sel = db.prepare('SELECT v FROM t ORDER BY id');
      for (let i = 0; i < 10; i++) {
        await ins.run(`v${i}`);
        // A reader connection would see its own empty database.
        assert.equal((await sel.all()).length, i + 1);
      }
      const now = db.stats();
      assert.deepEqual(now.readers, []);
      assert.equal(now.readerQueue, 0);
      assert.equal(now.writer.executed, 21);
    } finally {
      await db.close();
    }
  });
}

test('while the writer is inside a transaction (exec BEGIN), reads run on the writer and see its uncommitted writes', async () => {
  const db = await withTable({ readers: 2 });
  try {
    const count = db.prepare('SELECT count(*) AS n FROM t');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    await count.get();
    await ins.run('before');
    const base = db.stats();
    await db.exec('BEGIN');
    await ins.run('inside');
    assert.equal((await count.get()).n, 2, 'the transaction sees its own insert');
    const inside = db.stats();
    assert.equal(readerExecuted(inside), readerExecuted(base), 'no read went to a reader during the transaction');
    await db.exec('ROLLBACK');
    assert.equal((await count.get()).n, 1);
    assert.equal(readerExecuted(db.stats()), readerExecuted(base) + 1, 'after it ends, reads go back to readers');

    // Savepoints open a transaction too, and a failed statement inside one
    // leaves it open.
    await db.exec('SAVEPOINT s');
    await ins.run('sp');
    await assert.rejects(db.exec('INSERT INTO nope VALUES (1)'), { code: 'ERR_SQLITE_ERROR' });
    assert.equal((await count.get()).n, 2);
    await db.exec('RELEASE s');
    const other = await Database.open(db.location(), { readers: 1 });
    try {
      assert.equal((await other.prepare('SELECT count(*) AS n FROM t').get()).n, 2, 'committed by RELEASE');
    } finally {
      await other.close();
    }
  } finally {
    await db.close();
  }
});

// Connection state the readers do not share: temp tables, attached
// databases, last_insert_rowid() and changes() exist on the writer's
// connection only. A SELECT of them is read-only, so once learnt it goes to
// a reader, which cannot see them.

test('a query of a TEMP table keeps working after its route is learnt', async () => {
  const db = await withTable({ readers: 2 });
  try {
    await db.exec('CREATE TEMP TABLE tt(x); INSERT INTO tt VALUES (1)');
    const sel = db.prepare('SELECT x FROM tt');
    for (let i = 0; i < 3; i++) assert.deepEqual((await sel.all()).map((r) => r.x), [1]);
  } finally {
    await db.close();
  }
});

test('SELECT last_insert_rowid(), changes() report the writer connection on every call', async () => {
  const db = await withTable({ readers: 2 });
  try {
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const last = db.prepare('SELECT last_insert_rowid() AS id, changes() AS c');
    for (let i = 1; i <= 3; i++) {
      await ins.run('x');
      assert.deepEqual({ ...(await last.get()) }, { id: i, c: 1 });
    }
  } finally {
    await db.close();
  }
});
