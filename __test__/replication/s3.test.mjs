// Replication to S3, against an S3 server (moto) this file starts on a free
// loopback port: interop both ways with the real Litestream, an outage in
// the middle of a run, buckets or credentials that can never work, and
// writes under `durability: 'replica'` that hear back before compaction.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { startLink } from '../../bench/lib/link.mjs';

import {
  Database,
  S3_KEYS,
  assertContiguous,
  inspect,
  litestream,
  mixedWorkload,
  skipWithout,
  startLitestream,
  startRelay,
  s3ForFile,
  tables,
  tempDir,
} from './helpers.mjs';

const skip = skipWithout('litestream', 's3_test_server');
const s3 = s3ForFile(skip);

const KEYS_ENV = { AWS_ACCESS_KEY_ID: S3_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey };

function replicaOptions(prefix, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint: s3.endpoint, region: 'us-east-1', ...S3_KEYS, ...extra };
}

/** The URL Litestream reads the same replica from. */
function litestreamUrl(prefix) {
  return `s3://replica/${prefix}?endpoint=${s3.endpoint}&forcePathStyle=true`;
}

async function s3Txids(prefix) {
  const res = await fetch(`${s3.endpoint}/replica?list-type=2&prefix=${prefix}/0000/`);
  const xml = await res.text();
  return [...xml.matchAll(/<Key>[^<]*\/([0-9a-f]{16})-([0-9a-f]{16})\.ltx<\/Key>/g)]
    .map((m) => [Number.parseInt(m[1], 16), Number.parseInt(m[2], 16)])
    .sort((a, b) => a[0] - b[0]);
}

test('an S3 replica offloop wrote restores with litestream and with Database.restore', { skip }, async () => {
  const dir = tempDir();
  const db = await Database.open(path.join(dir, 'app.db'), { replica: replicaOptions('to-litestream') });
  await mixedWorkload(db);
  const { txid } = await db.syncReplica();
  const expected = await tables(db);
  await db.close();

  const viaLitestream = path.join(dir, 'litestream.db');
  await litestream(['restore', '-o', viaLitestream, litestreamUrl('to-litestream')], KEYS_ENV);
  const got = await inspect(viaLitestream);
  assert.equal(got.integrity, 'ok');
  assert.deepEqual(got.tables, expected);

  const viaOffloop = path.join(dir, 'offloop.db');
  const restored = await Database.restore('s3://replica/to-litestream', viaOffloop, {
    endpoint: s3.endpoint,
    ...S3_KEYS,
  });
  assert.equal(restored.txid, txid);
  assert.deepEqual((await inspect(viaOffloop)).tables, expected);
});

test('an S3 replica litestream replicate wrote restores with Database.restore', { skip }, async () => {
  const dir = tempDir();
  const file = path.join(dir, 'app.db');
  const db = await Database.open(file, { checkpoint: false });
  await db.exec('CREATE TABLE seed(x)');
  const sidecar = await startLitestream(
    file,
    [
      'type: s3',
      'bucket: replica',
      'path: from-litestream',
      `endpoint: "${s3.endpoint}"`,
      'region: us-east-1',
      'force-path-style: true',
      `access-key-id: ${S3_KEYS.accessKeyId}`,
      `secret-access-key: ${S3_KEYS.secretAccessKey}`,
    ],
  );
  try {
    await mixedWorkload(db);
    const { txid } = await sidecar.sync();
    const expected = await tables(db);
    await sidecar.stop();
    const out = path.join(dir, 'restored.db');
    const restored = await Database.restore('s3://replica/from-litestream', out, { endpoint: s3.endpoint, ...S3_KEYS });
    assert.equal(restored.txid, txid);
    const got = await inspect(out);
    assert.equal(got.integrity, 'ok');
    assert.deepEqual(got.tables, expected);
  } finally {
    await sidecar.stop();
    await db.close();
  }
});

test('while S3 is down writes keep succeeding and lastError says why; once it is back the replica catches up with no TXID gap', { skip }, async () => {
  const dir = tempDir();
  const relay = await startRelay(s3.port);
  const db = await Database.open(path.join(dir, 'app.db'), {
    replica: replicaOptions('outage', { endpoint: relay.endpoint, syncInterval: 50 }),
  });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    for (let i = 0; i < 20; i++) await insert.run(`before ${i}`);
    await db.syncReplica();

    await relay.down();
    for (let i = 0; i < 50; i++) assert.equal((await insert.run(`during ${i}`)).changes, 1);
    await assert.rejects(db.syncReplica(), { code: 'ERR_OFFLOOP_REPLICA' });
    const stats = db.stats().replica;
    assert.match(stats.lastError, /replica/);
    assert.ok(stats.pendingFiles > 0 || stats.pendingBytes > 0, 'the commits wait locally');

    await relay.up();
    const { txid } = await db.syncReplica();
    assert.equal(db.stats().replica.lastError, null);
    assert.equal(db.stats().replica.pendingFiles, 0);
    const expected = await tables(db);
    const out = path.join(dir, 'restored.db');
    assert.deepEqual(await Database.restore('s3://replica/outage', out, { endpoint: s3.endpoint, ...S3_KEYS }), { txid });
    assert.deepEqual((await inspect(out)).tables, expected);
    const l0 = await s3Txids('outage');
    assert.equal(l0[0][0], 1);
    assertContiguous(assert, l0);
  } finally {
    await relay.up();
    await db.close();
    await relay.down();
  }
});

test('a missing bucket or refused credentials fail the open with a clear error', { skip }, async () => {
  const dir = tempDir();
  await assert.rejects(
    Database.open(path.join(dir, 'a.db'), { replica: { ...replicaOptions('x'), url: 's3://no-such-bucket/x' } }),
    (err) => err.code === 'ERR_OFFLOOP_REPLICA' && /bucket/.test(err.message),
  );
  await assert.rejects(
    Database.open(path.join(dir, 'b.db'), { replica: { url: 's3://replica/x', endpoint: s3.endpoint, region: 'us-east-1' } }),
    (err) => err.code === 'ERR_OFFLOOP_REPLICA' && /credentials/.test(err.message),
  );
});

test("under durability: 'replica' a write resolves once its upload is done, not after the compaction that round runs", { skip }, async () => {
  const link = await startLink({ target: s3.endpoint, latencyMs: 0, bytesPerSecond: 1e12 });
  const dir = tempDir();
  // Rounds run only for the writes (a minute between the others), and L1
  // comes due 50 ms after the last compaction.
  const options = { syncInterval: 60_000, compactionIntervals: [50], durability: 'replica', endpoint: link.url };
  const db = await Database.open(path.join(dir, 'app.db'), { replica: replicaOptions('durable-first', options) });
  const values = [];
  try {
    await db.exec('CREATE TABLE t(v INTEGER)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    await insert.run(0);
    values.push(0);
    let held = 0;
    // Until the replica has had no request (and no held one) for 300 ms:
    // the round before is over, compaction and all, or held.
    const settled = async () => {
      let seen = null;
      while (seen !== `${link.counters().requests}/${held}`) {
        seen = `${link.counters().requests}/${held}`;
        await sleep(300);
      }
    };
    await settled();
    // Compaction lists the levels; an upload round in steady state never
    // does. From now on listings wait.
    link.hold((req) => {
      const listing = req.method === 'GET' && req.url.includes('list-type');
      if (listing) held += 1;
      return listing;
    });
    // Writes one at a time until a round's compaction is held: the write
    // of that round, too, must have resolved.
    for (let v = 1; held === 0; v++) {
      assert.ok(v <= 20, 'no compaction ran');
      await sleep(60);
      const write = insert.run(v).then(() => 'resolved');
      const outcome = await Promise.race([write, sleep(20_000).then(() => 'still waiting, behind the held listing')]);
      assert.equal(outcome, 'resolved', `write ${v}`);
      values.push(v);
      await settled();
    }
  } finally {
    link.release();
    await db.close();
    await link.close();
  }
  // The compaction it held ran once let go, and the replica is whole.
  const out = path.join(dir, 'restored.db');
  await Database.restore(replicaOptions('durable-first').url, out, { endpoint: s3.endpoint, region: 'us-east-1', ...S3_KEYS });
  const restored = await Database.open(out, { readOnly: true });
  assert.deepEqual((await restored.prepare('SELECT v FROM t ORDER BY v').all()).map((r) => r.v), values);
  await restored.close();
});
