// Defects an outside test found (issue 13), each pinned by a test that
// failed before its fix: writes and transaction control inside db.read(),
// argument errors of sparse batches, bind errors that depended on history,
// a file that cannot be written opening for writing, close() with open
// transactions, snapshots and iterators, and readers' odd errors.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('defects');
after(() => tmp.cleanup());

// Every configuration a read snapshot runs on: a reader, the writer of a
// file with no readers, and the writer of an in-memory database.
const CONFIGURATIONS = [
  ['a file with readers', () => tmp.file(), { readers: 2 }],
  ['a file with readers: 0', () => tmp.file(), { readers: 0 }],
  ['an in-memory database', () => ':memory:', {}],
];

function isReadOnlyRefusal(err) {
  assert.equal(err.code, 'ERR_SQLITE_ERROR', String(err));
  assert.equal(err.sqliteCode, 'SQLITE_READONLY');
  assert.equal(err.errcode, 8);
  assert.equal(err.errstr, 'attempt to write a readonly database');
  assert.match(err.message, /db\.read\(\)/);
  return true;
}

function isTransactionControlRefusal(err) {
  assert.equal(err.code, 'ERR_INVALID_STATE', String(err));
  assert.match(err.message, /cannot run inside db\.read\(\)/);
  return true;
}

// ---------------------------------------------------------------------------
// 1. Writes through db.read()

for (const [name, location, options] of CONFIGURATIONS) {
  test(`a write through db.read() fails with SQLITE_READONLY on ${name}, and a rejected callback commits nothing`, async () => {
    const db = await Database.open(location(), options);
    try {
      await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
      const writes = [
        'INSERT INTO t VALUES (2)',
        'UPDATE t SET x = 5',
        'DELETE FROM t',
        'REPLACE INTO t VALUES (3)',
        'WITH v(x) AS (VALUES (4)) INSERT INTO t SELECT x FROM v',
        'CREATE TABLE u(y)',
        'CREATE TEMP TABLE u(y)',
        'DROP TABLE t',
        "ATTACH ':memory:' AS other",
        'VACUUM',
      ];
      // Prepared on the database first, so the writer's cache holds them.
      await db.prepare('INSERT INTO t VALUES (2)').run();
      await db.prepare('DELETE FROM t WHERE x = 2').run();
      for (const sql of writes) {
        await assert.rejects(
          db.read((r) => r.prepare(sql).run()),
          isReadOnlyRefusal,
          sql,
        );
      }
      // A callback that swallows the refusal and then rejects.
      await assert.rejects(
        db.read(async (r) => {
          await r.prepare('INSERT INTO t VALUES (9)').run().catch(() => {});
          await r.prepare('SELECT count(*) AS n FROM t').get();
          throw new Error('callback failed');
        }),
        /callback failed/,
      );
      assert.deepEqual(
        (await db.prepare('SELECT x FROM t ORDER BY x').all()).map((row) => row.x),
        [1],
      );
      assert.equal(
        (await db.prepare("SELECT count(*) AS n FROM sqlite_temp_master WHERE name = 'u'").get()).n,
        0,
      );
    } finally {
      await db.close();
    }
  });
}

// ---------------------------------------------------------------------------
// 2. Transaction control through db.read()

for (const [name, location, options] of CONFIGURATIONS) {
  test(`BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT and RELEASE inside db.read() are refused on ${name}`, async () => {
    const db = await Database.open(location(), options);
    try {
      await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
      const statements = ['BEGIN', 'BEGIN IMMEDIATE', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT s', 'RELEASE s', '/* c */ commit'];
      const seen = await db.read(async (r) => {
        const before = (await r.prepare('SELECT count(*) AS n FROM t').get()).n;
        for (const sql of statements) {
          await assert.rejects(r.prepare(sql).run(), isTransactionControlRefusal, sql);
        }
        return [before, (await r.prepare('SELECT count(*) AS n FROM t').get()).n];
      });
      assert.deepEqual(seen, [1, 1]);
    } finally {
      await db.close();
    }
  });
}

test('a refused COMMIT does not end the snapshot: later reads of the callback still see one snapshot', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    const counts = await db.read(async (r) => {
      const count = r.prepare('SELECT count(*) AS n FROM t');
      const first = (await count.get()).n;
      await r.prepare('COMMIT').run().catch(() => {});
      // Committed outside the snapshot, after its first read.
      await db.prepare('INSERT INTO t VALUES (2)').run();
      return [first, (await count.get()).n];
    });
    assert.deepEqual(counts, [1, 1]);
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, 2);
  } finally {
    await db.close();
  }
});

// ---------------------------------------------------------------------------
// 3. Sparse arrays in db.batch()

test('db.batch() with a sparse array throws ERR_INVALID_ARG_TYPE, as [undefined] does', async () => {
  const db = await Database.open(':memory:');
  try {
    const sparse = [new Array(1), [, ['SELECT 1']], [['SELECT 1'], , ['SELECT 2']], [undefined]];
    for (const statements of sparse) {
      assert.throws(() => db.batch(statements), (err) => {
        assert.ok(err instanceof TypeError);
        assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
        assert.match(err.message, /^The "statements\[\d\]\[0\]" argument must be a Statement or a string\.$/);
        return true;
      });
    }
    // A hole among a statement's parameters is an undefined value.
    assert.throws(() => db.batch([['SELECT ?, ?', [1, , 2]]]), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: 'Provided value cannot be bound to SQLite parameter 2.',
    });
  } finally {
    await db.close();
  }
});

// ---------------------------------------------------------------------------
// 4. Bind errors must not depend on whether the SQL ran before

test('an extra value before one that cannot be bound rejects with SQLITE_RANGE, on the first call and after', async () => {
  const db = await Database.open(':memory:');
  try {
    for (const sql of ['SELECT ? AS v', 'SELECT ? AS v /* ? */', "SELECT '?', ? AS v"]) {
      const stmt = db.prepare(sql);
      const outcomes = [];
      for (let round = 0; round < 2; round++) {
        await assert.rejects(stmt.get(1, 2, 2n ** 64n), (err) => {
          outcomes.push([err.code, err.errcode, err.message]);
          return true;
        });
        await stmt.get(1);
      }
      assert.deepEqual(outcomes, [
        ['ERR_SQLITE_ERROR', 25, 'column index out of range'],
        ['ERR_SQLITE_ERROR', 25, 'column index out of range'],
      ], sql);
    }
  } finally {
    await db.close();
  }
});

test('a named value that cannot be bound, under a key naming no parameter, is an unknown parameter on the first call and after', async () => {
  const db = await Database.open(':memory:');
  try {
    const stmt = db.prepare('SELECT ?, ?');
    const outcomes = [];
    for (let round = 0; round < 2; round++) {
      try {
        await stmt.get({ a: 2n ** 64n });
        outcomes.push('resolved');
      } catch (err) {
        outcomes.push([err.code, err.message]);
      }
      await stmt.get(1, 2);
    }
    assert.deepEqual(outcomes, [
      ['ERR_INVALID_STATE', "Unknown named parameter 'a'"],
      ['ERR_INVALID_STATE', "Unknown named parameter 'a'"],
    ]);
  } finally {
    await db.close();
  }
});

// ---------------------------------------------------------------------------
// 5. A file the process may not write

test('a database file the process may not write is refused at open with SQLITE_READONLY, in WAL and rollback modes; readOnly: true opens it', async () => {
  const dir = path.join(tmp.dir, 'unwritable');
  fs.mkdirSync(dir);
  for (const mode of ['wal', 'delete']) {
    const db = await Database.open(path.join(dir, `${mode}.db`), { journalMode: mode });
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    await db.close();
    fs.chmodSync(path.join(dir, `${mode}.db`), 0o444);
  }
  // Root may write any file (CAP_DAC_OVERRIDE): as root, the opening runs
  // in a child without that capability (setpriv, from util-linux), to
  // which the file's mode applies as to anyone.
  const asRoot = process.getuid?.() === 0;
  const dropOverride = ['--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-dac_override,-dac_read_search'];
  const script = path.join(dir, 'open.cjs');
  fs.writeFileSync(
    script,
    `const { Database } = require(${JSON.stringify(path.join(ROOT, 'index.js'))});
    (async () => {
      const out = [];
      for (const mode of ['wal', 'delete']) {
        const file = ${JSON.stringify(dir)} + '/' + mode + '.db';
        try {
          const db = await Database.open(file, { journalMode: mode });
          out.push([mode, 'opened']);
          await db.close();
        } catch (err) {
          out.push([mode, err.code, err.sqliteCode, /readOnly: true/.test(err.message)]);
        }
        const ro = await Database.open(file, { readOnly: true });
        out.push([mode, (await ro.prepare('SELECT x FROM t').get()).x]);
        await ro.close();
      }
      console.log(JSON.stringify(out));
    })();`,
  );
  const [command, args] = asRoot ? ['setpriv', [...dropOverride, process.execPath, script]] : [process.execPath, [script]];
  const child = spawnSync(command, args, { encoding: 'utf8', timeout: 30000 });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), [
    ['wal', 'ERR_SQLITE_ERROR', 'SQLITE_READONLY', true],
    ['wal', 1],
    ['delete', 'ERR_SQLITE_ERROR', 'SQLITE_READONLY', true],
    ['delete', 1],
  ]);
});

// ---------------------------------------------------------------------------
// 6. close() with transactions, snapshots and iterators open

/** A promise and the function that resolves it. */
function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

test('close() waits for an open transaction: its later statements run and it commits; close() resolves after', async () => {
  const file = tmp.file();
  const db = await Database.open(file, { readers: 1 });
  await db.exec('CREATE TABLE t(x)');
  const order = [];
  let closing;
  const committed = db.transaction(async (tx) => {
    await tx.prepare('INSERT INTO t VALUES (1)').run();
    closing = db.close().then(() => order.push('closed'));
    await tx.prepare('INSERT INTO t VALUES (2)').run();
    await tx.batch([['INSERT INTO t VALUES (?)', [3]]]);
    await tx.transaction((inner) => inner.exec('INSERT INTO t VALUES (4)'));
    const rows = [];
    for await (const row of tx.prepare('SELECT x FROM t ORDER BY x').iterate()) rows.push(row.x);
    return rows;
  });
  assert.deepEqual(await committed.then((rows) => (order.push('committed'), rows)), [1, 2, 3, 4]);
  await closing;
  assert.deepEqual(order, ['committed', 'closed']);
  await assert.rejects(db.transaction(async () => {}), { code: 'ERR_INVALID_STATE' });
  const again = await Database.open(file);
  assert.equal((await again.prepare('SELECT count(*) AS n FROM t').get()).n, 4);
  await again.close();
});

test('close() rolls back a transaction still open after closeTimeout; its later calls reject with ERR_INVALID_STATE and db.transaction() rejects', async () => {
  const file = tmp.file();
  const db = await Database.open(file, { readers: 1, closeTimeout: 20 });
  await db.exec('CREATE TABLE t(x)');
  const release = gate();
  const later = [];
  const outcome = db.transaction(async (tx) => {
    await tx.prepare('INSERT INTO t VALUES (1)').run();
    await release.promise;
    later.push(await tx.prepare('INSERT INTO t VALUES (2)').run().catch((err) => err));
    later.push(await tx.exec('INSERT INTO t VALUES (3)').catch((err) => err));
    return 'done';
  });
  // The transaction waits on the gate, which opens only once close() resolved.
  await db.close();
  release.open();
  await assert.rejects(outcome, (err) => {
    assert.equal(err.code, 'ERR_INVALID_STATE');
    assert.match(err.message, /closed before the transaction ended .*rolled back/);
    return true;
  });
  assert.equal(later.length, 2);
  for (const err of later) assert.equal(err.code, 'ERR_INVALID_STATE', String(err));
  const again = await Database.open(file);
  assert.equal((await again.prepare('SELECT count(*) AS n FROM t').get()).n, 0);
  await again.close();
});

test('close() waits for an open read snapshot, and ends one still open after closeTimeout; its later reads reject', async () => {
  const db = await Database.open(tmp.file(), { readers: 1, closeTimeout: 20 });
  await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
  let closing;
  const finished = await db.read(async (r) => {
    await r.prepare('SELECT x FROM t').get();
    closing = db.close();
    return (await r.prepare('SELECT count(*) AS n FROM t').get()).n;
  });
  assert.equal(finished, 1);
  await closing;

  const db2 = await Database.open(tmp.file(), { readers: 1, closeTimeout: 20 });
  await db2.exec('CREATE TABLE t(x)');
  const release = gate();
  const read = db2.read(async (r) => {
    await r.prepare('SELECT count(*) AS n FROM t').get();
    await release.promise;
    return r.prepare('SELECT count(*) AS n FROM t').get();
  });
  await db2.close();
  release.open();
  await assert.rejects(read, (err) => {
    assert.equal(err.code, 'ERR_INVALID_STATE');
    assert.match(err.message, /closed before the read snapshot ended/);
    return true;
  });
});

test('closeTimeout must be an integer from 0 up', () => {
  assert.throws(() => new Database(':memory:', { closeTimeout: '1' }), {
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'The "options.closeTimeout" argument must be an integer.',
  });
  assert.throws(() => new Database(':memory:', { closeTimeout: -1 }), { code: 'ERR_OUT_OF_RANGE' });
});

test('after close(), an iterator outside a transaction rejects next() with "statement has been finalized", rows already fetched included', async () => {
  for (const options of [{ readers: 1 }, { readers: 0 }]) {
    const db = await Database.open(tmp.file(), options);
    const it = db.prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT x FROM c').iterate();
    assert.equal((await it.next()).value.x, 1);
    const closing = db.close();
    await assert.rejects(it.next(), { code: 'ERR_INVALID_STATE', message: 'statement has been finalized' });
    assert.deepEqual(await it.next(), { __proto__: null, done: true, value: null });
    await closing;
  }
});

// ---------------------------------------------------------------------------
// 7. Readers' odd errors

test('a checkpoint or a journal-mode change on a reader is refused at once with SQLITE_READONLY', { timeout: 30000 }, async () => {
  // A busy timeout far longer than the test's own: waiting it out fails.
  const db = await Database.open(tmp.file(), { readers: 1, timeout: 600000 });
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    for (const sql of ['PRAGMA wal_checkpoint', 'PRAGMA wal_checkpoint(TRUNCATE)', 'PRAGMA journal_mode=DELETE', 'PRAGMA journal_mode = truncate']) {
      await assert.rejects(db.read((r) => r.prepare(sql).get()), isReadOnlyRefusal, sql);
      assert.equal(db.stats().readers[0].queued, 0);
    }
    // The reader is fine afterwards, and the database still in WAL mode.
    assert.equal((await db.read((r) => r.prepare('SELECT x FROM t').get())).x, 1);
    assert.equal((await db.settings()).writer.journalMode, 'wal');
  } finally {
    await db.close();
  }
});
