// offloop/metrics on a real prom-client Registry, scraped over HTTP on
// 127.0.0.1 and read back from Prometheus's text format: calls by method,
// outcome and thread role; the stats read on a scrape (threads,
// connections, checkpoints, WAL, replica, follower); per-database series
// only for the databases listed, so many databases make no more series.

import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';

import client from 'prom-client';

import { Database, ROOT, tempDir, until } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const { register } = require(path.join(ROOT, 'adapters/metrics/index.js'));

const tmp = tempDir('metrics');
after(() => tmp.cleanup());

/** Serves `registry` on 127.0.0.1; `scrape()` fetches and parses it. */
async function exposition(registry) {
  const server = http.createServer(async (req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    scrape: () =>
      new Promise((resolve, reject) => {
        http.get(`http://127.0.0.1:${port}/metrics`, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(parse(body, res.headers['content-type'])));
        }).on('error', reject);
      }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Prometheus's text format (0.0.4): `{ types: {name: type}, samples: [{ name,
 * labels, value }] }`. Label values are unescaped (\\, \", \n).
 */
function parse(text, contentType) {
  assert.match(contentType, /^text\/plain; version=0\.0\.4/);
  const types = {};
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const typeLine = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (typeLine !== null) {
      types[typeLine[1]] = typeLine[2];
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const labels = {};
    const pairs = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
    for (const [, key, value] of (m[2] ?? '').matchAll(pairs)) {
      labels[key] = value.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The samples of `name` whose labels include `labels`. */
function pick(scraped, name, labels = {}) {
  return scraped.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/** The one sample of `name` with `labels`; without `db` among them, the one without `db`. */
function value(scraped, name, labels) {
  const found = pick(scraped, name, { db: undefined, ...labels });
  assert.equal(found.length, 1, `one ${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
  return found[0].value;
}

test('calls are counted by method, outcome and thread role; queue wait and run time are histograms; listed databases get series of their own', async () => {
  const registry = new client.Registry();
  const listedFile = tmp.file('listed');
  const unregister = register(registry, { databases: [listedFile] });
  const server = await exposition(registry);
  const listed = await Database.open(listedFile);
  const others = await Promise.all(Array.from({ length: 8 }, () => Database.open(tmp.file('tenant'))));
  try {
    for (const db of [listed, ...others]) {
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
      await Promise.all(Array.from({ length: 10 }, (_, i) => db.prepare('INSERT INTO t(id) VALUES (?)').run(i + 1)));
      // The first get classifies its SQL (on the writer); the others run on readers.
      await db.prepare('SELECT * FROM t WHERE id = ?').get(1);
      await Promise.all(Array.from({ length: 5 }, (_, i) => db.prepare('SELECT * FROM t WHERE id = ?').get(i + 1)));
      await db.prepare('INSERT INTO t(id) VALUES (1)').run().catch(() => {});
    }
    // A checkpoint pass reads the WAL's size (the gauge is the size at the last pass).
    await listed.checkpoint();
    const scraped = await server.scrape();
    assert.equal(scraped.types.offloop_calls_total, 'counter');
    assert.equal(scraped.types.offloop_queue_wait_seconds, 'histogram');
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'run', outcome: 'ok', role: 'writer', db: listedFile }), 10);
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'get', outcome: 'ok', role: 'reader', db: listedFile }), 5);
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'get', outcome: 'ok', role: 'writer', db: listedFile }), 1);
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'run', outcome: 'error', role: 'writer', db: listedFile }), 1);
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'exec', outcome: 'ok', role: 'none', db: listedFile }), 1);
    // The eight others share one series per label set: no `db` label.
    const shared = pick(scraped, 'offloop_calls_total').filter((s) => s.labels.db === undefined);
    const get = shared.find((s) => s.labels.method === 'get' && s.labels.role === 'reader');
    assert.deepEqual(get, { name: 'offloop_calls_total', labels: { method: 'get', outcome: 'ok', role: 'reader' }, value: 40 });
    assert.equal(new Set(pick(scraped, 'offloop_calls_total').map((s) => s.labels.db)).size, 2, 'the listed path and none');
    // Every statement's wait and run are observed, by thread role.
    assert.equal(value(scraped, 'offloop_queue_wait_seconds_count', { role: 'reader', db: listedFile }), 5);
    assert.equal(value(scraped, 'offloop_run_seconds_count', { role: 'writer', db: listedFile }), 12);
    assert.equal(value(scraped, 'offloop_queue_wait_seconds_count', { role: 'writer' }), 8 * 12);
    assert.equal(value(scraped, 'offloop_call_duration_seconds_count', { method: 'get' }), 8 * 6);
    // Read on the scrape: every open database, and the listed one alone.
    assert.equal(value(scraped, 'offloop_open_databases', {}), 8);
    assert.equal(value(scraped, 'offloop_open_databases', { db: listedFile }), 1);
    const readers = listed.stats().readers.length;
    assert.equal(value(scraped, 'offloop_connections', { role: 'reader', db: listedFile }), readers);
    // The process's pool runs every database: its threads, not one set per database.
    const sqlThreads = value(scraped, 'offloop_threads', { role: 'sql' });
    assert.ok(sqlThreads >= 1 && sqlThreads <= Database.stats().threadLimit + 1, `${sqlThreads} SQLite threads`);
    assert.equal(pick(scraped, 'offloop_threads', { role: 'writer' }).length, 0);
    assert.ok(value(scraped, 'offloop_wal_bytes', { db: listedFile }) > 0);
    assert.ok(value(scraped, 'offloop_checkpoints_total', { db: listedFile }) >= 1);
    await Promise.all([listed, ...others].map((db) => db.close()));
    const closed = await server.scrape();
    assert.equal(pick(closed, 'offloop_open_databases').length, 0, 'closed databases leave the gauges');
    unregister();
    assert.deepEqual(registry.getMetricsAsArray(), [], 'unregister removes every metric');
    assert.equal((await registry.metrics()).trim(), '');
  } finally {
    await Promise.all([listed, ...others].map((db) => db.close()));
    await server.close();
  }
});

test('checkpoints, the replica (lag, lease state, failures) and a follower (staleness) are read on a scrape', async () => {
  const registry = new client.Registry();
  const writerFile = tmp.file('writer');
  const followerFile = tmp.file('follower');
  register(registry, { databases: [writerFile, followerFile] });
  const server = await exposition(registry);
  const url = pathToFileURL(path.join(tmp.dir, 'replica')).href;
  const writer = await Database.open(writerFile, { replica: { url, syncInterval: 10 } });
  let follower;
  try {
    await writer.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
    await writer.prepare('INSERT INTO t(id) VALUES (?)').run(1);
    await writer.syncReplica();
    await writer.checkpoint('TRUNCATE');
    follower = await Database.open(followerFile, { follow: { url, pollInterval: 10 } });
    await until(() => follower.stats().follow.txid > 0, 'the follower applied a file');
    const scraped = await server.scrape();
    // The checkpointer's passes: db.checkpoint() of a replicated database runs on the writer instead.
    assert.equal(typeof value(scraped, 'offloop_checkpoints_total', { db: writerFile }), 'number');
    assert.ok(value(scraped, 'offloop_wal_frames', { db: writerFile }) >= 0);
    assert.equal(value(scraped, 'offloop_checkpointer_failed', { db: writerFile }), 0);
    assert.equal(value(scraped, 'offloop_threads', { role: 'replicator', db: writerFile }), 1);
    assert.equal(value(scraped, 'offloop_replica_failing', { db: writerFile }), 0);
    assert.equal(value(scraped, 'offloop_replica_lease', { state: 'held', db: writerFile }), 1);
    assert.equal(typeof value(scraped, 'offloop_replica_lag_seconds', { db: writerFile }), 'number');
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'syncReplica', outcome: 'ok', role: 'none', db: writerFile }), 1);
    assert.equal(value(scraped, 'offloop_calls_total', { method: 'checkpoint', outcome: 'ok', role: 'none', db: writerFile }), 1);
    const staleness = value(scraped, 'offloop_follower_staleness_seconds', { db: followerFile });
    assert.ok(staleness >= 0 && staleness < 60, `staleness ${staleness}`);
    assert.equal(value(scraped, 'offloop_follower_failing', { db: followerFile }), 0);
  } finally {
    await follower?.close();
    await writer.close();
    await server.close();
  }
});

test('register() refuses what is not a registry, and database entries that are not paths', () => {
  assert.throws(() => register({}), TypeError);
  assert.throws(() => register(new client.Registry(), { databases: [42] }), TypeError);
});
