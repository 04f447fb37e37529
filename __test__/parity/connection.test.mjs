// open: false and open(), location(dbName), limits, enableDefensive() and
// extension loading: side by side with node:sqlite under Node 24, then what
// only offloop has to show: that a change reaches every connection (the
// writer and each reader), checked over many concurrent reads. The
// extension is built here from C with the machine's C compiler and
// SQLite's extension header; without them, its tests are skipped.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const tmp = tempDir('connection');
after(() => tmp.cleanup());

let sideBySide = null;
let failure = null;
if (!skipWithoutNode24) {
  try {
    sideBySide = runUnderNode24('connection.cjs');
  } catch (err) {
    failure = err;
  }
}

test('node:sqlite parity: open(), location, limits, enableDefensive, extension checks', { skip: skipWithoutNode24 }, async (t) => {
  assert.equal(failure, null);
  for (const r of sideBySide) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

const READERS = 3;
const READS = 64;
const LONG = `SELECT ${'1'.repeat(200)} AS n`;

/**
 * Runs `sql` on every reader: READERS read snapshots held open together
 * each pin a reader of their own. Then READS more reads at once, wherever
 * they land. Each outcome is 'ok' or the error's message.
 */
async function everyRead(db, sql) {
  const outcome = (p) => p.then(() => 'ok', (err) => err.message);
  let arrived = 0;
  let release;
  const together = new Promise((resolve) => {
    release = resolve;
  });
  const pinned = Array.from({ length: READERS }, () =>
    db.read(async (r) => {
      const result = await outcome(r.prepare(sql).get());
      if (++arrived === READERS) release();
      await together;
      return result;
    }),
  );
  const loose = Array.from({ length: READS }, () => outcome(db.prepare(sql).get()));
  return [...(await Promise.all(pinned)), ...(await Promise.all(loose))];
}

test('a limit from the options holds on every reader, and lifting it reaches them all', async () => {
  const db = await Database.open(tmp.file(), { readers: READERS, limits: { sqlLength: 100 } });
  try {
    assert.deepEqual(await everyRead(db, LONG), Array(READERS + READS).fill('string or blob too big'));
    db.limits.sqlLength = Infinity;
    assert.deepEqual(await everyRead(db, LONG), Array(READERS + READS).fill('ok'));
  } finally {
    await db.close();
  }
});

test('a limit set after the open holds on the writer and every reader', async () => {
  const db = await Database.open(tmp.file(), { readers: READERS });
  try {
    assert.deepEqual(await everyRead(db, LONG), Array(READERS + READS).fill('ok'));
    db.limits.sqlLength = 100;
    assert.deepEqual(await everyRead(db, LONG), Array(READERS + READS).fill('string or blob too big'));
    await assert.rejects(db.exec(`CREATE TABLE t(a); ${LONG}`), { message: 'string or blob too big' });
  } finally {
    await db.close();
  }
});

// ---------------------------------------------------------------------------
// Extensions

const HEADER = ['/usr/include/sqlite3ext.h', '/usr/local/include/sqlite3ext.h'].find((f) => fs.existsSync(f));

// answer() is 42; the second entry point defines answer2() instead.
const SOURCE = `
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
static void answer(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc; (void)argv;
  sqlite3_result_int(ctx, 42);
}
int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "answer", 0, SQLITE_UTF8, 0, answer, 0, 0);
}
int other_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "answer2", 0, SQLITE_UTF8, 0, answer, 0, 0);
}
`;

function buildExtension() {
  if (HEADER === undefined) return null;
  const dir = fs.mkdtempSync(path.join(tmp.dir, 'ext-'));
  fs.writeFileSync(path.join(dir, 'answer.c'), SOURCE);
  const out = path.join(dir, 'answer.so');
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', out, path.join(dir, 'answer.c')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return cc.status === 0 ? out : null;
}

const extension = buildExtension();
const skipWithoutExtension = extension === null ? 'no C compiler or sqlite3ext.h to build the test extension' : false;

test('location(dbName) follows ATTACH and DETACH as soon as each resolves, among calls in flight', async () => {
  const db = await Database.open(tmp.file('attaching'), { readers: 2 });
  try {
    const files = Array.from({ length: 8 }, (_, i) => tmp.file(`attached-${i}`));
    // Attached one at a time, each with reads and writes in flight.
    await db.exec('CREATE TABLE t(x)');
    for (const [i, file] of files.entries()) {
      const attach = db.exec(`ATTACH '${file}' AS a${i}`);
      const others = Array.from({ length: 16 }, (_, k) =>
        k % 2 ? db.prepare('INSERT INTO t VALUES (?)').run(k) : db.prepare('SELECT count(*) AS n FROM t').get(),
      );
      await attach;
      assert.equal(db.location(`a${i}`), file);
      const settled = await Promise.all(others);
      assert.ok(settled.every((r, k) => (k % 2 ? r.changes === 1 : Number.isInteger(r.n))));
    }
    assert.deepEqual(
      files.map((_, i) => db.location(`a${i}`)),
      files,
    );
    await db.exec('DETACH a3');
    assert.equal(db.location('a3'), null);
    assert.equal(db.location('a4'), files[4]);
    assert.equal(db.location(), db.location('main'));
  } finally {
    await db.close();
  }
});

test('an extension loaded once is in force on the writer and every reader', { skip: skipWithoutExtension }, async () => {
  const db = await Database.open(tmp.file(), { readers: READERS, allowExtension: true });
  try {
    await assert.rejects(db.prepare('SELECT answer() AS a').get(), { message: 'no such function: answer' });
    assert.equal(await db.loadExtension(extension), undefined);
    assert.deepEqual(await everyRead(db, 'SELECT answer() AS a'), Array(READERS + READS).fill('ok'));
    await db.exec('CREATE TABLE t(a); INSERT INTO t VALUES (answer())');
    assert.deepEqual(await db.prepare('SELECT a FROM t').all(), [{ __proto__: null, a: 42 }]);
  } finally {
    await db.close();
  }
});

test('loadExtension() with an entry point calls that function', { skip: skipWithoutExtension }, async () => {
  const db = await Database.open(tmp.file(), { readers: READERS, allowExtension: true });
  try {
    await db.loadExtension(extension, 'other_init');
    assert.deepEqual(await everyRead(db, 'SELECT answer2() AS a'), Array(READERS + READS).fill('ok'));
    await assert.rejects(db.prepare('SELECT answer() AS a').get(), { message: 'no such function: answer' });
  } finally {
    await db.close();
  }
});

test('enableLoadExtension(false) stops later loads; a failed load leaves nothing behind', { skip: skipWithoutExtension }, async () => {
  const db = await Database.open(tmp.file(), { readers: READERS, allowExtension: true });
  try {
    await assert.rejects(db.loadExtension(extension, 'no_such_init'), { code: 'ERR_LOAD_SQLITE_EXTENSION' });
    db.enableLoadExtension(false);
    await assert.rejects(db.loadExtension(extension), {
      code: 'ERR_INVALID_STATE',
      message: 'extension loading is not allowed',
    });
    db.enableLoadExtension(true);
    await db.loadExtension(extension);
    assert.equal((await db.prepare('SELECT answer() AS a').get()).a, 42);
  } finally {
    await db.close();
  }
});
