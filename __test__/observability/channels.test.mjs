// The `offloop:<operation>` tracing channels: the context each call
// publishes, the order of its events, `start` in the caller's async
// context, and a subscriber that throws leaving every call's result as it
// was.

import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('channels');
after(() => tmp.cleanup());

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];

/** Subscribes to `offloop:<operation>`; `events` lists `[event, ctx]` in order. */
function record(operation) {
  const channel = diagnosticsChannel.tracingChannel(`offloop:${operation}`);
  const events = [];
  const handlers = {};
  for (const event of EVENTS) handlers[event] = (ctx) => events.push([event, ctx]);
  channel.subscribe(handlers);
  return { events, stop: () => channel.unsubscribe(handlers) };
}

const names = (events) => events.map(([event]) => event);

test('get, all, run, iterate and query publish on offloop:query with the source text, method, absolute path, rows and changes', async () => {
  const file = tmp.file();
  const relative = path.relative(process.cwd(), file);
  const db = await Database.open(relative);
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  const { events, stop } = record('query');
  try {
    const insert = db.prepare('INSERT INTO t(v) VALUES (?); SELECT 1');
    assert.deepEqual(await insert.run('a'), { changes: 1, lastInsertRowid: 1 });
    await insert.run('b');
    const one = await db.prepare('SELECT v FROM t WHERE id = ?').get(2);
    assert.equal(one.v, 'b');
    assert.equal((await db.prepare('SELECT * FROM t').all()).length, 2);
    const queried = await db.prepare('SELECT v FROM t ORDER BY id').query();
    assert.equal(queried.rows.length, 2);
    const iterated = [];
    for await (const row of db.prepare('SELECT v FROM t').iterate()) iterated.push(row.v);
    assert.deepEqual(iterated, ['a', 'b']);
  } finally {
    stop();
  }
  const starts = events.filter(([event]) => event === 'start').map(([, ctx]) => ctx);
  assert.deepEqual(
    starts.map((ctx) => ctx.method),
    ['run', 'run', 'get', 'all', 'query', 'iterate'],
  );
  for (const ctx of starts) {
    assert.equal(ctx.database, file, 'the database is the absolute path');
    assert.equal(ctx.parent, null);
  }
  assert.equal(starts[0].sql, 'INSERT INTO t(v) VALUES (?);', 'the source text, without the values');
  assert.deepEqual(starts[1].parameters, ['b']);
  assert.equal(starts[0].changes, 1);
  assert.equal(starts[2].rows, 1);
  assert.equal(starts[3].rows, 2);
  assert.equal(starts[4].rows, 2);
  assert.equal(starts[4].changes, 0);
  assert.equal(starts[2].result.v, 'b', 'the value the call resolved to');
  // The thread that ran each call, its wait in the queue and its run (ms).
  for (const ctx of starts) {
    assert.match(ctx.thread, /^offloop-(writer|reader-\d+)$/);
    assert.ok(ctx.queueWait >= 0 && ctx.runTime >= 0, `${ctx.queueWait} ${ctx.runTime}`);
  }
  assert.equal(starts[0].thread, 'offloop-writer');
  // Each call: start, end, asyncStart, asyncEnd, one after the other.
  assert.deepEqual(names(events), starts.flatMap(() => ['start', 'end', 'asyncStart', 'asyncEnd']));
  await db.close();
});

test('a read runs on a reader once its SQL is known to be read-only, and its context names that reader', async () => {
  const db = await Database.open(tmp.file());
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
  const read = db.prepare('SELECT count(*) AS n FROM t');
  // Its first run classifies it (on the writer, where unknown SQL goes).
  await read.get();
  const { events, stop } = record('query');
  try {
    await Promise.all(Array.from({ length: 20 }, () => read.get()));
  } finally {
    stop();
  }
  const ran = events.filter(([event]) => event === 'asyncEnd').map(([, ctx]) => ctx);
  assert.equal(ran.length, 20);
  for (const ctx of ran) assert.match(ctx.thread, /^offloop-reader-\d+$/);
  await db.close();
});

test('a failed query publishes error with ctx.error, then asyncStart and asyncEnd; the caller gets the same error', async () => {
  const db = await Database.open(tmp.file());
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
  const { events, stop } = record('query');
  let caught;
  try {
    await db.prepare('INSERT INTO t(id) VALUES (?)').run(1);
    await db.prepare('INSERT INTO t(id) VALUES (?)').run(1);
  } catch (err) {
    caught = err;
  } finally {
    stop();
  }
  assert.equal(caught.sqliteCode, 'SQLITE_CONSTRAINT_PRIMARYKEY');
  assert.deepEqual(names(events).slice(4), ['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
  assert.equal(events[6][1].error, caught);
  await db.close();
});

test('a call refused before it is queued (a bad argument) publishes error, then end, and throws as before', async () => {
  const db = await Database.open(tmp.file());
  const { events, stop } = record('query');
  try {
    assert.throws(() => db.prepare('SELECT ?').get(undefined), { code: 'ERR_INVALID_ARG_TYPE' });
  } finally {
    stop();
  }
  assert.deepEqual(names(events), ['start', 'error', 'end']);
  assert.equal(events[1][1].error.code, 'ERR_INVALID_ARG_TYPE');
  await db.close();
});

test("start is published in the caller's async context, so a bound store sees the caller's value", async () => {
  const db = await Database.open(tmp.file());
  const request = new AsyncLocalStorage();
  const seen = [];
  const channel = diagnosticsChannel.tracingChannel('offloop:query');
  const onStart = () => seen.push(request.getStore());
  channel.start.subscribe(onStart);
  try {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request.run(`request ${i}`, async () => {
          await new Promise((resolve) => setImmediate(resolve));
          await db.prepare('SELECT ? AS i').get(i);
          await db.read((r) => r.prepare('SELECT 1').get());
          await db.transaction((tx) => tx.prepare('SELECT 2').get());
        }),
      ),
    );
  } finally {
    channel.start.unsubscribe(onStart);
  }
  assert.equal(seen.length, 150);
  for (let i = 0; i < 50; i++) assert.equal(seen.filter((s) => s === `request ${i}`).length, 3);
  await db.close();
});

test('exec, transaction, begin, batch, read, checkpoint and open publish on their own channels; a statement in a transaction or read names it as its parent', async () => {
  const file = tmp.file();
  const recorders = Object.fromEntries(
    ['exec', 'transaction', 'batch', 'read', 'checkpoint', 'open', 'query'].map((op) => [op, record(op)]),
  );
  try {
    const db = await Database.open(file);
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO t(v) VALUES (?)').run('x');
      await tx.exec("INSERT INTO t(v) VALUES ('y')");
    });
    const tx = await db.begin({ mode: 'deferred' });
    await tx.prepare('INSERT INTO t(v) VALUES (?)').run('z');
    await tx.commit();
    const results = await db.batch([['INSERT INTO t(v) VALUES (?)', ['w']], 'SELECT count(*) AS n FROM t']);
    assert.equal(results[1][0].n, 4);
    await db.read(async (r) => {
      assert.equal((await r.prepare('SELECT count(*) AS n FROM t').get()).n, 4);
    });
    await db.checkpoint('TRUNCATE');
    await db.close();
  } finally {
    for (const r of Object.values(recorders)) r.stop();
  }
  const startOf = (op) => recorders[op].events.filter(([e]) => e === 'start').map(([, ctx]) => ctx);
  assert.deepEqual(names(recorders.open.events), ['start', 'end', 'asyncStart', 'asyncEnd']);
  assert.equal(startOf('open')[0].database, file);
  assert.deepEqual(
    startOf('exec').map((ctx) => ctx.sql),
    ['CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)', "INSERT INTO t(v) VALUES ('y')"],
  );
  const [wrapped, begun] = startOf('transaction');
  assert.equal(wrapped.method, 'transaction');
  assert.equal(wrapped.mode, 'immediate');
  assert.equal(begun.method, 'begin');
  assert.equal(begun.mode, 'deferred');
  assert.equal(begun.transaction, tx_of(begun));
  // begin()'s trace lasts until its caller commits.
  assert.deepEqual(names(recorders.transaction.events), [
    'start', 'end', 'asyncStart', 'asyncEnd',
    'start', 'end', 'asyncStart', 'asyncEnd',
  ]);
  assert.equal(startOf('exec')[1].parent, wrapped);
  const queries = startOf('query');
  assert.equal(queries[0].parent, wrapped);
  assert.equal(queries[1].parent, begun);
  const [read] = startOf('read');
  assert.equal(queries.at(-1).parent, read);
  assert.equal(read.transaction.constructor.name, 'ReadSnapshot');
  assert.equal(startOf('batch')[0].statements, 2);
  const [checkpoint] = startOf('checkpoint');
  assert.equal(checkpoint.mode, 'TRUNCATE');
  assert.equal(typeof checkpoint.result.logFrames, 'number');
});

function tx_of(ctx) {
  assert.equal(ctx.transaction.constructor.name, 'Transaction');
  return ctx.transaction;
}

test('with no subscriber, a call publishes nothing and resolves as before', async () => {
  const db = await Database.open(tmp.file());
  const seen = [];
  const listen = (message, name) => seen.push(name);
  const channel = diagnosticsChannel.tracingChannel('offloop:query');
  channel.subscribe({ start: listen });
  channel.unsubscribe({ start: listen });
  assert.equal(channel.hasSubscribers, false);
  assert.equal((await db.prepare('SELECT 1 AS one').get()).one, 1);
  assert.deepEqual(seen, []);
  await db.close();
});

test('a subscriber that throws on every event leaves each call its result; Node reports each throw as an uncaught exception', async () => {
  // In a child: Node reports a subscriber's throw as an uncaught exception,
  // which the test runner here would count as a failure.
  const out = await runChild(
    tmp.dir,
    `
      const diagnosticsChannel = require('node:diagnostics_channel');
      const { Database } = require(OFFLOOP);
      let thrown = 0;
      process.on('uncaughtException', (err) => {
        if (err.message !== 'subscriber failed') throw err;
        thrown += 1;
      });
      const boom = () => {
        throw new Error('subscriber failed');
      };
      const handlers = { start: boom, end: boom, asyncStart: boom, asyncEnd: boom, error: boom };
      for (const op of ['query', 'exec', 'transaction', 'open']) diagnosticsChannel.tracingChannel('offloop:' + op).subscribe(handlers);
      (async () => {
        const db = await Database.open(':memory:');
        await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => db.prepare('INSERT INTO t(id) VALUES (?)').run(i + 1)));
        const failed = await db.prepare('INSERT INTO t(id) VALUES (1)').run().catch((err) => err.sqliteCode);
        const n = await db.transaction((tx) => tx.prepare('SELECT count(*) AS n FROM t').get());
        await new Promise((resolve) => setImmediate(resolve));
        console.log(JSON.stringify({ ids: results.map((r) => r.lastInsertRowid), failed, n: n.n, thrown }));
        await db.close();
      })();
    `,
  );
  assert.equal(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout.trim().split('\n').at(-1));
  assert.deepEqual(result.ids, Array.from({ length: 20 }, (_, i) => i + 1));
  assert.equal(result.failed, 'SQLITE_CONSTRAINT_PRIMARYKEY');
  assert.equal(result.n, 20);
  // open, exec: 4 events; 20 runs: 4 each; the failed run: 5; the
  // transaction and its get: 4 each.
  assert.equal(result.thrown, 4 + 4 + 20 * 4 + 5 + 4 + 4);
});
