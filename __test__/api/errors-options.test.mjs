// How failures reach the caller (SQLite errors reject with node:sqlite's
// fields, misuse throws synchronously without reaching a thread) and what
// the open options do on every connection of a database.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, readerExecuted, tempDir, until } from '../engine-helpers.mjs';

const tmp = tempDir('errors');
after(() => tmp.cleanup());

function sqliteError(sqliteCode, errcode) {
  return (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'ERR_SQLITE_ERROR');
    assert.equal(err.sqliteCode, sqliteCode);
    assert.equal(err.errcode, errcode);
    assert.equal(typeof err.errstr, 'string');
    assert.ok(err.errstr.length > 0);
    return true;
  };
}

// ---------------------------------------------------------------------------
// SQLite errors

test('a constraint violation rejects with ERR_SQLITE_ERROR, errcode 2067, errstr and sqliteCode SQLITE_CONSTRAINT_UNIQUE', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE)');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    await ins.run('a');
    await assert.rejects(ins.run('a'), (err) => {
      sqliteError('SQLITE_CONSTRAINT_UNIQUE', 2067)(err);
      assert.equal(err.errstr, 'constraint failed');
      assert.match(err.message, /UNIQUE constraint failed: t\.v/);
      return true;
    });
  } finally {
    await db.close();
  }
});

test('a syntax error rejects on the first call (prepare() itself never touches SQLite), and on every later call', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    const bad = db.prepare('SELEKT 1');
    for (let i = 0; i < 3; i++) {
      await assert.rejects(bad.get(), (err) => {
        sqliteError('SQLITE_ERROR', 1)(err);
        assert.equal(err.errstr, 'SQL logic error');
        assert.match(err.message, /syntax error/);
        return true;
      });
    }
    await assert.rejects(db.exec('CREATE TABLE'), sqliteError('SQLITE_ERROR', 1));
    assert.equal((await db.prepare('SELECT 1 AS ok').get()).ok, 1, 'the writer keeps working');
  } finally {
    await db.close();
  }
});

test('an error raised on a reader rejects the same way, and the reader keeps serving', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    const parse = db.prepare('SELECT json(?) AS j');
    assert.equal((await parse.get('[1]')).j, '[1]');
    const before = db.stats();
    await assert.rejects(parse.get('{oops'), (err) => {
      sqliteError('SQLITE_ERROR', 1)(err);
      assert.match(err.message, /malformed JSON/);
      return true;
    });
    assert.equal((await parse.get('[2]')).j, '[2]');
    const now = db.stats();
    assert.equal(now.readers[0].executed, before.readers[0].executed + 2, 'both calls ran on the reader');
    assert.equal(now.writer.executed, before.writer.executed);
  } finally {
    await db.close();
  }
});

test('in a concurrent batch, each failing call rejects and every other call resolves', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE)');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const sel = db.prepare('SELECT count(*) AS n FROM t WHERE v = ?');
    await ins.run('seed');
    await sel.get('seed');
    // Every 5th insert repeats a value inserted before it.
    const calls = [];
    for (let i = 0; i < 500; i++) {
      calls.push(ins.run(i % 5 === 4 ? `v${i - 1}` : `v${i}`));
      calls.push(sel.get('seed'));
    }
    const settled = await Promise.allSettled(calls);
    settled.forEach((s, k) => {
      const i = k >> 1;
      if (k % 2 === 1) {
        assert.equal(s.status, 'fulfilled');
        assert.equal(s.value.n, 1);
      } else if (i % 5 === 4) {
        assert.equal(s.status, 'rejected', `insert ${i}`);
        assert.equal(s.reason.sqliteCode, 'SQLITE_CONSTRAINT_UNIQUE');
      } else {
        assert.equal(s.status, 'fulfilled', `insert ${i}`);
        assert.equal(s.value.changes, 1);
      }
    });
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, 401);
  } finally {
    await db.close();
  }
});

// ---------------------------------------------------------------------------
// Misuse

test('a parameter that cannot be bound throws ERR_INVALID_ARG_TYPE synchronously and queues nothing', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(x)');
    const ins = db.prepare('INSERT INTO t VALUES (?)');
    const sel = db.prepare('SELECT x FROM t WHERE x = ?');
    await ins.run(1);
    await sel.get(1);
    const before = db.stats();
    for (const bad of [Symbol('s'), undefined]) {
      for (const call of [() => ins.run(bad), () => sel.get(bad), () => sel.all(bad), () => sel.iterate(bad), () => sel.get({}, bad)]) {
        let result;
        assert.throws(
          () => {
            result = call();
          },
          (err) => err instanceof TypeError && err.code === 'ERR_INVALID_ARG_TYPE',
          String(bad?.toString?.() ?? bad),
        );
        assert.equal(result, undefined);
      }
    }
    const now = db.stats();
    assert.equal(now.writer.executed, before.writer.executed, 'nothing reached the writer');
    assert.equal(readerExecuted(now), readerExecuted(before), 'nothing reached a reader');
    assert.equal((await sel.all(1)).length, 1, 'the database is unaffected');
  } finally {
    await db.close();
  }
});

test('bad arguments to prepare(), exec() and open() are refused with Node error codes', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    assert.throws(() => db.prepare(42), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => db.prepare('SELECT 1', 'x'), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => db.exec(null), { code: 'ERR_INVALID_ARG_TYPE' });
  } finally {
    await db.close();
  }
  const file = tmp.file();
  await assert.rejects(Database.open(file, { readers: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  await assert.rejects(Database.open(file, { readers: 1.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(Database.open(file, { timeout: 'soon' }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(Database.open(file, { timeout: 0.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(Database.open(file, { readOnly: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(Database.open(file, null), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(Database.open(42), { code: 'ERR_INVALID_ARG_TYPE' });
});

// ---------------------------------------------------------------------------
// Options

test('readOnly: writes reject with SQLITE_READONLY on every route, reads work on readers', async () => {
  const file = tmp.file();
  const setup = await Database.open(file);
  await setup.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)');
  await setup.close();

  const db = await Database.open(file, { readOnly: true, readers: 2 });
  try {
    const ins = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 2; i++) await assert.rejects(ins.run(3), sqliteError('SQLITE_READONLY', 8));
    await assert.rejects(db.exec('CREATE TABLE u(x)'), sqliteError('SQLITE_READONLY', 8));
    await assert.rejects(db.exec('DELETE FROM t'), sqliteError('SQLITE_READONLY', 8));
    const sel = db.prepare('SELECT sum(x) AS s FROM t');
    await sel.get();
    const before = readerExecuted(db.stats());
    for (let i = 0; i < 5; i++) assert.equal((await sel.get()).s, 3);
    assert.equal(readerExecuted(db.stats()), before + 5);
  } finally {
    await db.close();
  }
});

test('timeout: 0 makes a write against a held lock reject with SQLITE_BUSY at once', async () => {
  const file = tmp.file();
  const holder = await Database.open(file, { readers: 0 });
  await holder.exec('CREATE TABLE t(x)');
  const waiter = await Database.open(file, { readers: 0, timeout: 0 });
  try {
    await holder.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
    // The lock is held until this settles: SQLITE_BUSY cannot depend on timing.
    await assert.rejects(waiter.prepare('INSERT INTO t VALUES (2)').run(), sqliteError('SQLITE_BUSY', 5));
    await holder.exec('COMMIT');
    assert.equal((await waiter.prepare('INSERT INTO t VALUES (2)').run()).changes, 1);
  } finally {
    await waiter.close();
    await holder.close();
  }
});

test('a busy timeout makes a write wait for a held lock and succeed once it is released', async () => {
  const file = tmp.file();
  const holder = await Database.open(file, { readers: 0 });
  await holder.exec('CREATE TABLE t(x)');
  const waiter = await Database.open(file, { readers: 0, timeout: 60_000 });
  try {
    await holder.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
    const base = waiter.stats().writer.executed;
    let settled = false;
    const write = waiter.prepare('INSERT INTO t VALUES (2)').run();
    write.then(
      () => (settled = true),
      () => (settled = true),
    );
    // The writer counts a job when it starts it; from then it is inside
    // SQLite, waiting for the lock.
    await until(() => waiter.stats().writer.executed === base + 1, 'the waiting write started');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(settled, false, 'the write waits while the lock is held');
    await holder.exec('COMMIT');
    assert.equal((await write).changes, 1);
    assert.equal((await holder.prepare('SELECT count(*) AS n FROM t').get()).n, 2);
  } finally {
    await waiter.close();
    await holder.close();
  }
});

test('foreign keys are enforced by default, on the writer and readers alike', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(pid INTEGER REFERENCES p(id))');
    await assert.rejects(
      db.prepare('INSERT INTO c VALUES (?)').run(1),
      sqliteError('SQLITE_CONSTRAINT_FOREIGNKEY', 787),
    );
    const fk = db.prepare('SELECT foreign_keys AS on_ FROM pragma_foreign_keys');
    assert.equal((await fk.get()).on_, 1, 'writer');
    const before = readerExecuted(db.stats());
    for (let i = 0; i < 4; i++) assert.equal((await fk.get()).on_, 1, 'reader');
    assert.equal(readerExecuted(db.stats()), before + 4);
  } finally {
    await db.close();
  }
});

test('enableForeignKeyConstraints: false turns enforcement off on every connection', async () => {
  const db = await Database.open(tmp.file(), { readers: 2, enableForeignKeyConstraints: false });
  try {
    await db.exec('CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(pid INTEGER REFERENCES p(id))');
    assert.equal((await db.prepare('INSERT INTO c VALUES (?)').run(1)).changes, 1);
    const fk = db.prepare('SELECT foreign_keys AS on_ FROM pragma_foreign_keys');
    assert.equal((await fk.get()).on_, 0, 'writer');
    const before = readerExecuted(db.stats());
    for (let i = 0; i < 4; i++) assert.equal((await fk.get()).on_, 0, 'reader');
    assert.equal(readerExecuted(db.stats()), before + 4);
  } finally {
    await db.close();
  }
});

test('reader connections are query_only; the writer is not', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    const q = db.prepare('SELECT query_only AS q FROM pragma_query_only');
    assert.equal((await q.get()).q, 0, 'the writer is writable');
    const before = readerExecuted(db.stats());
    for (let i = 0; i < 4; i++) assert.equal((await q.get()).q, 1, 'readers are query_only');
    assert.equal(readerExecuted(db.stats()), before + 4);
  } finally {
    await db.close();
  }
});
