// The part of the test suite a prebuilt addon must pass on its own platform:
// open, write, read, a transaction, a checkpoint, close, worker_threads,
// `:memory:`, a folder replica with its lease (the default), a reopen that
// carries on from the replica, restores, and `offloop/sqlite3` (on Windows
// through `file:///C:/…` URLs and paths with a drive letter and
// backslashes). Windows flushes a file only through a handle open for
// writing: the replica, reopen and restore tests are what fails there when
// offloop syncs one opened read-only.
// It never runs from the repository: install.mjs copies it into a folder
// where offloop and one platform package were installed from their
// tarballs, and runs it there with the Node of that platform (the host's,
// an arm64 Node under qemu, a musl Node), as `node subset.mjs`: node:test
// then runs in that one process and sets the exit code. It needs nothing
// but the installed packages, and writes what it found out (the addon it
// loaded, the SQLite compile options) to facts.json beside itself.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

// Enough calls at once to keep the writer and every reader busy, few enough
// for an emulated CPU.
const ROWS = 200;
const READS = 100;
// The shortest lease offloop takes, renewed every second.
const LEASE_TTL_MS = 3000;
// How long a test waits for a lease renewal (a background thread's) before
// it fails: far more than one needs, even emulated.
const PATIENCE_MS = 60_000;

/** Resolves once `check()` is true; rejects, naming `what`, after PATIENCE_MS. */
async function until(what, check) {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The replica's lease in `folder`: its lock.json's holder, and when it
 * expires: at the epoch once released, else when the process lease it
 * names (beside the replica, in .offloop/leases) does.
 */
function leaseIn(folder) {
  const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  const lease = read(path.join(folder, 'lock.json'));
  const live = lease.process_lease && Date.parse(lease.expires_at) !== 0;
  const expires = live ? read(path.join(path.dirname(folder), lease.process_lease)).expires_at : lease.expires_at;
  return { owner: lease.owner, expiresAt: Date.parse(expires) };
}

/** What each worker and the main thread do on a database of their own. */
async function writeAndRead(Database, file, tag) {
  const db = await Database.open(file, { readers: 2 });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, n INTEGER)');
  const ins = db.prepare('INSERT INTO t(tag, n) VALUES (?, ?)');
  const runs = await Promise.all(Array.from({ length: ROWS }, (_, i) => ins.run(tag, i)));
  const sum = db.prepare('SELECT count(*) AS c, sum(n) AS s FROM t WHERE tag = ?');
  const reads = await Promise.all(Array.from({ length: READS }, () => sum.get(tag)));
  await db.close();
  return {
    ids: runs.map((r) => r.lastInsertRowid),
    reads: reads.map((r) => [r.c, r.s]),
  };
}

function expected() {
  const total = (ROWS * (ROWS - 1)) / 2;
  return {
    ids: Array.from({ length: ROWS }, (_, i) => i + 1),
    reads: Array.from({ length: READS }, () => [ROWS, total]),
  };
}

if (!isMainThread) {
  const { Database } = require('offloop');
  writeAndRead(Database, workerData.file, workerData.tag).then(
    (result) => parentPort.postMessage({ result }),
    (err) => parentPort.postMessage({ error: String(err && err.stack) }),
  );
} else {
  const offloop = require('offloop');
  const { Database } = offloop;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-subset-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('require and import give the same API', async () => {
    const imported = await import('offloop');
    assert.equal(imported.Database, Database);
    assert.equal(imported.default, offloop);
    assert.equal(typeof Database.open, 'function');
  });

  test('concurrent writes get consecutive rowids and concurrent reads see all of them', async () => {
    assert.deepEqual(await writeAndRead(Database, path.join(tmp, 'main.db'), 'main'), expected());
  });

  test('a transaction commits as one and a throwing one rolls back', async () => {
    const db = await Database.open(path.join(tmp, 'tx.db'));
    await db.exec('CREATE TABLE a(x INTEGER)');
    await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO a VALUES (?)').run(1);
      await tx.prepare('INSERT INTO a VALUES (?)').run(2);
    });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.prepare('INSERT INTO a VALUES (?)').run(3);
        throw new Error('abandon');
      }),
      /abandon/,
    );
    assert.deepEqual(
      (await db.prepare('SELECT x FROM a ORDER BY x').all()).map((r) => r.x),
      [1, 2],
    );
    await db.close();
  });

  test('a TRUNCATE checkpoint copies the WAL into the database and empties it', async () => {
    const file = path.join(tmp, 'ckpt.db');
    const db = await Database.open(file);
    await db.exec('CREATE TABLE b(v BLOB)');
    const ins = db.prepare('INSERT INTO b VALUES (?)');
    await Promise.all(Array.from({ length: 50 }, () => ins.run(new Uint8Array(4096))));
    const result = await db.checkpoint('TRUNCATE');
    assert.deepEqual(result, { logFrames: 0, checkpointedFrames: 0 });
    assert.equal(fs.statSync(`${file}-wal`).size, 0);
    assert.ok(fs.statSync(file).size >= 50 * 4096);
    await db.close();
  });

  test('close ends the database and what it wrote is there on reopening', async () => {
    const file = path.join(tmp, 'close.db');
    const db = await Database.open(file);
    await db.exec("CREATE TABLE c(s TEXT); INSERT INTO c VALUES ('kept')");
    await db.close();
    assert.equal(db.isOpen, false);
    await assert.rejects(async () => db.prepare('SELECT 1').get(), { code: 'ERR_INVALID_STATE' });
    const again = await Database.open(file);
    assert.deepEqual({ ...(await again.prepare('SELECT s FROM c').get()) }, { s: 'kept' });
    await again.close();
  });

  test(':memory: is a database of its own, gone at close', async () => {
    const db = await Database.open(':memory:');
    await db.exec("CREATE TABLE m(x); INSERT INTO m VALUES ('here')");
    assert.equal((await db.prepare('SELECT x FROM m').get()).x, 'here');
    await db.close();
    const again = await Database.open(':memory:');
    assert.equal((await again.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'm'").get()).n, 0);
    await again.close();
    assert.deepEqual(
      fs.readdirSync(tmp).filter((name) => name.includes('memory')),
      [],
      'no file named after :memory:',
    );
  });

  test('a replica takes its lease by default, renews it while open and releases it at close', async () => {
    const folder = path.join(tmp, 'leased');
    const url = pathToFileURL(folder).href;
    const db = await Database.open(path.join(tmp, 'leased.db'), { replica: { url, leaseTtl: LEASE_TTL_MS } });
    const { leaseHolder, fenced } = db.stats().replica;
    assert.equal(typeof leaseHolder, 'string');
    assert.notEqual(leaseHolder, '');
    assert.equal(fenced, false);
    const taken = leaseIn(folder);
    assert.equal(taken.owner, leaseHolder);
    await until('a renewal of the lease', () => leaseIn(folder).expiresAt > taken.expiresAt);
    await db.exec('CREATE TABLE l(x); INSERT INTO l VALUES (1)');
    assert.ok((await db.syncReplica()).txid >= 1);
    assert.equal(db.stats().replica.fenced, false);
    assert.equal(db.stats().replica.lastError, null);
    await db.close();
    assert.deepEqual(leaseIn(folder), { owner: leaseHolder, expiresAt: 0 }, 'released: expired at the epoch');
  });

  test('a folder replica gets every commit and a restore gives them back, while the source stays open', async () => {
    // A space in the folder's name: its URL escapes it, the path does not.
    const folder = path.join(tmp, 'replica folder');
    const url = pathToFileURL(folder).href;
    const file = path.join(tmp, 'source.db');
    if (process.platform === 'win32') {
      assert.match(url, /^file:\/\/\/[A-Za-z]:\//, url);
      assert.match(file, /^[A-Za-z]:\\.*\\source\.db$/, file);
    }
    const db = await Database.open(file, { replica: { url } });
    await db.exec('CREATE TABLE r(id INTEGER PRIMARY KEY, v TEXT)');
    const ins = db.prepare('INSERT INTO r(v) VALUES (?)');
    await Promise.all(Array.from({ length: ROWS }, (_, i) => ins.run(`row ${i}`)));
    const synced = await db.syncReplica();
    assert.ok(fs.readdirSync(folder).length > 0, 'the replica folder has files');

    // Restored while the source holds its files open; then restored over
    // the first copy (closed), which is renamed over, not written into.
    const copy = path.join(tmp, 'copy.db');
    for (const overwrite of [false, true]) {
      const restored = await Database.restore(url, copy, { overwrite });
      assert.equal(restored.txid, synced.txid);
      const check = await Database.open(copy, { readOnly: true });
      const rows = await check.prepare('SELECT id, v FROM r ORDER BY id').all();
      assert.deepEqual(
        rows.map((r) => [r.id, r.v]),
        Array.from({ length: ROWS }, (_, i) => [i + 1, `row ${i}`]),
      );
      await check.close();
    }
    await assert.rejects(Database.restore(url, copy), /exists/);
    await db.exec("INSERT INTO r(v) VALUES ('after')");
    assert.equal((await db.syncReplica()).txid, synced.txid + 1);
    await db.close();
  });

  test('after a clean close, the next open carries on from the replica without a full image', async () => {
    const folder = path.join(tmp, 'resumed');
    const url = pathToFileURL(folder).href;
    const file = path.join(tmp, 'resumed.db');
    let db = await Database.open(file, { replica: { url } });
    const holder = db.stats().replica.leaseHolder;
    await db.exec('CREATE TABLE p(pad BLOB)');
    const ins = db.prepare('INSERT INTO p VALUES (randomblob(4000))');
    await Promise.all(Array.from({ length: 100 }, () => ins.run()));
    const before = await db.syncReplica();
    await db.close();
    db = await Database.open(file, { replica: { url } });
    assert.equal(db.stats().replica.leaseHolder, holder, 'the same database is the same lease holder');
    await db.prepare("INSERT INTO p VALUES (x'01')").run();
    const resumed = await db.syncReplica();
    await db.close();
    assert.equal(resumed.txid, before.txid + 1);
    const txid = resumed.txid.toString(16).padStart(16, '0');
    const { size } = fs.statSync(path.join(folder, 'ltx', '0', `${txid}-${txid}.ltx`));
    assert.ok(size < 20_000, `the next file holds the change only (${size} bytes), not the 400 kB database`);
  });

  test('offloop/sqlite3 writes a replicated file, backs it up, and opens a restore by path and by URI', async () => {
    const sqlite3 = require('offloop/sqlite3');
    assert.equal((await import('offloop/sqlite3')).default, sqlite3);
    assert.deepEqual(
      Object.keys(require.cache).filter((f) => f.endsWith('.node')),
      [sqlite3.path],
      "sqlite3.path names the platform package's addon, the one loaded",
    );
    const call = (target, method, ...args) =>
      new Promise((resolve, reject) => {
        target[method](...args, function (err, result) {
          if (err) reject(err);
          else resolve(method === 'run' ? { lastID: this.lastID, changes: this.changes } : result);
        });
      });
    const opened = (module, ...args) =>
      new Promise((resolve, reject) => {
        const db = new module.Database(...args, (err) => (err ? reject(err) : resolve(db)));
      });

    const file = path.join(tmp, 'sqlite3.db');
    const url = pathToFileURL(path.join(tmp, 'sqlite3 replica')).href;
    const db = await opened(sqlite3.withOptions({ replica: { url } }), file);
    await call(db, 'exec', 'CREATE TABLE s(id INTEGER PRIMARY KEY, name TEXT UNIQUE)');
    const runs = await Promise.all(
      Array.from({ length: ROWS }, (_, i) => call(db, 'run', 'INSERT INTO s(name) VALUES (?)', `n${i}`)),
    );
    assert.deepEqual(
      runs.map((r) => [r.lastID, r.changes]),
      Array.from({ length: ROWS }, (_, i) => [i + 1, 1]),
    );
    await assert.rejects(call(db, 'run', 'INSERT INTO s(name) VALUES (?)', 'n0'), { code: 'SQLITE_CONSTRAINT' });
    assert.deepEqual(await call(db, 'get', 'SELECT count(*) AS n FROM s'), { n: ROWS });
    const copy = path.join(tmp, 'sqlite3-copy.db');
    const backup = db.backup(copy);
    await new Promise((resolve, reject) => backup.step(-1, (err) => (err ? reject(err) : resolve())));
    assert.equal(backup.completed, true);
    await new Promise((resolve) => backup.finish(resolve));
    // The close ships every commit to the replica.
    await call(db, 'close');
    const restored = path.join(tmp, 'sqlite3-restored.db');
    await Database.restore(url, restored);

    // Without OPEN_CREATE, sqlite3 opens an existing file only, by path
    // (offloop's adapter turns it into a file: URI) or by URI.
    for (const name of [copy, restored]) {
      const byPath = await opened(sqlite3, name, sqlite3.OPEN_READWRITE);
      assert.deepEqual(await call(byPath, 'all', 'SELECT name FROM s WHERE id IN (1, ?) ORDER BY id', ROWS), [
        { name: 'n0' },
        { name: `n${ROWS - 1}` },
      ]);
      await call(byPath, 'close');
    }
    const uri = `${pathToFileURL(file).href}?mode=ro`;
    const byUri = await opened(sqlite3, uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI);
    assert.deepEqual(await call(byUri, 'get', 'SELECT count(*) AS n FROM s'), { n: ROWS });
    await call(byUri, 'close');
    await assert.rejects(opened(sqlite3, path.join(tmp, 'missing.db'), sqlite3.OPEN_READWRITE), {
      code: 'SQLITE_CANTOPEN',
    });
  });

  test('workers and the main thread use the addon at once', async () => {
    const tags = ['w1', 'w2', 'main-concurrent'];
    const results = await Promise.all(
      tags.map((tag) => {
        if (tag.startsWith('main')) return writeAndRead(Database, path.join(tmp, `${tag}.db`), tag);
        return new Promise((resolve, reject) => {
          const worker = new Worker(fileURLToPath(import.meta.url), {
            workerData: { file: path.join(tmp, `${tag}.db`), tag },
          });
          worker.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m.result)));
          worker.once('error', reject);
        });
      }),
    );
    for (const result of results) assert.deepEqual(result, expected());
  });

  test('facts about the loaded addon are written for the caller', () => {
    const addons = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
    process.report.excludeNetwork = true;
    const facts = {
      arch: process.arch,
      glibc: process.report.getReport().header.glibcVersionRuntime ?? null,
      addons: addons.map((f) => path.relative(here, f).split(path.sep).join('/')),
      sqliteVersion: Database.sqliteVersion,
      compileOptions: Database.compileOptions(),
    };
    fs.writeFileSync(path.join(here, 'facts.json'), JSON.stringify(facts, null, 2));
    assert.equal(addons.length, 1);
  });
}
