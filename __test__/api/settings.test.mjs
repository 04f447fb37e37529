// Connection settings: every option is applied on every connection of its
// role before the first statement, read back on each, reported by
// db.settings(), and a value in force that differs from the request is a
// warning (an error with strictSettings).

import assert from 'node:assert/strict';
import os from 'node:os';
import { after, test } from 'node:test';

import { Database, readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('settings');
after(() => tmp.cleanup());

const GiB = 2 ** 30;

/** Runs `fn` and returns the offloop setting warnings emitted meanwhile. */
async function warningsDuring(fn) {
  const seen = [];
  const listener = (w) => {
    if (w.name === 'OffloopSettingWarning') seen.push(w);
  };
  process.on('warning', listener);
  try {
    await fn();
    // process.emitWarning delivers on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

/** Every option away from its default. */
const TUNED = {
  readers: 3,
  busyTimeout: 1234,
  journalMode: 'WAL',
  synchronous: 'full',
  journalSizeLimit: 1 << 20,
  foreignKeys: false,
  mmapSize: 8 * GiB,
  cacheSize: -4096,
  tempStore: 'memory',
  pragmas: { recursive_triggers: true, cell_size_check: 'on' },
};

test('every option lands on every connection of its role, as db.settings() reads back', async () => {
  let db;
  const warnings = await warningsDuring(async () => {
    db = await Database.open(tmp.file(), TUNED);
  });
  try {
    assert.deepEqual(warnings, [], 'nothing differs from the request');
    const s = await db.settings();
    assert.equal(s.readers.length, 3);
    assert.notEqual(s.checkpointer, null);
    const queryRoles = [s.writer, ...s.readers];
    for (const c of [...queryRoles, s.checkpointer]) {
      assert.equal(c.busyTimeout, 1234);
      assert.equal(c.journalMode, 'wal');
    }
    for (const c of queryRoles) {
      assert.equal(c.mmapSize, 8 * GiB);
      assert.equal(c.cacheSize, -4096);
      assert.equal(c.tempStore, 'memory');
      assert.equal(c.foreignKeys, false);
      assert.deepEqual(c.pragmas, { recursive_triggers: 1, cell_size_check: 1 });
    }
    for (const c of [s.writer, s.checkpointer]) {
      assert.equal(c.synchronous, 'full');
      assert.equal(c.journalSizeLimit, 1 << 20);
    }
    // Not applied where it does not belong: SQLite's defaults stand.
    assert.equal(s.checkpointer.mmapSize, 0);
    assert.deepEqual(s.checkpointer.pragmas, {});
    for (const r of s.readers) assert.equal(r.journalSizeLimit, -1);
  } finally {
    await db.close();
  }
});

test('a raw PRAGMA on the writer and on the readers agrees with db.settings()', async () => {
  const db = await Database.open(tmp.file(), TUNED);
  try {
    // PRAGMA statements run on the writer.
    const writer = async (name) => Object.values(await db.prepare(`PRAGMA ${name}`).get())[0];
    assert.equal(await writer('mmap_size'), 8 * GiB);
    assert.equal(await writer('cache_size'), -4096);
    assert.equal(await writer('temp_store'), 2);
    assert.equal(await writer('foreign_keys'), 0);
    assert.equal(await writer('synchronous'), 2);
    assert.equal(await writer('busy_timeout'), 1234);
    assert.equal(await writer('recursive_triggers'), 1);
    // The pragma table functions are read-only queries: after the first
    // call (which teaches the route, on the writer) they run on readers.
    const checks = [
      ['cache_size', -4096],
      ['temp_store', 2],
      ['foreign_keys', 0],
      ['busy_timeout', 1234],
      ['recursive_triggers', 1],
      ['journal_mode', 'wal'],
    ];
    for (const [name, expected] of checks) {
      const stmt = db.prepare(`SELECT * FROM pragma_${name}`);
      await stmt.get();
      const before = readerExecuted(db.stats());
      const rows = await Promise.all(Array.from({ length: 12 }, () => stmt.get()));
      assert.equal(readerExecuted(db.stats()), before + 12, `${name} ran on readers`);
      for (const row of rows) assert.equal(Object.values(row)[0], expected, name);
    }
  } finally {
    await db.close();
  }
});

test('an 8 GiB mmapSize reads back as 8 GiB on the writer and every reader', async () => {
  assert.ok(Database.compileOptions().includes('MAX_MMAP_SIZE=0x1000000000'));
  const db = await Database.open(tmp.file(), { readers: 4, mmapSize: 8 * GiB });
  try {
    const s = await db.settings();
    assert.deepEqual(
      [s.writer, ...s.readers].map((c) => c.mmapSize),
      Array(5).fill(8 * GiB),
    );
    assert.equal((await db.prepare('PRAGMA mmap_size').get()).mmap_size, 8 * GiB);
  } finally {
    await db.close();
  }
});

test('a clamped mmapSize warns with OFFLOOP_SETTING_MMAP_SIZE, the requested and the effective value', async () => {
  const file = tmp.file();
  let db;
  const warnings = await warningsDuring(async () => {
    db = await Database.open(file, { readers: 2, mmapSize: 128 * GiB });
  });
  try {
    assert.equal(warnings.length, 1);
    const [w] = warnings;
    assert.equal(w.code, 'OFFLOOP_SETTING_MMAP_SIZE');
    assert.equal(w.setting, 'mmap_size');
    assert.equal(w.requested, 128 * GiB);
    assert.equal(w.effective, 64 * GiB);
    // The open opens the writer's connection only; the readers open on
    // demand, and settings() reads them back (opening them).
    assert.deepEqual(w.connections, ['writer']);
    assert.match(w.message, /mmap_size = 137438953472 was requested, but 68719476736 is in force/);
    assert.match(w.message, /SQLITE_MAX_MMAP_SIZE/);
    const s = await db.settings();
    assert.deepEqual(
      [s.writer, ...s.readers].map((c) => c.mmapSize),
      [64 * GiB, 64 * GiB, 64 * GiB],
    );
  } finally {
    await db.close();
  }
});

test('strictSettings: a clamped value fails the open, and calls queued before it never run', async () => {
  const file = tmp.file();
  const setup = await Database.open(file);
  await setup.exec('CREATE TABLE t(x)');
  await setup.close();

  const db = new Database(file, { readers: 1, mmapSize: 128 * GiB, strictSettings: true });
  const queued = db.prepare('INSERT INTO t VALUES (1)').run();
  await assert.rejects(db.ready, (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_SETTING');
    assert.match(err.message, /mmap_size = 137438953472 was requested, but 68719476736 is in force on the writer/);
    assert.match(err.message, /strictSettings/);
    return true;
  });
  await assert.rejects(queued);
  const check = await Database.open(file, { readers: 0 });
  assert.equal((await check.prepare('SELECT count(*) AS n FROM t').get()).n, 0);
  await check.close();

  // Without a difference, strict mode opens as usual.
  const ok = await Database.open(file, { mmapSize: 8 * GiB, strictSettings: true });
  await ok.close();
});

test('a journal mode that cannot be set warns, and fails the open under strictSettings', async () => {
  let db;
  const warnings = await warningsDuring(async () => {
    db = await Database.open(':memory:', { journalMode: 'wal' });
  });
  try {
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].code, 'OFFLOOP_SETTING_JOURNAL_MODE');
    assert.equal(warnings[0].requested, 'wal');
    assert.equal(warnings[0].effective, 'memory');
    assert.equal((await db.settings()).writer.journalMode, 'memory');
  } finally {
    await db.close();
  }
  await assert.rejects(Database.open(':memory:', { journalMode: 'wal', strictSettings: true }), {
    code: 'ERR_OFFLOOP_SETTING',
  });
});

test('a negative mmapSize is refused with ERR_OUT_OF_RANGE that says what -1 would do', async () => {
  for (const mmapSize of [-1, -4096]) {
    assert.throws(() => new Database(tmp.file(), { mmapSize }), (err) => {
      assert.ok(err instanceof RangeError);
      assert.equal(err.code, 'ERR_OUT_OF_RANGE');
      assert.match(err.message, /"options\.mmapSize"/);
      assert.match(err.message, /-1\) as "the compile-time default", which is 0: it would turn memory-mapping off, not lift the limit/);
      return true;
    });
  }
  await assert.rejects(Database.open(tmp.file(), { mmapSize: 1.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  const db = await Database.open(tmp.file(), { mmapSize: 0, readers: 1 });
  assert.equal((await db.settings()).readers[0].mmapSize, 0);
  await db.close();
});

test(':memory: opens with defaults and reports mmapSize null, one connection, no warning', async () => {
  let db;
  const warnings = await warningsDuring(async () => {
    db = await Database.open(':memory:');
  });
  try {
    assert.deepEqual(warnings, []);
    const s = await db.settings();
    assert.equal(s.writer.mmapSize, null);
    assert.equal(s.writer.journalMode, 'memory');
    assert.deepEqual(s.readers, []);
    assert.equal(s.checkpointer, null);
    assert.equal((await db.prepare('PRAGMA mmap_size').all()).length, 0, 'SQLite returns no row');
  } finally {
    await db.close();
  }
  // Asking for mmap on one is a request SQLite cannot honour: a warning.
  const warned = await warningsDuring(async () => {
    await (await Database.open(':memory:', { mmapSize: GiB })).close();
  });
  assert.deepEqual(
    warned.map((w) => [w.code, w.requested, w.effective]),
    [['OFFLOOP_SETTING_MMAP_SIZE', GiB, null]],
  );
});

test('db.settings() reads back every time: a pragma changed later shows, on that connection only', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('PRAGMA cache_size = -8000');
    const s = await db.settings();
    assert.equal(s.writer.cacheSize, -8000);
    assert.deepEqual(s.readers.map((r) => r.cacheSize), [-2000, -2000]);
  } finally {
    await db.close();
  }
  await assert.rejects(db.settings(), { code: 'ERR_INVALID_STATE' });
});

test('db.settings() called before the database is open waits for it; the checkpointer is null once stopped', async () => {
  const db = new Database(tmp.file(), { readers: 1 });
  const early = db.settings();
  await db.ready;
  try {
    const s = await early;
    assert.equal(s.writer.journalMode, 'wal');
    assert.equal(s.writer.synchronous, 'normal');
    assert.equal(s.checkpointer.synchronous, 'normal');
    await db.stopCheckpointer();
    assert.equal((await db.settings()).checkpointer, null);
  } finally {
    await db.close();
  }
});

test('journalMode other than WAL: no checkpointer, SQLite\'s FULL synchronous stays, readers still read', async () => {
  const db = await Database.open(tmp.file(), { readers: 2, journalMode: 'truncate' });
  try {
    const s = await db.settings();
    assert.equal(s.writer.journalMode, 'truncate');
    assert.equal(s.writer.synchronous, 'full');
    assert.equal(s.checkpointer, null);
    assert.equal(db.stats().checkpoint.active, false);
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    const sel = db.prepare('SELECT x FROM t');
    await sel.get();
    const before = readerExecuted(db.stats());
    assert.equal((await sel.get()).x, 1);
    assert.equal(readerExecuted(db.stats()), before + 1);
  } finally {
    await db.close();
  }
});

test('busyTimeout and foreignKeys are other names for timeout and enableForeignKeyConstraints', async () => {
  const db = await Database.open(tmp.file(), { readers: 1, busyTimeout: 250, foreignKeys: false });
  try {
    const s = await db.settings();
    assert.equal(s.writer.busyTimeout, 250);
    assert.equal(s.readers[0].busyTimeout, 250);
    assert.equal(s.writer.foreignKeys, false);
  } finally {
    await db.close();
  }
  const same = await Database.open(tmp.file(), { timeout: 300, busyTimeout: 300, enableForeignKeyConstraints: true, foreignKeys: true });
  assert.equal((await same.settings()).writer.busyTimeout, 300);
  await same.close();
  assert.throws(() => new Database(tmp.file(), { timeout: 1, busyTimeout: 2 }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => new Database(tmp.file(), { foreignKeys: true, enableForeignKeyConstraints: false }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  assert.throws(() => new Database(tmp.file(), { busyTimeout: 'x' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => new Database(tmp.file(), { foreignKeys: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
});

test('keyword and number options are validated before anything opens', () => {
  const bad = [
    [{ journalMode: 'wall' }, 'ERR_INVALID_ARG_VALUE'],
    [{ journalMode: 1 }, 'ERR_INVALID_ARG_TYPE'],
    [{ synchronous: 'sometimes' }, 'ERR_INVALID_ARG_VALUE'],
    [{ tempStore: 'disk' }, 'ERR_INVALID_ARG_VALUE'],
    [{ cacheSize: 2 ** 31 }, 'ERR_OUT_OF_RANGE'],
    [{ cacheSize: 'big' }, 'ERR_INVALID_ARG_TYPE'],
    [{ strictSettings: 'yes' }, 'ERR_INVALID_ARG_TYPE'],
    [{ pragmas: [] }, 'ERR_INVALID_ARG_TYPE'],
    [{ pragmas: { 'bad name': 1 } }, 'ERR_INVALID_ARG_VALUE'],
    [{ pragmas: { 'x; DROP TABLE t': 1 } }, 'ERR_INVALID_ARG_VALUE'],
    [{ pragmas: { mmap_size: 1 } }, 'ERR_INVALID_ARG_VALUE'],
    [{ pragmas: { Query_Only: 0 } }, 'ERR_INVALID_ARG_VALUE'],
    [{ pragmas: { wal_autocheckpoint: 0 } }, 'ERR_INVALID_ARG_VALUE'],
    [{ pragmas: { threads: 1.5 } }, 'ERR_INVALID_ARG_TYPE'],
    [{ pragmas: { threads: null } }, 'ERR_INVALID_ARG_TYPE'],
  ];
  for (const [options, code] of bad) {
    assert.throws(() => new Database(tmp.file(), options), { code }, JSON.stringify(options));
  }
  assert.throws(() => new Database(tmp.file(), { pragmas: { mmap_size: 1 } }), /options\.mmapSize/);
});

test('a free-form pragma SQLite ignores or clamps warns; string values are quoted, not spliced', async () => {
  let db;
  const warnings = await warningsDuring(async () => {
    db = await Database.open(tmp.file(), {
      readers: 1,
      pragmas: { no_such_pragma: 1, threads: 1000, locking_mode: "normal'; DROP TABLE x; --" },
    });
  });
  try {
    const byCode = Object.fromEntries(warnings.map((w) => [w.code, w]));
    assert.deepEqual(Object.keys(byCode).sort(), [
      'OFFLOOP_SETTING_LOCKING_MODE',
      'OFFLOOP_SETTING_NO_SUCH_PRAGMA',
      'OFFLOOP_SETTING_THREADS',
    ]);
    assert.equal(byCode.OFFLOOP_SETTING_NO_SUCH_PRAGMA.effective, null);
    assert.equal(byCode.OFFLOOP_SETTING_THREADS.effective, 8, 'SQLITE_MAX_WORKER_THREADS');
    assert.equal(byCode.OFFLOOP_SETTING_LOCKING_MODE.effective, 'normal');
    assert.deepEqual(byCode.OFFLOOP_SETTING_THREADS.connections, ['writer']);
    assert.equal((await db.settings()).readers[0].pragmas.threads, 8);
  } finally {
    await db.close();
  }
});

test('Database.compileOptions() and Database.sqliteVersion describe the bundled SQLite', async () => {
  const options = Database.compileOptions();
  assert.ok(Array.isArray(options) && options.length > 10);
  assert.ok(options.includes('THREADSAFE=1'), options.join(' '));
  assert.ok(options.includes('MAX_MMAP_SIZE=0x1000000000'));
  const db = await Database.open(':memory:');
  try {
    const listed = (await db.prepare('PRAGMA compile_options').all()).map((r) => r.compile_options);
    assert.deepEqual(options, listed);
    assert.equal((await db.prepare('SELECT sqlite_version() AS v').get()).v, Database.sqliteVersion);
  } finally {
    await db.close();
  }
});

test('readers defaults to one per CPU the process may use, at least 2 and at most 4', async () => {
  const db = await Database.open(tmp.file());
  try {
    const expected = Math.min(4, Math.max(2, os.availableParallelism()));
    assert.equal(db.stats().readers.length, expected);
    assert.equal((await db.settings()).readers.length, expected);
  } finally {
    await db.close();
  }
});
