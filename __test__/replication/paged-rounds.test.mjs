// The round trips a paged open makes one after another (`restore: 'paged'`
// with `replica`, which takes the replica's lease, and a paged follower):
// counted through a link (bench/lib/link.mjs) that logs every request and
// groups them by which answers each one came after (`rounds`), so the count
// is of requests that waited for others, not of milliseconds. Also the
// lease's safety beside the restore's reads: a lease held by another writer
// fails the open before anything is written, and no write is acknowledged
// before the lease is held. The replica lives in moto on loopback.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { rounds, startLink } from '../../bench/lib/link.mjs';
import { Database, S3_KEYS, skipWithout, s3ForFile, tempDir, waitFor } from './helpers.mjs';

const skip = skipWithout('s3_test_server');
// No compaction while a test counts: it would read the replica back.
const QUIET = { compactionIntervals: [3_600_000] };
// Long next to the client's own work between two requests, so that
// requests sent together are never taken for requests sent in turn.
const LATENCY_MS = 100;
const ROWS = 30_000;
// moto refuses anonymous requests but checks no signature.
const AUTH = `AWS4-HMAC-SHA256 Credential=${S3_KEYS.accessKeyId}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0`;

// The source database of each replica, by prefix.
const sources = new Map();

const s3 = s3ForFile(skip, async () => {
  for (const prefix of ['writer-rounds', 'held', 'write-waits', 'follower-rounds', 'moved']) sources.set(prefix, await makeSource(prefix));
});

function replica(prefix, endpoint, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', ...S3_KEYS, ...QUIET, ...extra };
}

/** A replica of `ROWS` rows of 300 random bytes with an index (about 12 MiB), its writer closed; returns the writer's path. */
async function makeSource(prefix) {
  const file = path.join(tempDir(), 'source.db');
  const db = await Database.open(file, { replica: replica(prefix, s3.endpoint) });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB, k INTEGER)');
  await db.exec('CREATE INDEX t_k ON t(k)');
  await db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO t SELECT i, randomblob(300), (i * 7919) % 1000 FROM n`,
  ).run(ROWS);
  await db.syncReplica();
  await db.close();
  return file;
}

/** What a request to the S3 server was, in a few words. */
function describe(r) {
  const list = /[?&]list-type=2&prefix=[^/&]*%2F([0-9a-f]{4})|[?&]prefix=[^/&]*\/([0-9a-f]{4})/.exec(r.url);
  if (list !== null) return `list L${Number.parseInt(list[1] ?? list[2], 16)}`;
  if (/[?&]list-type=/.test(r.url)) return 'list';
  const name = r.url.split('?')[0].split('/').pop();
  const range = r.range === null ? '' : ` ${r.range.replace('bytes=', '')}`;
  return `${r.method} ${name}${range}`;
}

/** The rounds of `requests` as text: one line a round. */
function show(byRound) {
  return byRound.map((round, i) => `round ${i + 1}: ${round.map(describe).join(', ')}`).join('\n');
}

/** Writes a lease into the replica that another writer holds for a minute. */
async function holdLease(prefix, owner) {
  const expires = new Date(Date.now() + 60_000).toISOString();
  const res = await fetch(`${s3.endpoint}/replica/${prefix}/lock.json`, {
    method: 'PUT',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ generation: 7, expires_at: expires, owner }),
  });
  assert.equal(res.status, 200, await res.text());
}

async function dropLease(prefix) {
  const res = await fetch(`${s3.endpoint}/replica/${prefix}/lock.json`, { method: 'DELETE', headers: { authorization: AUTH } });
  assert.ok(res.status === 204 || res.status === 200, `${res.status}`);
}

test('a paged open that takes the lease makes three rounds: the lease, its write and its listing, with the restore beside them', { skip }, async (t) => {
  const link = await startLink({ target: s3.endpoint, latencyMs: LATENCY_MS, bytesPerSecond: 1e12 });
  try {
    const file = path.join(tempDir(), 'app.db');
    const db = await Database.open(file, { replica: replica('writer-rounds', link.url), restore: 'paged' });
    const atOpen = rounds(link.requests());
    t.diagnostic(`before the open resolved:\n${show(atOpen)}`);
    assert.ok(db.stats().replica.leaseHolder, 'the lease is held once the open resolves');
    const kinds = atOpen.flat().map(describe);
    assert.equal(kinds.filter((k) => k === 'GET lock.json').length, 1, 'one read of the lease');
    assert.equal(kinds.filter((k) => k === 'PUT lock.json').length, 1, 'one conditional write of the lease');
    // One listing of every level (one LIST of the replica's prefix) for
    // the restore's plan, and one under the lease, which the replicator's
    // first contact uses instead of listing again.
    assert.equal(kinds.filter((k) => k.startsWith('list')).length, 2, 'two listings of every level');
    // The lease's read, its write and its listing, one after another; the
    // restore's listings beside the first, and its reads beside the second:
    // each file's end (its page index, which fits in that read here) and
    // the snapshot's first bytes, its header and first pages, so that
    // SQLite reads page 1 and those after it without a round of its own.
    // The first contact reads nothing more: no file waits to be uploaded,
    // so the newest file's header is not needed.
    assert.ok(atOpen.length <= 3, `${atOpen.length} rounds one after another:\n${show(atOpen)}`);
    const restoreReads = atOpen.map((round) => round.map(describe).filter((k) => k.startsWith('GET 0')).length);
    assert.ok(restoreReads.slice(2).every((n) => n === 0), `the restore reads nothing after the second round:\n${show(atOpen)}`);
    assert.equal(kinds.filter((k) => / 0-\d+$/.test(k)).length, 1, "one read of the snapshot's first bytes, the restore's");
    await db.filled;
    await db.close();
  } finally {
    await link.close();
  }
});

test('a lease held by another writer fails the paged open before it writes anything', { skip }, async () => {
  const prefix = 'held';
  await holdLease(prefix, 'elsewhere:offloop-0123456789abcdef');
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 1e12 });
  const dir = tempDir();
  const file = path.join(dir, 'app.db');
  try {
    await assert.rejects(Database.open(file, { replica: replica(prefix, link.url), restore: 'paged' }), (err) => {
      assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
      assert.match(err.message, /elsewhere:offloop-0123456789abcdef/);
      return true;
    });
    for (const left of ['app.db', 'app.db-paged', 'app.db-wal', 'app.db-replica']) assert.ok(!fs.existsSync(path.join(dir, left)), `${left} was left behind`);
    // Nothing goes on reading the replica for a database that did not open.
    const after = link.counters().requests;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(link.counters().requests, after, 'no request after the open failed');
    // Once the lease is free, the same path opens and fills.
    await dropLease(prefix);
    const db = await Database.open(file, { replica: replica(prefix, link.url), restore: 'paged' });
    await db.filled;
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, ROWS);
    await db.close();
  } finally {
    await link.close();
  }
});

test('a paged open that fails after the lease was taken gives the lease back', { skip }, async () => {
  // Nothing was ever replicated under this prefix: the restore finds no
  // file, while the lease beside it was taken.
  const prefix = 'never-written';
  const file = path.join(tempDir(), 'app.db');
  await assert.rejects(Database.open(file, { replica: replica(prefix, s3.endpoint), restore: 'paged' }), (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
    assert.match(err.message, /no LTX files/);
    return true;
  });
  await waitFor('the lease given back', async () => {
    const res = await fetch(`${s3.endpoint}/replica/${prefix}/lock.json`, { headers: { authorization: AUTH } });
    // Released: replaced by one that expired at the Unix epoch.
    if (res.status !== 200) return false;
    return Date.parse((await res.json()).expires_at) === 0;
  });
  assert.ok(!fs.existsSync(file));
});

test('a replica written between the restore\'s listing and the lease is restored at its newest TXID', { skip }, async () => {
  const prefix = 'moved';
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 1e12 });
  // The lease's write waits while another writer commits.
  link.hold((req) => req.method === 'PUT' && req.url.includes('lock.json'));
  try {
    const file = path.join(tempDir(), 'app.db');
    const opening = Database.open(file, { replica: replica(prefix, link.url), restore: 'paged' });
    await waitFor('the restore planned', () => link.requests().filter((r) => r.range !== null && r.done !== null).length >= 2);
    // A writer without a lease (a backup that ignores leases) writes one
    // more TXID meanwhile.
    const other = await Database.open(sources.get(prefix), { replica: replica(prefix, s3.endpoint, { lease: false }) });
    await other.prepare("INSERT INTO t(v, k) VALUES (x'01', -2)").run();
    const { txid } = await other.syncReplica();
    await other.close();
    link.release();
    const db = await opening;
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t WHERE k = -2').get()).n, 1, 'the newer TXID was restored');
    assert.equal(db.stats().replica.txid, txid);
    assert.equal(db.stats().replica.lastError, null);
    await db.filled;
    await db.close();
  } finally {
    await link.close();
  }
});

test('a write queued while the lease is being taken is acknowledged only once it is held', { skip }, async () => {
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 1e12 });
  link.hold((req) => req.url.includes('lock.json'));
  try {
    const file = path.join(tempDir(), 'app.db');
    const db = new Database(file, { replica: replica('write-waits', link.url), restore: 'paged' });
    let settled = false;
    const write = db
      .prepare('INSERT INTO t(v, k) VALUES (x\'00\', -1)')
      .run()
      .finally(() => {
        settled = true;
      });
    // The restore's own reads go on meanwhile: the listings and the page
    // indexes arrive while the lease's read is held.
    await waitFor('the page indexes read', () => link.requests().filter((r) => r.range !== null && r.done !== null).length >= 2);
    assert.equal(settled, false, 'no write acknowledged before the lease is held');
    link.release();
    const { changes } = await write;
    assert.equal(changes, 1);
    assert.ok(db.stats().replica.leaseHolder, 'the write came after the lease was taken');
    await db.filled;
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t WHERE k = -1').get()).n, 1);
    await db.close();
  } finally {
    await link.close();
  }
});

test("a paged follower's open makes two rounds, and its first check reads the next TXID's name instead of listing", { skip }, async (t) => {
  const link = await startLink({ target: s3.endpoint, latencyMs: LATENCY_MS, bytesPerSecond: 1e12 });
  try {
    const file = path.join(tempDir(), 'follower.db');
    const db = await Database.open(file, { follow: replica('follower-rounds', link.url, { pollInterval: 50 }), restore: 'paged' });
    const atOpen = rounds(link.requests());
    t.diagnostic(`before the open resolved:\n${show(atOpen)}`);
    // The listings, then each file's end and the snapshot's first bytes:
    // page 1 is local before SQLite reads it.
    assert.ok(atOpen.length <= 2, `${atOpen.length} rounds one after another:\n${show(atOpen)}`);
    await waitFor('the first check', () => db.stats().follow.lastCheckAt !== null);
    const { list, get } = db.stats().follow.requests;
    assert.equal(list, 0, 'the restore had just listed the replica: the first check lists nothing');
    assert.ok(get >= 1);
    await db.filled;
    await db.close();
  } finally {
    await link.close();
  }
});
