// Keep-alive: a pending call keeps its JS environment (the process, or a
// worker thread) alive until it settles, and an open database with nothing
// pending keeps nothing alive, whatever the calls before left behind. Each
// case runs in a child process (or a worker in one), which must exit by
// itself with the expected output: a hang is killed and fails the test.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { COUNT_TO, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('keep-alive');
after(() => tmp.cleanup());

/** Runs `source` in a child; it must exit by itself, with code 0. */
async function exitsByItself(source) {
  const child = await runChild(tmp.dir, source, { killAfterMs: 30000 });
  assert.equal(child.signal, null, `the child did not exit by itself: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  return child.stdout;
}

test('main thread: a pending call alone keeps the process alive until it settles, then nothing does', async () => {
  const out = await exitsByItself(`
    const { Database } = require(OFFLOOP);
    Database.open(${JSON.stringify(tmp.file())}, { readers: 1 }).then((db) => {
      // Nothing else (no timer, no socket) holds the event loop.
      db.prepare(${JSON.stringify(COUNT_TO)}).get(2000000).then((r) => console.log('settled', r.n));
    });
    process.on('exit', () => console.log('exit'));
  `);
  assert.equal(out, 'settled 2000000\nexit\n');
});

test('main thread: 2,000 lone awaited calls in a row keep the process alive to the last one', async () => {
  const out = await exitsByItself(`
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 2 });
      await db.exec('CREATE TABLE t(x INTEGER)');
      const ins = db.prepare('INSERT INTO t VALUES (?)');
      const get = db.prepare('SELECT count(*) AS n FROM t');
      let n = 0;
      for (let i = 0; i < 1000; i++) {
        await ins.run(i);
        n = (await get.get()).n;
      }
      console.log('last', n);
    })();
    process.on('exit', () => console.log('exit'));
  `);
  assert.equal(out, 'last 1000\nexit\n');
});

test('main thread: an idle database keeps nothing alive after refused, aborted and timed-out calls and an unused read snapshot', async () => {
  const out = await exitsByItself(`
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 1 });
      await db.exec('CREATE TABLE t(x)');
      // Refused synchronously: nothing was queued.
      try { db.prepare('INSERT INTO t VALUES (?)').run(Symbol('s')); } catch (err) { console.log('refused', err.code); }
      // Aborted before it was sent, and aborted or timed out while running.
      const aborted = new AbortController();
      aborted.abort();
      await db.prepare(${JSON.stringify(COUNT_TO)}).withOptions({ signal: aborted.signal }).get(10).catch((e) => console.log('aborted', e.name));
      const running = new AbortController();
      const long = db.prepare(${JSON.stringify(COUNT_TO)}).withOptions({ signal: running.signal }).get(1e9);
      setTimeout(() => running.abort(), 20);
      await long.catch((e) => console.log('aborted while running', e.name));
      await db.prepare(${JSON.stringify(COUNT_TO)}).withOptions({ timeout: 20 }).get(1e9).catch((e) => console.log('timed out', e.name));
      // A read snapshot with no statement never reaches a thread.
      await db.read(async () => {});
      console.log('idle');
    })();
    process.on('exit', () => console.log('exit'));
  `);
  assert.equal(
    out,
    'refused ERR_INVALID_ARG_TYPE\naborted AbortError\naborted while running AbortError\ntimed out TimeoutError\nidle\nexit\n',
  );
});

/** Runs `body` (CommonJS, `Database` and `file` in scope) in a worker of a child process. */
function inWorker(body) {
  return exitsByItself(`
    const { Worker } = require('node:worker_threads');
    const source = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const { Database } = require(workerData.offloop);
      const file = workerData.file;
      const say = (m) => parentPort.postMessage(m);
      ${body.replaceAll('`', '\\`').replaceAll('$', '\\$')}
    \`;
    const worker = new Worker(source, { eval: true, workerData: { offloop: OFFLOOP, file: ${JSON.stringify(tmp.file())} } });
    worker.on('message', (m) => console.log(m));
    worker.on('error', (err) => { console.log('error', err.message); process.exitCode = 1; });
    worker.on('exit', (code) => console.log('worker exit', code));
  `);
}

test('worker: a pending call alone keeps the worker alive until it settles, then nothing does', async () => {
  const out = await inWorker(`
    Database.open(file, { readers: 1 }).then((db) => {
      db.prepare(${JSON.stringify(COUNT_TO)}).get(2000000).then((r) => say('settled ' + r.n));
    });
  `);
  assert.equal(out, 'settled 2000000\nworker exit 0\n');
});

test('worker: an idle open database keeps nothing alive after lone awaited calls and a refused one', async () => {
  const out = await inWorker(`
    (async () => {
      const db = await Database.open(file, { readers: 2 });
      await db.exec('CREATE TABLE t(x INTEGER)');
      const ins = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 500; i++) await ins.run(i);
      try { ins.run(Symbol('s')); } catch (err) { say('refused ' + err.code); }
      say('rows ' + (await db.prepare('SELECT count(*) AS n FROM t').get()).n);
    })();
  `);
  assert.equal(out, 'refused ERR_INVALID_ARG_TYPE\nrows 500\nworker exit 0\n');
});
