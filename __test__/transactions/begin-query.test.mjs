// What the ORM adapters need from the core API: the explicit transaction
// handle (`db.begin()`) and `stmt.query()`, each tested on its own.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('begin-query');
after(() => tmp.cleanup());

async function itemsDb(options = {}) {
  const db = await Database.open(tmp.file(), options);
  await db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER)');
  return db;
}

async function names(db) {
  return (await db.prepare('SELECT name FROM items ORDER BY id').all()).map((r) => r.name);
}

test('query() on a SELECT returns column metadata and rows, and no changes', async () => {
  const db = await itemsDb();
  try {
    await db.prepare('INSERT INTO items(name, qty) VALUES (?, ?)').run('a', 1);
    const result = await db.prepare('SELECT id, name, qty * 2 AS double FROM items').query();
    assert.deepEqual(
      result.columns.map((c) => ({ ...c })),
      [
        { column: 'id', database: 'main', name: 'id', table: 'items', type: 'INTEGER' },
        { column: 'name', database: 'main', name: 'name', table: 'items', type: 'TEXT' },
        { column: null, database: null, name: 'double', table: null, type: null },
      ],
    );
    assert.deepEqual(result.rows, [{ __proto__: null, id: 1, name: 'a', double: 2 }]);
    assert.equal(result.changes, 0);
    assert.equal(result.lastInsertRowid, 0);
  } finally {
    await db.close();
  }
});

test('query() on an INSERT … RETURNING returns the rows and what it changed', async () => {
  const db = await itemsDb();
  try {
    await db.prepare('INSERT INTO items(name) VALUES (?)').run('first');
    const result = await db.prepare('INSERT INTO items(name, qty) VALUES (?, ?), (?, ?) RETURNING id, name').query('b', 2, 'c', 3);
    assert.deepEqual(result.rows, [
      { __proto__: null, id: 2, name: 'b' },
      { __proto__: null, id: 3, name: 'c' },
    ]);
    assert.deepEqual(
      result.columns.map((c) => c.name),
      ['id', 'name'],
    );
    assert.equal(result.changes, 2);
    assert.equal(result.lastInsertRowid, 3);
  } finally {
    await db.close();
  }
});

test('query() on a write without RETURNING has no columns and reports its changes', async () => {
  const db = await itemsDb();
  try {
    await db.exec("INSERT INTO items(name, qty) VALUES ('a', 1), ('b', 1), ('c', 5)");
    const result = await db.prepare('UPDATE items SET qty = qty + 1 WHERE qty = ?').query(1);
    assert.deepEqual(result, { columns: [], rows: [], changes: 2, lastInsertRowid: 3 });
  } finally {
    await db.close();
  }
});

test('query() reports 0 changes for a statement that changed nothing, where run() repeats the last write', async () => {
  const db = await itemsDb();
  try {
    await db.prepare('INSERT INTO items(name) VALUES (?)').run('a');
    const ddl = 'CREATE TABLE IF NOT EXISTS other(x)';
    assert.deepEqual(await db.prepare(ddl).run(), { changes: 1, lastInsertRowid: 1 });
    const result = await db.prepare(ddl).query();
    assert.equal(result.changes, 0);
    assert.equal(result.lastInsertRowid, 0);
    const ignored = await db.prepare('INSERT OR IGNORE INTO items(name) VALUES (?)').query('a');
    assert.equal(ignored.changes, 0);
    assert.equal(ignored.lastInsertRowid, 0);
  } finally {
    await db.close();
  }
});

test('query() follows the statement options: returnArrays and readBigInts', async () => {
  const db = await itemsDb();
  try {
    const result = await db
      .prepare('INSERT INTO items(name, qty) VALUES (?, ?) RETURNING id, qty', { returnArrays: true, readBigInts: true })
      .query('a', 9007199254740993n);
    assert.deepEqual(result.rows, [[1n, 9007199254740993n]]);
    assert.equal(result.changes, 1n);
    assert.equal(result.lastInsertRowid, 1n);
    await assert.rejects(db.prepare('SELECT qty FROM items').query(), { code: 'ERR_OUT_OF_RANGE' });
  } finally {
    await db.close();
  }
});

test('query() of a read-only statement runs on a reader', async () => {
  const db = await itemsDb();
  try {
    await db.prepare('INSERT INTO items(name) VALUES (?)').run('a');
    const read = db.prepare('SELECT count(*) AS n FROM items');
    await read.query(); // the writer prepares a new text first and learns its route
    const before = readerExecuted(db.stats());
    const results = await Promise.all(Array.from({ length: 20 }, () => read.query()));
    for (const r of results) assert.deepEqual(r.rows, [{ __proto__: null, n: 1 }]);
    assert.equal(readerExecuted(db.stats()) - before, 20);
  } finally {
    await db.close();
  }
});

test('query() rejects with the SQLite error, sqliteCode included', async () => {
  const db = await itemsDb();
  try {
    await db.prepare('INSERT INTO items(name) VALUES (?)').run('a');
    await assert.rejects(db.prepare('INSERT INTO items(name) VALUES (?) RETURNING id').query('a'), {
      code: 'ERR_SQLITE_ERROR',
      sqliteCode: 'SQLITE_CONSTRAINT_UNIQUE',
      errcode: 2067,
    });
  } finally {
    await db.close();
  }
});

test('begin() resolves to a handle whose writes only others see once it commits', async () => {
  const db = await itemsDb();
  try {
    // A new SQL text runs on the writer first, which learns its route; after
    // that it goes to the readers, which do not wait for the transaction.
    assert.deepEqual(await names(db), []);
    const tx = await db.begin();
    assert.equal(db.isTransaction, true);
    const inserted = await tx.prepare('INSERT INTO items(name) VALUES (?) RETURNING id').query('a');
    assert.equal(inserted.changes, 1);
    assert.deepEqual(await tx.prepare('SELECT name FROM items').all(), [{ __proto__: null, name: 'a' }]);
    assert.deepEqual(await names(db), [], 'a reader does not see the open transaction');
    await tx.commit();
    assert.equal(db.isTransaction, false);
    assert.deepEqual(await names(db), ['a']);
  } finally {
    await db.close();
  }
});

test('rollback() undoes every statement of the handle', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin({ mode: 'deferred' });
    await tx.exec("INSERT INTO items(name) VALUES ('a'); INSERT INTO items(name) VALUES ('b')");
    await tx.rollback();
    assert.equal(db.isTransaction, false);
    assert.deepEqual(await names(db), []);
  } finally {
    await db.close();
  }
});

test('a write issued outside an open handle waits until it commits', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin();
    const outside = db.prepare('INSERT INTO items(name) VALUES (?) RETURNING id').get('outside');
    await tx.prepare('INSERT INTO items(name) VALUES (?)').run('inside');
    await tx.commit();
    assert.deepEqual(await outside, { __proto__: null, id: 2 });
    assert.deepEqual(await names(db), ['inside', 'outside']);
  } finally {
    await db.close();
  }
});

test('a savepoint rolled back to leaves its parent to commit', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin();
    const insert = tx.prepare('INSERT INTO items(name) VALUES (?)');
    await insert.run('kept');
    await tx.savepoint('inner');
    await insert.run('undone');
    await tx.savepoint('innermost');
    await insert.run('undone too');
    await tx.rollbackTo('inner');
    await tx.release('inner');
    await insert.run('after');
    await tx.commit();
    assert.deepEqual(await names(db), ['kept', 'after']);
  } finally {
    await db.close();
  }
});

test('savepoint names are quoted identifiers; an empty or non-string name throws', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin();
    await tx.savepoint('a "quoted" name; DROP TABLE items');
    await tx.prepare('INSERT INTO items(name) VALUES (?)').run('x');
    await tx.release('a "quoted" name; DROP TABLE items');
    assert.throws(() => tx.savepoint(''), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => tx.rollbackTo(1), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(tx.release('never made'), { sqliteCode: 'SQLITE_ERROR', message: /no such savepoint/ });
    await tx.commit();
    assert.deepEqual(await names(db), ['x']);
  } finally {
    await db.close();
  }
});

test('after commit: calls reject, commit() rejects, rollback() resolves doing nothing', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin();
    const stmt = tx.prepare('INSERT INTO items(name) VALUES (?)');
    await stmt.run('a');
    await tx.commit();
    await assert.rejects(stmt.run('b'), { code: 'ERR_INVALID_STATE', message: 'the transaction has ended' });
    await assert.rejects(tx.exec('SELECT 1'), { code: 'ERR_INVALID_STATE' });
    await assert.rejects(tx.commit(), { code: 'ERR_INVALID_STATE', message: 'the transaction has ended' });
    await tx.rollback();
    assert.deepEqual(await names(db), ['a']);
  } finally {
    await db.close();
  }
});

test('a failing BEGIN rejects begin() with the SQLite error', async () => {
  const file = tmp.file();
  const holder = await Database.open(file);
  const other = await Database.open(file, { timeout: 0 });
  try {
    const tx = await holder.begin();
    await assert.rejects(other.begin(), { code: 'ERR_SQLITE_ERROR', sqliteCode: 'SQLITE_BUSY' });
    assert.equal(other.isTransaction, false);
    await tx.rollback();
    const retried = await other.begin();
    await retried.commit();
  } finally {
    await other.close();
    await holder.close();
  }
});

test('an idle handle is rolled back after transactionIdleTimeout and the writer moves on', async () => {
  const db = await itemsDb({ transactionIdleTimeout: 50 });
  try {
    const tx = await db.begin();
    await tx.prepare('INSERT INTO items(name) VALUES (?)').run('abandoned');
    // Waits behind the transaction until the idle timeout ends it.
    await db.prepare('INSERT INTO items(name) VALUES (?)').run('later');
    await assert.rejects(tx.commit(), { code: 'ERR_INVALID_STATE', message: /transactionIdleTimeout/ });
    await tx.rollback();
    assert.deepEqual(await names(db), ['later']);
  } finally {
    await db.close();
  }
});

test('Symbol.asyncDispose rolls back a handle that was not committed', async () => {
  const db = await itemsDb();
  try {
    const tx = await db.begin();
    await tx.prepare('INSERT INTO items(name) VALUES (?)').run('a');
    await tx[Symbol.asyncDispose]();
    assert.deepEqual(await names(db), []);
  } finally {
    await db.close();
  }
});

test('begin() refuses an unknown mode and a closed database', async () => {
  const db = await itemsDb();
  await assert.rejects(db.begin({ mode: 'later' }), { code: 'ERR_INVALID_ARG_VALUE' });
  await assert.rejects(db.begin(5), { code: 'ERR_INVALID_ARG_TYPE' });
  await db.close();
  await assert.rejects(db.begin(), { code: 'ERR_INVALID_STATE' });
});

test('transaction() hands its callback the same handle: ending it there is respected', async () => {
  const db = await itemsDb();
  try {
    const result = await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO items(name) VALUES (?)').run('a');
      await tx.commit();
      return 'committed early';
    });
    assert.equal(result, 'committed early');
    await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO items(name) VALUES (?)').run('b');
      await tx.rollback();
    });
    assert.deepEqual(await names(db), ['a']);
  } finally {
    await db.close();
  }
});

test('32 handles begun at once each commit their own writes, one after another', async () => {
  const db = await itemsDb();
  try {
    await db.exec('CREATE TABLE counter(n INTEGER); INSERT INTO counter VALUES (0)');
    const results = await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const tx = await db.begin();
        const { n } = await tx.prepare('SELECT n FROM counter').get();
        await tx.prepare('UPDATE counter SET n = ?').run(n + 1);
        await tx.prepare('INSERT INTO items(name, qty) VALUES (?, ?)').run(`t${i}`, n);
        await tx.commit();
        return n;
      }),
    );
    // Each saw the one before it: no two transactions interleaved.
    assert.deepEqual([...results].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    assert.equal((await db.prepare('SELECT n FROM counter').get()).n, 32);
    const rows = await db.prepare('SELECT name, qty FROM items').all();
    assert.equal(rows.length, 32);
    for (const row of rows) assert.equal(results[Number(row.name.slice(1))], row.qty);
  } finally {
    await db.close();
  }
});
