// offloop/otel with the real OpenTelemetry SDK (its in-memory exporter and
// the async-hooks context manager): an HTTP request's span is the parent of
// its queries' spans across awaits, transactions and db.read(), a query in
// a transaction is the transaction span's child, errors are recorded, and
// the function instrument() returns unsubscribes.

import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const { instrument } = require(path.join(ROOT, 'adapters/otel/index.js'));

const tmp = tempDir('otel');
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

before(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});

after(async () => {
  trace.disable();
  context.disable();
  tmp.cleanup();
});

const idOf = (span) => span.spanContext().spanId;
const parentOf = (span) => span.parentSpanContext?.spanId;

/** A server whose each request runs `handle(id)` inside a SERVER span named `request <id>`. */
async function serve(handle) {
  const tracer = trace.getTracer('test-server');
  const server = http.createServer((req, res) => {
    const id = new URL(req.url, 'http://x').searchParams.get('id');
    tracer.startActiveSpan(`request ${id}`, { kind: SpanKind.SERVER }, async (span) => {
      try {
        await handle(id);
        res.end('ok');
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      } finally {
        span.end();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    get: (id) =>
      new Promise((resolve, reject) => {
        http.get(`http://127.0.0.1:${port}/?id=${id}`, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        }).on('error', reject);
      }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test("each HTTP request's span is the parent of its queries across awaits, transactions and db.read(), with many requests at once", async () => {
  exporter.reset();
  const stop = instrument();
  const file = tmp.file();
  const db = await Database.open(file);
  await db.exec('CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)');
  const server = await serve(async (id) => {
    await new Promise((resolve) => setImmediate(resolve));
    await db.prepare('SELECT * FROM users WHERE id = ?').get(Number(id));
    await new Promise((resolve) => setTimeout(resolve, 1));
    await db.transaction(async (tx) => {
      await tx.prepare('INSERT INTO users(id, name) VALUES (?, ?)').run(Number(id), `user ${id}`);
      await new Promise((resolve) => setImmediate(resolve));
      await tx.prepare('UPDATE users SET name = ? WHERE id = ?').run(`user ${id}!`, Number(id));
    });
    await db.read(async (r) => {
      await r.prepare('SELECT name FROM users WHERE id = ?').get(Number(id));
      await r.prepare('SELECT count(*) AS n FROM users').all();
    });
    await db.prepare('SELECT name FROM users WHERE id = ?').all(Number(id));
  });
  const REQUESTS = 20;
  try {
    const responses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => server.get(i + 1)));
    for (const r of responses) assert.deepEqual(r, { status: 200, body: 'ok' });
  } finally {
    await server.close();
    stop();
    await db.close();
  }
  const spans = exporter.getFinishedSpans();
  for (let i = 1; i <= REQUESTS; i++) {
    const request = spans.find((s) => s.name === `request ${i}`);
    const children = spans.filter((s) => parentOf(s) === idOf(request));
    assert.deepEqual(
      children.map((s) => s.name),
      ['SELECT users', 'transaction', 'read', 'SELECT users'],
      `request ${i}'s own spans, in order`,
    );
    for (const s of children) {
      assert.equal(s.kind, SpanKind.CLIENT);
      assert.equal(s.spanContext().traceId, request.spanContext().traceId);
      assert.equal(s.attributes['db.system.name'], 'sqlite');
      assert.equal(s.attributes['db.namespace'], file);
    }
    const [, transaction, read] = children;
    assert.deepEqual(
      spans.filter((s) => parentOf(s) === idOf(transaction)).map((s) => s.name),
      ['INSERT users', 'UPDATE users'],
      'the statements of the transaction are its children',
    );
    const inRead = spans.filter((s) => parentOf(s) === idOf(read));
    assert.deepEqual(
      inRead.map((s) => s.name),
      ['SELECT users', 'SELECT users'],
    );
    assert.equal(inRead[0].attributes['db.query.text'], 'SELECT name FROM users WHERE id = ?');
    assert.equal(inRead[0].attributes['db.operation.name'], 'SELECT');
    assert.equal(inRead[0].attributes['db.collection.name'], 'users');
    assert.equal(inRead[0].attributes['db.response.returned_rows'], 1);
  }
});

test('a failed query is recorded: error status, error.type, the SQLite code and the exception; the caller still gets the error', async () => {
  exporter.reset();
  const stop = instrument({ tracerProvider: provider });
  const db = await Database.open(tmp.file());
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
  const tracer = provider.getTracer('test');
  let caught;
  await tracer.startActiveSpan('handler', async (span) => {
    await db.prepare('INSERT INTO t(id) VALUES (?)').run(1);
    caught = await db.prepare('INSERT INTO t(id) VALUES (?)').run(1).catch((err) => err);
    await db.transaction(async (tx) => {
      await tx.exec('INSERT INTO t(id) VALUES (1)');
    }).catch(() => {});
    span.end();
  });
  stop();
  await db.close();
  assert.equal(caught.sqliteCode, 'SQLITE_CONSTRAINT_PRIMARYKEY');
  const spans = exporter.getFinishedSpans();
  const failed = spans.filter((s) => s.status.code === SpanStatusCode.ERROR);
  assert.deepEqual(failed.map((s) => s.name), ['INSERT t', 'exec', 'transaction']);
  const [insert, exec] = failed;
  assert.equal(insert.attributes['error.type'], 'SQLITE_CONSTRAINT_PRIMARYKEY');
  assert.equal(insert.attributes['db.response.status_code'], String(caught.errcode));
  assert.equal(insert.status.message, caught.message);
  assert.equal(insert.events[0].name, 'exception');
  assert.equal(exec.attributes['db.query.text'], 'INSERT INTO t(id) VALUES (1)');
  assert.equal(parentOf(exec), idOf(failed[2]), 'the exec inside the transaction is its child');
});

test('parameter values are recorded only with parameters: true', async () => {
  const db = await Database.open(tmp.file());
  for (const parameters of [false, true]) {
    exporter.reset();
    const stop = instrument({ tracerProvider: provider, parameters });
    await db.prepare('SELECT ? AS a, $b AS b').get({ $b: 'secret' });
    await db.prepare('SELECT ? AS a').get(42);
    stop();
    const [named, positional] = exporter.getFinishedSpans();
    assert.equal(named.attributes['db.query.parameter.$b'], parameters ? 'secret' : undefined);
    assert.equal(positional.attributes['db.query.parameter.0'], parameters ? '42' : undefined);
  }
  await db.close();
});

test('the function instrument() returns unsubscribes: later calls make no span', async () => {
  exporter.reset();
  const db = await Database.open(tmp.file());
  const stop = instrument();
  await db.prepare('SELECT 1').get();
  stop();
  stop();
  await db.prepare('SELECT 2').get();
  await db.close();
  assert.deepEqual(
    exporter.getFinishedSpans().map((s) => s.attributes['db.query.text']),
    ['SELECT 1'],
  );
});

test('offloop/otel subscribes to every channel offloop publishes', () => {
  const { OPERATIONS } = require(path.join(ROOT, 'lib/tracing.js'));
  const spans = require(path.join(ROOT, 'adapters/otel/spans.js'));
  assert.deepEqual(spans.OPERATIONS, [...OPERATIONS]);
});
