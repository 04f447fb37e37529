// User functions and aggregates: the same scenarios as node:sqlite (run
// side by side under Node 24), then what only offloop has to get right:
// SQLite threads call them concurrently, they reach every connection, and
// no call can leave a SQLite thread waiting for ever (close while calls
// are pending, a function that calls the database or closes it, a worker
// terminated in the middle of a call).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, readerExecuted, runChild, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const tmp = tempDir('functions');
after(() => tmp.cleanup());

let sideBySide = null;
let failure = null;
if (!skipWithoutNode24) {
  try {
    sideBySide = runUnderNode24('functions.cjs');
  } catch (err) {
    failure = err;
  }
}

test('node:sqlite parity: user functions and aggregates', { skip: skipWithoutNode24 }, async (t) => {
  assert.equal(failure, null);
  assert.ok(sideBySide.length >= 20);
  for (const r of sideBySide) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

async function openFile(options = { readers: 4 }) {
  return Database.open(tmp.file(), options);
}

test('64 calls of a function in flight on the readers each get their own result', async () => {
  const db = await openFile();
  try {
    db.function('mix', { deterministic: true }, (a, b) => `${a}:${b * 2}`);
    const stmt = db.prepare('SELECT mix(?, ?) AS r');
    await stmt.get(0, 0); // learns that the statement reads: it goes to the readers from now on
    const before = readerExecuted(db.stats());
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => stmt.get(`k${i}`, i)));
    results.forEach((row, i) => assert.equal(row.r, `k${i}:${i * 2}`));
    assert.equal(readerExecuted(db.stats()) - before, 64);
  } finally {
    await db.close();
  }
});

test('64 aggregate and window queries in flight on the readers each get their own result', async () => {
  const db = await openFile();
  try {
    await db.exec('CREATE TABLE n(g INTEGER, v INTEGER)');
    await db.batch(Array.from({ length: 200 }, (_, i) => ['INSERT INTO n VALUES (?, ?)', [i % 8, i]]));
    db.aggregate('total', { start: () => ({ sum: 0 }), step: (acc, v) => ((acc.sum += v), acc), result: (acc) => acc.sum });
    db.aggregate('moving', {
      start: 0,
      step: (acc, v) => acc + v,
      inverse: (acc, v) => acc - v,
    });
    const totals = db.prepare('SELECT total(v) AS s FROM n WHERE g = ?');
    const windows = db.prepare(
      'SELECT sum(m) AS s FROM (SELECT moving(v) OVER (ORDER BY v ROWS 2 PRECEDING) AS m FROM n WHERE g = ?)',
    );
    await totals.get(0);
    await windows.get(0);
    const expectedTotal = (g) => Array.from({ length: 25 }, (_, k) => g + 8 * k).reduce((a, b) => a + b, 0);
    const expectedWindow = (g) => {
      const v = Array.from({ length: 25 }, (_, k) => g + 8 * k);
      return v.reduce((sum, _, i) => sum + v.slice(Math.max(0, i - 2), i + 1).reduce((a, b) => a + b, 0), 0);
    };
    const calls = Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? totals.get(i % 8) : windows.get(i % 8)));
    const results = await Promise.all(calls);
    results.forEach((row, i) => assert.equal(row.s, i % 2 === 0 ? expectedTotal(i % 8) : expectedWindow(i % 8)));
  } finally {
    await db.close();
  }
});

/**
 * Runs `sql` once on each of the database's `readers` readers: as many read
 * snapshots at once as there are readers, each holding its reader until
 * all have run, so no two share one.
 */
async function onEveryReader(db, readers, sql) {
  let arrived = 0;
  let release;
  const all = new Promise((resolve) => (release = resolve));
  return Promise.all(
    Array.from({ length: readers }, () =>
      db.read(async (r) => {
        const row = await r.prepare(sql).get();
        if (++arrived === readers) release();
        await all;
        return row;
      }),
    ),
  );
}

test('a function defined before the connections open reaches every reader', async () => {
  const db = new Database(tmp.file(), { readers: 3 });
  db.function('early', () => 'yes');
  await db.ready;
  try {
    const rows = await onEveryReader(db, 3, 'SELECT early() AS r');
    assert.deepEqual(rows.map((row) => row.r), ['yes', 'yes', 'yes']);
    assert.deepEqual(db.stats().readers.map((r) => r.executed > 0), [true, true, true]);
  } finally {
    await db.close();
  }
});

test('a function defined while readers are open is in force for the next call on each of them', async () => {
  const db = await openFile({ readers: 2 });
  try {
    await onEveryReader(db, 2, 'SELECT 1');
    db.function('late', () => 'here');
    const rows = await onEveryReader(db, 2, 'SELECT late() AS r');
    assert.deepEqual(rows.map((row) => row.r), ['here', 'here']);
  } finally {
    await db.close();
  }
});

test('functions run inside transactions and batches on the writer', async () => {
  const db = await openFile();
  try {
    db.function('twice', (x) => x * 2);
    await db.exec('CREATE TABLE t(x)');
    await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO t VALUES (twice(?))').run(21);
      assert.equal((await tx.prepare('SELECT twice(x) AS r FROM t').get()).r, 84);
    });
    const [, rows] = await db.batch([['INSERT INTO t VALUES (twice(?))', [1]], ['SELECT x FROM t ORDER BY x']]);
    assert.deepEqual(rows.map((r) => r.x), [2, 42]);
  } finally {
    await db.close();
  }
});

test('close() with function calls pending lets every call finish, then closes', async () => {
  const db = await openFile();
  let calls = 0;
  db.function('count_call', (i) => {
    calls++;
    return i;
  });
  const stmt = db.prepare('SELECT count_call(?) AS r');
  await stmt.get(-1);
  const pending = Array.from({ length: 20 }, (_, i) => stmt.get(i));
  const closed = db.close();
  const results = await Promise.all(pending);
  await closed;
  results.forEach((row, i) => assert.equal(row.r, i));
  assert.equal(calls, 21);
});

test('a function that closes its own database gets its call answered and the close completes', async () => {
  const db = await openFile();
  let closing = null;
  db.function('close_db', () => {
    closing = db.close();
    return 'answered';
  });
  const row = await db.prepare('SELECT close_db() AS r').get();
  assert.equal(row.r, 'answered');
  await closing;
  assert.equal(db.isOpen, false);
});

test('a function that calls its own database only queues the call: nothing waits for it', async () => {
  const db = await openFile();
  try {
    let inner = null;
    db.function('reenter', () => {
      inner = db.prepare('SELECT 41 + 1 AS answer').get();
      return 1;
    });
    db.function('reenter_await', () => db.prepare('SELECT 1').get());
    assert.equal((await db.prepare('SELECT reenter() AS r').get()).r, 1);
    assert.equal((await inner).answer, 42);
    // Returning the Promise is refused, as node:sqlite refuses any Promise.
    await assert.rejects(db.prepare('SELECT reenter_await()').get(), {
      code: 'ERR_SQLITE_ERROR',
      message: 'Asynchronous user-defined functions are not supported',
    });
    // The same from inside a write on the writer, whose own queue gets the call.
    await db.exec('CREATE TABLE t(x)');
    await db.prepare('INSERT INTO t VALUES (reenter())').run();
    assert.equal((await inner).answer, 42);
  } finally {
    await db.close();
  }
});

/** Runs `body` in a worker of a child process; resolves to the child's result. */
function inWorkerChild(body, file) {
  const source = `
    const { Worker } = require('node:worker_threads');
    const FILE = ${JSON.stringify(file)};
    const worker = new Worker(${JSON.stringify(`
      const { parentPort, workerData } = require('node:worker_threads');
      const { Database } = require(workerData.offloop);
      const FILE = workerData.file;
    `)} + WORKER_BODY, { eval: true, workerData: { offloop: OFFLOOP, file: FILE } });
    worker.on('error', (e) => { console.error(e); process.exitCode = 1; });
  `;
  return runChild(tmp.dir, `const WORKER_BODY = ${JSON.stringify(body.worker)};\n${source}\n${body.main}`);
}

test('a database closed in a worker while calls are pending answers them and closes', async () => {
  const child = await inWorkerChild(
    {
      worker: `
        (async () => {
          const db = await Database.open(FILE, { readers: 2 });
          db.function('work', (i) => { let x = 0; for (let k = 0; k < 1e5; k++) x += k; return i; });
          const stmt = db.prepare('SELECT work(?) AS r');
          await stmt.get(0);
          const calls = Array.from({ length: 8 }, (_, i) => stmt.get(i));
          const closed = db.close();
          const rows = await Promise.all(calls);
          await closed;
          parentPort.postMessage(rows.map((r) => r.r).join(','));
        })();
      `,
      main: `worker.on('message', (m) => console.log(m));`,
    },
    tmp.file(),
  );
  assert.equal(child.signal, null, 'the child did not hang');
  assert.equal(child.code, 0, child.stderr);
  assert.equal(child.stdout.trim(), '0,1,2,3,4,5,6,7');
});

test('a worker terminated while its function runs inside a write frees the writer', async () => {
  const file = tmp.file();
  // The worker's function never returns: it tells the main thread it is
  // running (the writer is then inside the INSERT, holding the write
  // lock) and spins. Terminating the worker must wake that SQLite thread,
  // which rolls the INSERT back and releases the lock: the main thread
  // then writes to the same file.
  const child = await inWorkerChild(
    {
      worker: `
        (async () => {
          const db = await Database.open(FILE, { readers: 1 });
          await db.exec('CREATE TABLE t(x)');
          db.function('spin', () => { parentPort.postMessage('running'); for (;;) {} });
          db.prepare('INSERT INTO t VALUES (spin())').run().catch(() => {});
        })();
      `,
      main: `
        const { Database } = require(OFFLOOP);
        worker.on('message', async () => {
          await worker.terminate();
          const db = await Database.open(FILE, { readers: 1, timeout: 20000 });
          await db.prepare('INSERT INTO t VALUES (1)').run();
          const rows = await db.prepare('SELECT x FROM t').all();
          await db.close();
          console.log(JSON.stringify(rows.map((r) => r.x)));
        });
      `,
    },
    file,
  );
  assert.equal(child.signal, null, 'the child did not hang');
  assert.equal(child.code, 0, child.stderr);
  assert.equal(child.stdout.trim(), '[1]');
});
