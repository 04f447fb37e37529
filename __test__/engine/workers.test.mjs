// worker_threads: each JS environment has its own completion queue, so the
// addon works in several workers at once and in the main thread, and a
// worker torn down with databases open and calls in flight takes nothing
// else with it.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { COUNT_TO, Database, ROOT, readerExecuted, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('workers');
after(() => tmp.cleanup());

/**
 * The workload every environment runs on its own database: concurrent
 * inserts, then reads on readers that must see them. Resolves to a summary
 * that is the same for every correct run.
 */
const WORKLOAD = `
async function workload(Database, file, tag) {
  const db = await Database.open(file, { readers: 2 });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, n INTEGER)');
  const ins = db.prepare('INSERT INTO t(tag, n) VALUES (?, ?)');
  const sum = db.prepare('SELECT count(*) AS c, sum(n) AS s FROM t WHERE tag = ?');
  const rows = db.prepare('SELECT n FROM t ORDER BY id');
  await sum.get(tag);
  await rows.all();
  const runs = await Promise.all(Array.from({ length: 500 }, (_, i) => ins.run(tag, i)));
  const ids = runs.map((r) => r.lastInsertRowid).join(',') === Array.from({ length: 500 }, (_, i) => i + 1).join(',');
  const before = db.stats().readers.reduce((s, r) => s + r.executed, 0);
  const reads = await Promise.all(Array.from({ length: 200 }, () => sum.get(tag)));
  let streamed = 0;
  for await (const row of rows.iterate()) if (row.n === streamed) streamed += 1;
  const onReaders = db.stats().readers.reduce((s, r) => s + r.executed, 0) - before;
  await db.close();
  return {
    ids,
    reads: reads.every((r) => r.c === 500 && r.s === 124750),
    streamed,
    readsOnReaders: onReaders >= 201,
  };
}
`;

const EXPECTED = { ids: true, reads: true, streamed: 500, readsOnReaders: true };

// eslint-disable-next-line no-new-func
const workload = new Function(`${WORKLOAD}; return workload;`)();

function workerSource(body) {
  return `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Database } = require(workerData.offloop);
    ${WORKLOAD}
    ${body}
  `;
}

function runWorker(source, workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData });
    let message;
    worker.on('message', (m) => (message = m));
    worker.on('error', reject);
    worker.on('exit', (code) => (code === 0 ? resolve(message) : reject(new Error(`worker exited with ${code}`))));
  });
}

test('the addon loads and works in four workers at once and in the main thread', async () => {
  const source = workerSource(`
    workload(Database, workerData.file, workerData.tag).then((r) => parentPort.postMessage(r));
  `);
  const offloop = `${ROOT}/index.js`;
  const results = await Promise.all([
    ...[1, 2, 3, 4].map((k) => runWorker(source, { offloop, file: tmp.file(`w${k}`), tag: `w${k}` })),
    workload(Database, tmp.file('main'), 'main'),
  ]);
  for (const r of results) assert.deepEqual(r, EXPECTED);
});

test('a worker exits by itself with an idle database still open', async () => {
  const source = workerSource(`
    (async () => {
      const db = await Database.open(workerData.file, { readers: 2 });
      await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
      const row = await db.prepare('SELECT x FROM t').get();
      parentPort.postMessage(row.x);
    })();
  `);
  assert.equal(await runWorker(source, { offloop: `${ROOT}/index.js`, file: tmp.file() }), 1);
  // The main thread's own queue is unaffected.
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    const sel = db.prepare('SELECT 5 AS v');
    await sel.get();
    const before = readerExecuted(db.stats());
    assert.equal((await sel.get()).v, 5);
    assert.equal(readerExecuted(db.stats()), before + 1);
  } finally {
    await db.close();
  }
});

test('terminating workers with open databases and calls in flight does not crash the process', async () => {
  // In a child process, so a crash shows as its exit status instead of
  // taking this test file down.
  const child = await runChild(
    tmp.dir,
    `
    const { Worker } = require('node:worker_threads');
    const path = require('node:path');
    const { Database } = require(OFFLOOP);
    const dir = ${JSON.stringify(tmp.dir)};
    const source = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const { Database } = require(workerData.offloop);
      (async () => {
        const dbs = [];
        for (let k = 0; k < 3; k++) {
          const db = await Database.open(workerData.file + '-' + k, { readers: 2 });
          await db.exec('CREATE TABLE IF NOT EXISTS t(x)');
          dbs.push(db);
        }
        const memory = await Database.open(':memory:');
        const long = dbs[0].prepare(${JSON.stringify(COUNT_TO)});
        await long.get(1);
        const scan = dbs[1].prepare(${JSON.stringify(COUNT_TO.replace('count(*) AS n', 'x'))});
        await scan.get(1);
        // An iterator holding a reader's cursor.
        const it = scan.iterate(1000000);
        await it.next();
        const inflight = [];
        for (let i = 0; i < 2000; i++) {
          inflight.push(dbs[i % 3].prepare('INSERT INTO t VALUES (?)').run(i));
          inflight.push(dbs[i % 3].prepare('SELECT count(*) FROM t').get());
          inflight.push(memory.prepare('SELECT ? AS v').get(i));
        }
        inflight.push(long.get(2000000));
        inflight.push(dbs[2].exec('CREATE TABLE IF NOT EXISTS u(x)'));
        for (const p of inflight) p.catch(() => {});
        parentPort.postMessage('busy');
        // Keep issuing work until terminated.
        for (;;) await dbs[2].prepare('SELECT count(*) FROM t').get();
      })();
    \`;
    async function round(k) {
      const worker = new Worker(source, { eval: true, workerData: { offloop: OFFLOOP, file: path.join(dir, 'term-' + k) } });
      await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      return worker.terminate();
    }
    (async () => {
      const main = await Database.open(path.join(dir, 'term-main.db'), { readers: 2 });
      await main.exec('CREATE TABLE t(x)');
      const ins = main.prepare('INSERT INTO t VALUES (?)');
      const codes = [];
      for (let r = 0; r < 2; r++) {
        const pending = Array.from({ length: 100 }, (_, i) => ins.run(i));
        codes.push(...(await Promise.all([round(3 * r), round(3 * r + 1), round(3 * r + 2)])));
        await Promise.all(pending);
      }
      const n = (await main.prepare('SELECT count(*) AS n FROM t').get()).n;
      await main.close();
      console.log(JSON.stringify({ codes, n }));
    })();
    `,
    { killAfterMs: 40000 },
  );
  assert.equal(child.signal, null, `child hung or crashed: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { codes: [1, 1, 1, 1, 1, 1], n: 200 });
});

test('workers terminated while the addon hands them completions exit cleanly, 20 in a row', async () => {
  // Each worker spends most of its time settling large batches of
  // completions (the addon's drain), so terminate() often lands there: the
  // drain must leave no exception pending for the teardown that follows.
  const child = await runChild(
    tmp.dir,
    `
    const { Worker } = require('node:worker_threads');
    const source = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const { Database } = require(workerData.offloop);
      (async () => {
        const db = await Database.open(':memory:');
        const get = db.prepare('SELECT ? AS v');
        parentPort.postMessage('busy');
        for (;;) await Promise.all(Array.from({ length: 2000 }, (_, i) => get.get(i)));
      })();
    \`;
    (async () => {
      const codes = [];
      for (let k = 0; k < 20; k++) {
        const worker = new Worker(source, { eval: true, workerData: { offloop: OFFLOOP } });
        await new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        await new Promise((resolve) => setTimeout(resolve, 5 + (k % 7)));
        codes.push(await worker.terminate());
      }
      console.log(JSON.stringify(codes));
    })();
    `,
    { killAfterMs: 40000 },
  );
  assert.equal(child.signal, null, `child hung or crashed: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), Array(20).fill(1));
});

test('a worker that loaded the addon first and exited leaves it working in the workers after it', async () => {
  // Here a worker, not the main thread, loads the addon, and exits; the
  // next worker is usually given the same thread block back (glibc reuses
  // thread stacks). Anything the addon (or an allocator linked into it)
  // keys to the thread that loaded it must survive that: mimalloc v3.3
  // took that thread for its main thread and crashed the next worker's
  // first allocation. The main thread of this child never loads the addon.
  const child = await runChild(
    tmp.dir,
    `
    const { Worker } = require('node:worker_threads');
    const source = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const { Database } = require(workerData.offloop);
      (async () => {
        const db = await Database.open(':memory:');
        const rows = await Promise.all(Array.from({ length: 100 }, (_, i) => db.prepare('SELECT ? AS v').get(i)));
        await db.close();
        parentPort.postMessage(rows.reduce((s, r) => s + r.v, 0));
      })();
    \`;
    (async () => {
      const sums = [];
      for (let k = 0; k < 8; k++) {
        const worker = new Worker(source, { eval: true, workerData: { offloop: OFFLOOP } });
        let sum;
        worker.on('message', (m) => (sum = m));
        const code = await new Promise((resolve, reject) => {
          worker.once('error', reject);
          worker.once('exit', resolve);
        });
        sums.push([code, sum]);
      }
      console.log(JSON.stringify(sums));
    })();
    `,
    { killAfterMs: 40000 },
  );
  assert.equal(child.signal, null, `child hung or crashed: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), Array(8).fill([0, 4950]));
});
