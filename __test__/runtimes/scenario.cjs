'use strict';

// The calls the runtime subset makes in Node, Bun and Deno alike: open,
// every statement kind, a transaction, a read snapshot, iterate, an error
// with its code, a cancelled call, a worker, a folder replica and a
// restore, close. It prints one JSON line of every value it got, values
// encoded so that JSON keeps them apart (BigInt, bytes, a row's
// prototype), for runtimes.test.mjs to compare with Node's. It only runs
// the calls; it judges nothing. Its arguments: the offloop entry point
// and an empty folder (Deno reads no environment without a flag, so
// nothing comes from there).

const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

/** A value as JSON keeps it apart from the others. */
function encode(value) {
  if (typeof value === 'bigint') return { bigint: String(value) };
  if (value instanceof Uint8Array) return { bytes: Array.from(value) };
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === 'object') {
    const out = { prototype: Object.getPrototypeOf(value) === null ? 'null' : 'object' };
    for (const [key, v] of Object.entries(value)) out[key] = encode(v);
    return out;
  }
  return value;
}

function errorFacts(err) {
  const { name, code, errcode, errstr, sqliteCode, message } = err;
  return { name, code, errcode, errstr, sqliteCode, message };
}

async function rejection(promise) {
  try {
    await promise;
    return { resolved: true };
  } catch (err) {
    return errorFacts(err);
  }
}

/** What a worker does on a database of its own. */
async function inWorker(Database, file) {
  const db = await Database.open(file, { readers: 2 });
  await db.exec('CREATE TABLE w(id INTEGER PRIMARY KEY, n INTEGER)');
  const ins = db.prepare('INSERT INTO w(n) VALUES (?)');
  const runs = await Promise.all(Array.from({ length: 50 }, (_, i) => ins.run(i)));
  const sum = await db.prepare('SELECT count(*) AS c, sum(n) AS s FROM w').get();
  await db.close();
  return encode({ ids: runs.map((r) => r.lastInsertRowid), sum });
}

function worker(entry, file) {
  return new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: { entry, file } });
    w.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m.result)));
    w.once('error', reject);
  });
}

async function main(entry, dir) {
  const { Database } = require(entry);
  const seen = {};
  const file = path.join(dir, 'app.db');
  const db = await Database.open(file, { readers: 2 });
  seen.waker = db.stats().waker;

  // Every statement kind.
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER UNIQUE, r REAL, s TEXT, b BLOB, n)');
  const ins = db.prepare('INSERT INTO t(i, r, s, b, n) VALUES (?, ?, ?, ?, ?)');
  seen.run = await ins.run(1, 1.5, 'one', new Uint8Array([1, 2, 3]), null);
  seen.runs = await Promise.all(Array.from({ length: 100 }, (_, k) => ins.run(k + 2, k / 4, `row ${k}`, null, null)));
  seen.named = await db.prepare('INSERT INTO t(i, s) VALUES ($i, :s)').run({ $i: 1000, ':s': 'named' });
  seen.get = await db.prepare('SELECT * FROM t WHERE i = ?').get(1);
  seen.getMissing = await db.prepare('SELECT * FROM t WHERE i = ?').get(-1);
  seen.all = await db.prepare('SELECT id, i, r, s FROM t WHERE i <= ? ORDER BY id').all(10);
  const big = db.prepare('SELECT i, 9007199254740993 AS huge FROM t WHERE i = 1');
  big.setReadBigInts(true);
  seen.bigints = await big.get();
  const arrays = db.prepare('SELECT i, s FROM t WHERE i < 4 ORDER BY i');
  arrays.setReturnArrays(true);
  seen.arrays = await arrays.all();
  seen.columns = await db.prepare('SELECT i AS eye, s FROM t').columns();
  seen.sourceSQL = db.prepare('SELECT 1; SELECT 2').sourceSQL;
  seen.iterate = [];
  for await (const row of db.prepare('SELECT i, s FROM t ORDER BY i LIMIT 40').iterate()) seen.iterate.push(row);

  // A transaction that commits and one that rolls back.
  await db.transaction(async (tx) => {
    await tx.prepare('INSERT INTO t(i, s) VALUES (?, ?)').run(2000, 'tx');
    await tx.prepare('UPDATE t SET s = ? WHERE i = ?').run('updated', 1);
  });
  seen.rolledBack = await rejection(
    db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO t(i, s) VALUES (?, ?)').run(3000, 'gone');
      throw new Error('abandon');
    }),
  );
  seen.afterTransactions = await db.prepare('SELECT i, s FROM t WHERE i IN (1, 2000, 3000) ORDER BY i').all();

  // One snapshot for several reads.
  seen.read = await db.read(async (r) => {
    const before = await r.prepare('SELECT count(*) AS c FROM t').get();
    const rows = await r.prepare('SELECT max(i) AS m FROM t').get();
    return { before, rows };
  });

  // Errors with their codes.
  seen.unique = await rejection(ins.run(1, 0, 'dup', null, null));
  seen.syntax = await rejection(db.exec('SELEKT 1'));
  seen.unsafe = await rejection(db.prepare('SELECT 9007199254740993 AS x').get());

  // A running call cancelled.
  const controller = new AbortController();
  const slow = db
    .prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c')
    .withOptions({ signal: controller.signal })
    .get();
  setTimeout(() => controller.abort(), 50);
  // It rejects with the signal's reason, whose message is the runtime's.
  const reason = await slow.then(() => null, (err) => err);
  seen.cancelled = { name: reason.name, code: reason.code, isTheReason: reason === controller.signal.reason };
  seen.afterCancel = await db.prepare('SELECT count(*) AS c FROM t').get();

  // A worker, and the main thread at the same time.
  const [fromWorker, fromMain] = await Promise.all([
    worker(entry, path.join(dir, 'worker.db')),
    inWorker(Database, path.join(dir, 'main-too.db')),
  ]);
  seen.worker = fromWorker;
  seen.mainWithWorker = fromMain;

  // A folder replica, and a restore from it.
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const source = await Database.open(path.join(dir, 'source.db'), { replica: { url } });
  await source.exec('CREATE TABLE r(id INTEGER PRIMARY KEY, v TEXT)');
  const put = source.prepare('INSERT INTO r(v) VALUES (?)');
  await Promise.all(Array.from({ length: 50 }, (_, k) => put.run(`replicated ${k}`)));
  const synced = await source.syncReplica();
  await source.close();
  const copy = path.join(dir, 'copy.db');
  const restored = await Database.restore(url, copy);
  seen.restoredTxid = restored.txid === synced.txid;
  const check = await Database.open(copy, { readOnly: true });
  seen.restored = await check.prepare('SELECT id, v FROM r ORDER BY id').all();
  await check.close();

  // Close, and a call after it.
  await db.close();
  seen.isOpen = db.isOpen;
  seen.afterClose = await rejection((async () => db.prepare('SELECT 1').get())());
  return encode(seen);
}

if (isMainThread) {
  const [entry, dir] = process.argv.slice(-2);
  main(entry, dir).then(
    (seen) => console.log(JSON.stringify(seen)),
    (err) => {
      console.error(err && err.stack);
      process.exitCode = 1;
    },
  );
} else {
  const { Database } = require(workerData.entry);
  inWorker(Database, workerData.file).then(
    (result) => parentPort.postMessage({ result }),
    (err) => parentPort.postMessage({ error: String(err && err.stack) }),
  );
}
