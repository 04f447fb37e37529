// offloop/sqlite3's own behaviour, beyond what the differential test
// compares with sqlite3: where the work runs (readers, writer, never the
// libuv pool), offloop's options in sqlite3's signature, and the places
// where it deliberately differs (docs/sqlite3.md).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';

import sqlite3, { Database } from 'offloop/sqlite3';

import { COUNT_TO, ROOT, readerExecuted, tempDir } from '../engine-helpers.mjs';
import { close, step } from './sqlite3-steps.mjs';

const require = createRequire(import.meta.url);
const tmp = tempDir('sqlite3');
after(() => tmp.cleanup());

test('reads run on the reader threads and writes on the writer', async () => {
  const db = new Database(tmp.file());
  try {
    await step((cb) => db.run('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)', cb));
    await step((cb) => db.run('INSERT INTO t(v) VALUES (?)', 'a', cb));
    await step((cb) => db.get('SELECT v FROM t WHERE id = ?', 1, cb)); // classified on the writer once
    const before = db.stats();
    const rows = await Promise.all(Array.from({ length: 50 }, () => step((cb) => db.get('SELECT v FROM t WHERE id = ?', 1, cb))));
    rows.forEach(({ args }) => assert.deepEqual(args, [null, { v: 'a' }]));
    const after = db.stats();
    assert.equal(readerExecuted(after) - readerExecuted(before), 50);
    assert.equal(after.writer.executed, before.writer.executed);
    await step((cb) => db.run('INSERT INTO t(v) VALUES (?)', 'b', cb));
    assert.equal(db.stats().writer.executed, after.writer.executed + 1);
    assert.equal(readerExecuted(db.stats()), readerExecuted(after));
  } finally {
    await close(db);
  }
});

test(':memory: has no reader threads; each :memory: database is its own', async () => {
  const a = new Database(':memory:');
  const b = new Database(':memory:');
  try {
    await step((cb) => a.run('CREATE TABLE only_in_a(x)', cb));
    assert.deepEqual((await step((cb) => b.all("SELECT name FROM sqlite_master WHERE name = 'only_in_a'", cb))).args, [null, []]);
    assert.equal(a.stats().readers.length, 0);
  } finally {
    await close(a);
    await close(b);
  }
});

test("offloop's options go in place of the mode or after it, and the callback still comes last", async () => {
  const opened = [];
  const a = await new Promise((resolve) => {
    const db = new Database(tmp.file(), { readers: 2 }, (err) => {
      opened.push(err);
      resolve(db);
    });
  });
  const b = await new Promise((resolve) => {
    const db = new Database(tmp.file(), sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, { readers: 1 }, (err) => {
      opened.push(err);
      resolve(db);
    });
  });
  try {
    assert.deepEqual(opened, [null, null]);
    assert.equal(a.stats().readers.length, 2);
    assert.equal(b.stats().readers.length, 1);
    assert.equal(b.mode, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    assert.equal(a.offloop.isOpen, true);
  } finally {
    await close(a);
    await close(b);
  }
});

test('an option offloop refuses fails the open through the callback', async () => {
  const { self, args } = await step((cb) => new Database(tmp.file(), { readers: -1 }, cb));
  assert.equal(args[0].code, 'SQLITE_ERROR');
  assert.match(args[0].message, /^SQLITE_ERROR: .*readers/);
  assert.equal(self.open, false);
});

test('withOptions() gives a module whose databases open with those options, under what each open adds', async () => {
  const module = sqlite3.withOptions({ readers: 3, timeout: 2000 });
  assert.equal(module.OPEN_READWRITE, sqlite3.OPEN_READWRITE);
  const a = await new Promise((resolve) => {
    const db = new module.Database(tmp.file(), () => resolve(db));
  });
  const b = await new Promise((resolve) => {
    const db = new module.Database(tmp.file(), sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, { readers: 1 }, () => resolve(db));
  });
  try {
    assert.ok(a instanceof Database);
    assert.equal(a.stats().readers.length, 3);
    assert.equal(b.stats().readers.length, 1);
    const settings = await b.offloop.settings();
    assert.equal(settings.writer.busyTimeout, 2000);
  } finally {
    await close(a);
    await close(b);
  }
});

test('queries in flight never hold up the libuv thread pool', () => {
  // One pool thread: with sqlite3, a slow query on it keeps fs.readFile
  // waiting until the query ends. Here the file is read first.
  const script = `
    const fs = require('node:fs');
    const sqlite3 = require(${JSON.stringify(`${ROOT}/adapters/sqlite3/index.js`)});
    const db = new sqlite3.Database(':memory:');
    const order = [];
    db.get(${JSON.stringify(COUNT_TO)}, 3000000, (err, row) => {
      order.push(err ? err.message : 'query');
      db.close(() => console.log(JSON.stringify(order)));
    });
    setTimeout(() => fs.readFile(__filename, () => order.push('readFile')), 20);
  `;
  const child = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), ['readFile', 'query']);
});

test("'change' events come before the callback of the call that made them, and stop with the last listener", async () => {
  const db = new Database(':memory:');
  try {
    const seen = [];
    const listener = (...args) => seen.push(args);
    db.on('change', listener);
    await new Promise((resolve, reject) => db.run('CREATE TABLE t(v)', (err) => (err ? reject(err) : resolve())));
    const inserts = Array.from({ length: 50 }, (_, i) =>
      new Promise((resolve, reject) =>
        db.run('INSERT INTO t VALUES (?)', i, function (err) {
          if (err) reject(err);
          // This call's own change has been heard by now.
          else resolve(seen.some(([op, , , rowid]) => op === 'insert' && rowid === this.lastID));
        }),
      ),
    );
    assert.deepEqual(await Promise.all(inserts), Array(50).fill(true));
    assert.deepEqual(
      seen.map(([op, database, table, rowid]) => [op, database, table, rowid]).sort((a, b) => a[3] - b[3]),
      Array.from({ length: 50 }, (_, i) => ['insert', 'main', 't', i + 1]),
    );
    db.removeListener('change', listener);
    db.on('change', () => assert.fail('no listener was left; this one came later'));
    db.removeAllListeners('change');
    await new Promise((resolve, reject) => db.run('DELETE FROM t', (err) => (err ? reject(err) : resolve())));
    assert.equal(seen.length, 50);
  } finally {
    await close(db);
  }
});

test('the Statement constructor refuses bad arguments with TypeErrors (sqlite3 crashes)', async () => {
  const db = new Database(':memory:');
  try {
    assert.throws(() => new sqlite3.Statement(), { name: 'TypeError', message: 'Database object expected' });
    assert.throws(() => new sqlite3.Statement(db), { name: 'TypeError', message: 'SQL query expected' });
    assert.throws(() => new sqlite3.Statement(db, 'SELECT 1', 5), { name: 'TypeError', message: 'Callback expected' });
  } finally {
    await close(db);
  }
});

test('a backup of an in-memory database, either way, fails to initialise: no other connection reaches it', async () => {
  const db = new Database(':memory:');
  try {
    for (const filenameIsDest of [true, false]) {
      const errors = [];
      const { self, args } = await step((cb) => db.backup(tmp.file(), 'main', 'main', filenameIsDest, cb));
      self.on('error', (err) => errors.push(err));
      assert.equal(args[0].code, 'SQLITE_ERROR');
      assert.match(args[0].message, /in-memory/);
      assert.equal(self.failed, true);
      assert.deepEqual(errors, []);
    }
    // Nothing is left unfinished: the database closes.
    assert.deepEqual((await close(db)).args, [null]);
  } finally {
    if (db.open) await close(db);
  }
});

test("a write through the database between two backup steps restarts the copy (the backup's connection is its own), and the copy holds it", async () => {
  const db = new Database(tmp.file());
  const target = tmp.file();
  try {
    const fill = "CREATE TABLE b(v); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120) INSERT INTO b SELECT printf('%.1000c', 'x') FROM n";
    await step((cb) => db.exec(fill, cb));
    const backup = db.backup(target);
    await step((cb) => backup.step(10, cb));
    await step((cb) => backup.step(10, cb));
    assert.equal(backup.remaining, backup.pageCount - 20);
    await step((cb) => db.run("INSERT INTO b VALUES ('between steps')", cb));
    assert.deepEqual((await step((cb) => backup.step(10, cb))).args, [null, false]);
    assert.equal(backup.remaining, backup.pageCount - 10, 'restarted');
    assert.deepEqual((await step((cb) => backup.step(-1, cb))).args, [null, true]);
    await step((cb) => backup.finish(cb));
    const copy = new Database(target);
    const { args } = await step((cb) => copy.get("SELECT count(*) AS n, sum(v = 'between steps') AS written FROM b", cb));
    assert.deepEqual(args, [null, { n: 121, written: 1 }]);
    await close(copy);
  } finally {
    await close(db);
  }
});

test('backup steps run off the JavaScript thread: a step of every page leaves the event loop free', async () => {
  const db = new Database(tmp.file());
  try {
    await step((cb) => db.exec("CREATE TABLE b(v); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO b SELECT printf('%.1000c', 'x') FROM n", cb));
    const backup = db.backup(tmp.file());
    let turns = 0;
    let stepping = true;
    const spin = () => {
      turns++;
      if (stepping) setImmediate(spin);
    };
    const stepped = step((cb) => backup.step(-1, cb));
    setImmediate(spin);
    const { args } = await stepped;
    stepping = false;
    assert.deepEqual(args, [null, true]);
    assert.ok(backup.pageCount > 500);
    // The step ran elsewhere: the loop kept turning while it ran.
    assert.ok(turns > 0);
    await step((cb) => backup.finish(cb));
  } finally {
    await close(db);
  }
});

test("OPEN_SHAREDCACHE on a file is ignored: a read beside another database's open write transaction sees the committed rows, where sqlite3's shared cache fails it with SQLITE_LOCKED", async () => {
  const file = tmp.file();
  const mode = sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE | sqlite3.OPEN_SHAREDCACHE;
  // One open after the other: two first opens of a new file at once race
  // to put it in WAL mode, which is not what this test is about.
  let a;
  let b;
  assert.deepEqual((await step((cb) => (a = new Database(file, mode, cb)))).args, [null]);
  assert.deepEqual((await step((cb) => (b = new Database(file, mode, cb)))).args, [null]);
  try {
    await step((cb) => a.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1); BEGIN; INSERT INTO t VALUES (2)', cb));
    assert.deepEqual((await step((cb) => b.all('SELECT x FROM t', cb))).args, [null, [{ x: 1 }]]);
    await step((cb) => a.exec('COMMIT', cb));
    assert.deepEqual((await step((cb) => b.all('SELECT x FROM t', cb))).args, [null, [{ x: 1 }, { x: 2 }]]);
  } finally {
    await close(a);
    await close(b);
  }
});

test("VERSION, VERSION_NUMBER and SOURCE_ID are the bundled SQLite's", async () => {
  const db = new Database(':memory:');
  try {
    const { args } = await step((cb) => db.get('SELECT sqlite_version() AS version, sqlite_source_id() AS id', cb));
    assert.equal(sqlite3.VERSION, args[1].version);
    assert.equal(sqlite3.SOURCE_ID, args[1].id);
    const [major, minor, patch] = sqlite3.VERSION.split('.').map(Number);
    assert.equal(sqlite3.VERSION_NUMBER, major * 1e6 + minor * 1e3 + patch);
  } finally {
    await close(db);
  }
});

test('CommonJS and ES modules get the same module', () => {
  const cjs = require('offloop/sqlite3');
  assert.equal(cjs, sqlite3);
  assert.equal(cjs.Database, Database);
});

/** What `sql` gives through `db.all()` (the callback's error, or the rows). */
const all = async (db, sql) => {
  const { args } = await step((cb) => db.all(sql, cb));
  return args[0] ?? args[1];
};

test('a double-quoted word that names no column is a string, as in sqlite3, on the writer and the readers (Knex writes type="table")', async () => {
  const db = new Database(tmp.file());
  try {
    await step((cb) => db.exec('CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT DEFAULT "none")', cb));
    await step((cb) => db.run('INSERT INTO users(id) VALUES (1)', cb));
    // A read-only SELECT runs on a reader, an UPDATE on the writer.
    assert.deepEqual(await all(db, 'SELECT tbl_name FROM sqlite_master WHERE type="table" AND tbl_name="users"'), [{ tbl_name: 'users' }]);
    assert.deepEqual(await all(db, 'SELECT count(*) AS n FROM sqlite_master WHERE sql LIKE "%AUTOINCREMENT%"'), [{ n: 1 }]);
    assert.deepEqual((await step((cb) => db.run('UPDATE users SET name = "Ada" WHERE id = 1', cb))).args, [null]);
    assert.deepEqual(await all(db, 'SELECT name FROM users'), [{ name: 'Ada' }]);
  } finally {
    await close(db);
  }
});

test('withOptions({ enableDoubleQuotedStringLiterals: false }) makes a double-quoted word an identifier only', async () => {
  const strict = sqlite3.withOptions({ enableDoubleQuotedStringLiterals: false });
  const db = new strict.Database(tmp.file());
  try {
    const err = await all(db, 'SELECT tbl_name FROM sqlite_master WHERE type="table"');
    assert.equal(err.code, 'SQLITE_ERROR');
    assert.match(err.message, /no such column: "table"/);
  } finally {
    await close(db);
  }
});

test('foreign keys are not enforced by default, as in sqlite3: a parent with children can be deleted', async () => {
  const db = new Database(tmp.file());
  try {
    await step((cb) =>
      db.exec(
        'CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(parent INTEGER REFERENCES parent(id));' +
          'INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1)',
        cb,
      ),
    );
    assert.deepEqual(await all(db, 'PRAGMA foreign_keys'), [{ foreign_keys: 0 }]);
    assert.deepEqual((await step((cb) => db.run('DELETE FROM parent', cb))).args, [null]);
    assert.deepEqual((await step((cb) => db.run('INSERT INTO child VALUES (2)', cb))).args, [null]);
    const settings = await db.offloop.settings();
    assert.equal(settings.writer.foreignKeys, false);
    for (const reader of settings.readers) assert.equal(reader.foreignKeys, false);
  } finally {
    await close(db);
  }
});

test('withOptions() turns foreign keys on, under either name', async () => {
  for (const options of [{ foreignKeys: true }, { enableForeignKeyConstraints: true }]) {
    const enforcing = sqlite3.withOptions(options);
    const db = new enforcing.Database(tmp.file());
    try {
      await step((cb) =>
        db.exec('CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(parent INTEGER REFERENCES parent(id)); INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1)', cb),
      );
      assert.deepEqual(await all(db, 'PRAGMA foreign_keys'), [{ foreign_keys: 1 }]);
      const err = (await step((cb) => db.run('DELETE FROM parent', cb))).args[0];
      assert.equal(err.code, 'SQLITE_CONSTRAINT');
    } finally {
      await close(db);
    }
  }
});

test("the core keeps node:sqlite's defaults: foreign keys on, double-quoted strings refused", async () => {
  const { Database: Core } = require('offloop');
  const db = await Core.open(tmp.file());
  try {
    assert.deepEqual(await db.prepare('PRAGMA foreign_keys').get(), { __proto__: null, foreign_keys: 1 });
    await assert.rejects(db.prepare('SELECT 1 FROM sqlite_master WHERE type="table"').all(), /no such column: "table"/);
  } finally {
    await db.close();
  }
});

test('after a session that only read, close() leaves no -wal or -shm file beside the database, every time (Sequelize removes the files)', async () => {
  const fs = require('node:fs');
  const file = tmp.file();
  const setup = new Database(file);
  await step((cb) => setup.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)', cb));
  await close(setup);
  const left = [];
  for (let round = 0; round < 20; round += 1) {
    const db = new Database(file);
    assert.deepEqual(await all(db, 'SELECT x FROM t'), [{ x: 1 }]);
    await close(db);
    const remaining = [`${file}-wal`, `${file}-shm`].filter((f) => fs.existsSync(f));
    if (remaining.length > 0) left.push({ round, remaining });
  }
  assert.deepEqual(left, []);
});

test("a database closed without waiting, then another on the same file closed: no -wal or -shm is left (Sequelize's transaction databases)", async () => {
  const fs = require('node:fs');
  const run = (db, sql) => step((cb) => db.run(sql, cb));
  const left = [];
  for (let round = 0; round < 20; round += 1) {
    const file = tmp.file();
    const main = new Database(file);
    await run(main, 'CREATE TABLE t(x)');
    await run(main, 'INSERT INTO t VALUES (1)');
    const transaction = new Database(file);
    await run(transaction, 'BEGIN DEFERRED');
    await run(transaction, 'INSERT INTO t VALUES (2)');
    await run(transaction, 'COMMIT');
    const released = step((cb) => transaction.on('close', cb));
    transaction.close();
    await run(main, 'PRAGMA wal_checkpoint');
    await close(main);
    const remaining = [`${file}-wal`, `${file}-shm`].filter((f) => fs.existsSync(f));
    if (remaining.length > 0) left.push({ round, remaining });
    await released;
  }
  assert.deepEqual(left, []);
});
