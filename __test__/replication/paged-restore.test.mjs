// The paged restore (`restore: 'paged'`): a database opened from its S3
// replica before it is downloaded. The replica lives in an S3 server
// (moto) this file starts on loopback; the database reads it through a
// link (bench/lib/link.mjs) that counts requests and bytes and can be
// slowed down, and, for the outage, through a relay the test takes down.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startLink } from '../../bench/lib/link.mjs';
import { Database, S3_KEYS, litestream, skipWithout, startRelay, s3ForFile, tempDir } from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const skip = skipWithout('litestream', 's3_test_server');
const KEYS_ENV = { AWS_ACCESS_KEY_ID: S3_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey };
// No compaction while a test counts: it would read the replica back.
const QUIET = { compactionIntervals: [3_600_000] };

// Replicas made once, by prefix: { rows, txid, bytes }.
const sources = new Map();

const s3 = s3ForFile(skip, async () => {
  await makeSource('small', 25_000);
  await makeSource('large', 100_000);
  // Tests that write to their replica have one each.
  await makeSource('written-after', 20_000);
  await makeSource('written-during', 20_000);
});

function replica(prefix, endpoint, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', ...S3_KEYS, ...QUIET, ...extra };
}

/**
 * A database of `rows` rows of 300 random bytes (about 400 bytes a row in
 * pages) with an index, written without replication, then replicated once:
 * its replica holds one snapshot, whose page index the open must read.
 */
async function makeSource(prefix, rows) {
  const dir = tempDir();
  const file = path.join(dir, 'source.db');
  const db = await Database.open(file);
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB, k INTEGER)');
  await db.exec('CREATE INDEX t_k ON t(k)');
  await db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO t SELECT i, randomblob(300), (i * 7919) % 1000 FROM n`,
  ).run(rows);
  await db.checkpoint('TRUNCATE');
  await db.close();
  const bytes = fs.statSync(file).size;
  const replicating = await Database.open(file, { replica: replica(prefix, s3.endpoint) });
  const { txid } = await replicating.syncReplica();
  await waitFor(async () => (await listReplica(prefix)).some((f) => f.level === 9));
  const expected = await digest(replicating);
  await replicating.close();
  sources.set(prefix, { rows, txid, bytes, expected });
}

/** The replica's LTX files, listed straight from the S3 server. */
async function listReplica(prefix) {
  const res = await fetch(`${s3.endpoint}/replica?list-type=2&prefix=${prefix}/`);
  const xml = await res.text();
  const files = [];
  for (const entry of xml.split('<Contents>').slice(1)) {
    const key = /<Key>([^<]*)<\/Key>/.exec(entry)?.[1];
    const name = /\/([0-9a-f]{4})\/([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/.exec(key ?? '');
    if (name === null) continue;
    const size = Number(/<Size>(\d+)<\/Size>/.exec(entry)[1]);
    const [level, minTxid, maxTxid] = name.slice(1).map((hex) => Number.parseInt(hex, 16));
    files.push({ key, level, minTxid, maxTxid, size });
  }
  return files;
}

/** Table t's rows, as a count and a hash of every column. */
async function digest(db) {
  const hash = createHash('sha256');
  let n = 0;
  for await (const r of db.prepare('SELECT id, v, k FROM t ORDER BY id').iterate()) {
    hash.update(`${r.id},${r.k},`);
    hash.update(r.v);
    n += 1;
  }
  return { n, sha: hash.digest('hex') };
}

/** The bytes an LTX file's page index takes, with its trailer: what `tail` covers. */
async function tailBytes(file) {
  const res = await fetch(`${s3.endpoint}/replica/${file.key}`, {
    headers: {
      range: `bytes=${file.size - 24}-${file.size - 17}`,
      // moto refuses anonymous reads of objects but checks no signature.
      authorization: `AWS4-HMAC-SHA256 Credential=${S3_KEYS.accessKeyId}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0`,
    },
  });
  const b = Buffer.from(await res.arrayBuffer());
  if (b.length !== 8) throw new Error(`${file.key}: ${res.status} ${b.length} bytes: ${b.subarray(0, 200)}`);
  return Number(b.readBigUInt64BE(0)) + 6 + 24;
}

/** Whether a request is one of the fill's large ranged reads (not the open's, nor a query's). */
function fillRead(req) {
  const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
  return range !== null && Number(range[2]) - Number(range[1]) + 1 > 256 * 1024;
}

async function waitFor(check, what = 'a condition', ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `litestream restore` of a replica into `out`. */
async function litestreamRestore(prefix, out) {
  await litestream(['restore', '-o', out, `s3://replica/${prefix}?endpoint=${s3.endpoint}&forcePathStyle=true`], KEYS_ENV);
}

test('open reads the plan, the page indexes and a few pages: not the database', { skip }, async (t) => {
  const read = {};
  for (const prefix of ['small', 'large']) {
    const link = await startLink({ target: s3.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
    try {
      const file = path.join(tempDir(), 'app.db');
      const db = await Database.open(file, { replica: replica(prefix, link.url), restore: 'paged' });
      // Read before anything else runs: the fill starts only after this.
      const atOpen = link.counters();
      const restore = db.stats().restore;
      const snapshot = (await listReplica(prefix)).find((f) => f.level === 9);
      read[prefix] = { bytes: atOpen.responseBytes, index: await tailBytes(snapshot), requests: atOpen.requests, restore };
      assert.equal(restore.filled, false);
      assert.ok(restore.pagesLocal < restore.pagesTotal / 20, `${restore.pagesLocal} of ${restore.pagesTotal} pages local at open`);
      await db.filled;
      await db.close();
    } finally {
      await link.close();
    }
  }
  const { small, large } = read;
  t.diagnostic(`bytes read before open: ${JSON.stringify(read)}`);
  const size = (p) => sources.get(p).bytes;
  assert.ok(large.index > small.index * 3, `the page index grows with the pages (${small.index} → ${large.index} bytes)`);
  const beyond = (r) => r.bytes - r.index;
  assert.ok(
    beyond(large) < 2 * beyond(small),
    `4× the data reads ${beyond(large)} bytes beyond the page index, against ${beyond(small)}`,
  );
  // Besides the plan and the indexes, the open reads the snapshot's first
  // 128 KiB on purpose: page 1 and the pages after it, which SQLite reads
  // next (crates/replica/src/paged.rs, FIRST_PAGES_BYTES).
  const firstPages = 128 << 10;
  for (const p of ['small', 'large']) {
    assert.ok(read[p].bytes - firstPages < 0.02 * size(p), `${read[p].bytes} bytes read before open, of a ${size(p)}-byte database`);
  }
});

test('a query is answered at once, and every page is the source page once filled', { skip }, async () => {
  const { expected, rows } = sources.get('small');
  const file = path.join(tempDir(), 'app.db');
  const db = await Database.open(file, { replica: replica('small', s3.endpoint), restore: 'paged' });
  const row = await db.prepare('SELECT length(v) AS n FROM t WHERE id = ?').get(rows - 3);
  assert.equal(row.n, 300);
  await db.filled;
  const stats = db.stats().restore;
  assert.equal(stats.filled, true);
  assert.equal(stats.pagesLocal, stats.pagesTotal);
  assert.ok(stats.requests > 0 && stats.bytesFetched > 0);
  assert.deepEqual(await digest(db), expected);
  await db.close();
  assert.ok(!fs.existsSync(`${file}-paged`), 'the map of local pages is gone');
  const out = path.join(tempDir(), 'litestream.db');
  await litestreamRestore('small', out);
  assert.ok(fs.readFileSync(file).equals(fs.readFileSync(out)), 'the filled file is byte for byte what litestream restores');
});

test('once filled, queries, a write, a sync and a snapshot read nothing from the replica', { skip }, async () => {
  const link = await startLink({ target: s3.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
  try {
    const prefix = 'written-after';
    const { rows } = sources.get(prefix);
    const file = path.join(tempDir(), 'app.db');
    const db = await Database.open(file, { replica: replica(prefix, link.url, { snapshotInterval: 1000 }), restore: 'paged' });
    await db.filled;
    link.reset();
    assert.equal((await db.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    const scan = await db.prepare('SELECT count(*) AS n, sum(length(v)) AS bytes FROM t').get();
    assert.deepEqual({ ...scan }, { n: rows, bytes: rows * 300 });
    await db.prepare('INSERT INTO t(v, k) VALUES (randomblob(300), 1)').run();
    const { txid } = await db.syncReplica();
    await waitFor(
      async () => (await listReplica(prefix)).some((f) => f.level === 9 && f.maxTxid >= txid),
      'a snapshot of the new TXID',
    );
    const counted = link.counters();
    assert.equal(counted.byMethod.GET ?? 0, 0, `replica reads after the fill: ${JSON.stringify(counted)}`);
    assert.ok((counted.byMethod.PUT ?? 0) > 0, 'the sync and the snapshot went through the link');
    await db.close();
  } finally {
    await link.close();
  }
});

test('writes before the fill ends land, and replication carries on from the restored TXID', { skip }, async () => {
  const prefix = 'written-during';
  const { rows, txid: restored } = sources.get(prefix);
  const link = await startLink({ target: s3.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
  // The fill's reads wait until the writes are done: the writes find
  // their pages missing and fetch them, and the checkpoint writes pages the
  // fill has still to bring in.
  link.hold(fillRead);
  try {
    const file = path.join(tempDir(), 'app.db');
    const db = await Database.open(file, { replica: replica(prefix, link.url), restore: 'paged' });
    await db.prepare('UPDATE t SET k = -1 WHERE id > ?').run(rows - 100);
    await db.prepare('DELETE FROM t WHERE id <= 100').run();
    await db.prepare('INSERT INTO t(v, k) VALUES (zeroblob(5000), -2)').run();
    await db.checkpoint('TRUNCATE');
    const before = db.stats().restore;
    assert.ok(before.pagesLocal < before.pagesTotal / 2, `the writes ran with most pages missing (${JSON.stringify(before)})`);
    const { txid } = await db.syncReplica();
    // The writes ship as one TXID or several, as the replicator's captures
    // fall between them (a few milliseconds apart; under load a write that
    // fetches its pages can take longer).
    const shipped = (await listReplica(prefix)).filter((f) => f.level === 0 && f.minTxid > restored);
    assert.equal(Math.min(...shipped.map((f) => f.minTxid)), restored + 1, 'the first TXID shipped follows the restored one');
    assert.equal(Math.max(...shipped.map((f) => f.maxTxid)), txid);
    link.release();
    await db.filled;
    assert.equal((await db.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    const counts = await db.prepare('SELECT count(*) AS n, sum(k = -1) AS updated, sum(k = -2) AS added FROM t').get();
    assert.deepEqual({ ...counts }, { n: rows - 100 + 1, updated: 100, added: 1 });
    const expected = await digest(db);
    await db.close();
    const out = path.join(tempDir(), 'litestream.db');
    await litestreamRestore(prefix, out);
    const check = await Database.open(out, { readOnly: true });
    assert.deepEqual(await digest(check), expected);
    await check.close();
  } finally {
    await link.close();
  }
});

test('a replica that goes down during the fill: local pages answer, missing ones reject, the fill completes after', { skip }, async () => {
  const { rows, expected } = sources.get('large');
  const relay = await startRelay(s3.port);
  const link = await startLink({ target: relay.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
  // The fill waits until the replica is down.
  link.hold(fillRead);
  try {
    const file = path.join(tempDir(), 'app.db');
    const db = await Database.open(file, { replica: replica('large', link.url), restore: 'paged' });
    const near = db.prepare('SELECT length(v) AS n FROM t WHERE id = ?');
    assert.equal((await near.get(1)).n, 300);
    await relay.down();
    link.release();
    assert.equal(db.stats().restore.filled, false);
    await assert.rejects(near.get(rows), (err) => {
      assert.match(err.message, /disk I\/O error: page \d+ is not local yet and cannot be read/);
      return true;
    });
    assert.equal((await near.get(1)).n, 300, 'a local page still answers');
    assert.ok(db.stats().restore.lastError !== null);
    await relay.up();
    await db.filled;
    assert.equal((await near.get(rows)).n, 300);
    assert.deepEqual(await digest(db), expected);
    await db.close();
  } finally {
    await link.close();
    await relay.down();
  }
});

test('killed during the fill, the next open carries on and the result equals the source', { skip }, async () => {
  const { expected, bytes } = sources.get('large');
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 8e6 });
  // The fill's first ranged reads (1 MiB of the snapshot each at most) pass,
  // enough for about half the pages; the rest are held, so the kill lands
  // during the fill however slowly this process sees the child's progress.
  let fillReads = 0;
  link.hold((req) => fillRead(req) && ++fillReads > Math.ceil((0.5 * bytes) / 2 ** 20));
  const file = path.join(tempDir(), 'app.db');
  try {
    const child = spawn(process.execPath, [path.join(HERE, 'paged-restore-child.mjs'), file, JSON.stringify(replica('large', link.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const progress = [];
    await new Promise((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
        const lines = text.split('\n');
        text = lines.pop();
        for (const line of lines) {
          const s = JSON.parse(line);
          progress.push(s);
          if (s.pagesLocal > s.pagesTotal / 4) child.kill('SIGKILL');
        }
      });
      child.on('exit', resolve);
      child.on('error', reject);
    });
    const last = progress.at(-1);
    assert.ok(last !== undefined && !last.filled, `killed before the fill ended (${JSON.stringify(last)})`);
    assert.ok(fs.existsSync(`${file}-paged`), 'the map of local pages survived');
    await assert.rejects(Database.open(file), /a paged restore that has not finished/);
  } finally {
    await link.close();
  }
  const db = await Database.open(file, { replica: replica('large', s3.endpoint), restore: 'paged' });
  await db.filled;
  assert.equal((await db.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
  assert.deepEqual(await digest(db), expected);
  await db.close();
  const out = path.join(tempDir(), 'litestream.db');
  await litestreamRestore('large', out);
  assert.ok(fs.readFileSync(file).equals(fs.readFileSync(out)), 'byte for byte what litestream restores');
});

test("restore: 'full' downloads a missing database before the open resolves", { skip }, async () => {
  const { expected, txid: restored } = sources.get('small');
  const file = path.join(tempDir(), 'app.db');
  const db = await Database.open(file, { replica: replica('small', s3.endpoint), restore: 'full' });
  assert.equal(db.stats().restore, null);
  await db.filled;
  assert.deepEqual(await digest(db), expected);
  await db.prepare('INSERT INTO t(v, k) VALUES (randomblob(10), 3)').run();
  const { txid } = await db.syncReplica();
  assert.equal(txid, restored + 1, 'replication carries on from the restored TXID');
  assert.ok(db.stats().replica.bytesShipped < 64 * 1024, 'no full image was shipped again');
  await db.close();
});

test('an existing file is opened as it is, and db.filled resolves at once', { skip }, async () => {
  const file = path.join(tempDir(), 'app.db');
  const local = await Database.open(file);
  await local.exec('CREATE TABLE mine(x); INSERT INTO mine VALUES (1)');
  await local.close();
  const db = await Database.open(file, { replica: replica('small-existing', s3.endpoint), restore: 'paged' });
  assert.equal(db.stats().restore, null);
  await db.filled;
  assert.deepEqual({ ...(await db.prepare('SELECT x FROM mine').get()) }, { x: 1 });
  await db.close();
});

test('closing during the fill rejects db.filled and keeps what arrived for the next open', { skip }, async () => {
  const { expected } = sources.get('large');
  const link = await startLink({ target: s3.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
  link.hold(fillRead);
  const file = path.join(tempDir(), 'app.db');
  try {
    const db = await Database.open(file, { replica: replica('large', link.url), restore: 'paged' });
    const filled = db.filled;
    await db.close();
    await assert.rejects(filled, /closed before/);
  } finally {
    link.release();
    await link.close();
  }
  const db = await Database.open(file, { replica: replica('large', s3.endpoint), restore: 'paged' });
  await db.filled;
  assert.deepEqual(await digest(db), expected);
  await db.close();
});

test('a file being filled cannot be opened by a second database in the same process', { skip }, async () => {
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 8e6 });
  try {
    const file = path.join(tempDir(), 'app.db');
    const db = await Database.open(file, { replica: replica('large', link.url), restore: 'paged' });
    await assert.rejects(Database.open(file, { replica: replica('large', link.url), restore: 'paged' }), {
      code: 'ERR_OFFLOOP_REPLICA',
      message: /being restored by another open database/,
    });
    await db.filled;
    await db.close();
  } finally {
    await link.close();
  }
});

test('restore options are checked', async () => {
  const file = path.join(tempDir(), 'app.db');
  await assert.rejects(Database.open(file, { restore: 'paged' }), { code: 'ERR_INVALID_ARG_VALUE', message: /needs options.replica/ });
  await assert.rejects(Database.open(file, { replica: { url: 'file:///x' }, restore: 'lazy' }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  await assert.rejects(Database.open(file, { replica: { url: 'file:///x' }, restore: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
  for (const where of [':memory:', '']) {
    await assert.rejects(Database.open(where, { replica: { url: 'file:///x' }, restore: 'paged' }), {
      message: /needs a database file's path/,
    });
  }
});

test('without restore, db.filled resolves at once and stats().restore is null', async () => {
  const db = await Database.open(path.join(tempDir(), 'app.db'));
  await db.filled;
  assert.equal(db.stats().restore, null);
  await db.close();
  const closed = new Database(path.join(tempDir(), 'later.db'), { open: false });
  await assert.rejects(closed.filled, { code: 'ERR_INVALID_STATE' });
});
