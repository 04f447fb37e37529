// The part of the test suite a prebuilt addon must pass on its own platform:
// open, write, read, a transaction, a checkpoint, close, and worker_threads.
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
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

// Enough calls at once to keep the writer and every reader busy, few enough
// for an emulated CPU.
const ROWS = 200;
const READS = 100;

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
      addons: addons.map((f) => path.relative(here, f)),
      sqliteVersion: Database.sqliteVersion,
      compileOptions: Database.compileOptions(),
    };
    fs.writeFileSync(path.join(here, 'facts.json'), JSON.stringify(facts, null, 2));
    assert.equal(addons.length, 1);
  });
}
