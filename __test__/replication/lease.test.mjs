// The replica's lease and fencing on one host, with processes and a folder
// replica: one holder at a time (a second is refused, naming the holder),
// the lease in Litestream's format beside a replica `litestream restore`
// still reads, a database reopened after SIGKILL takes its own lease back,
// a paused writer, and one cut off from S3 (through a relay taken down),
// fenced once a new one took over, a TXID another writer
// wrote fences the one that finds it, and `durability: 'replica'`: a write
// resolves only once its commit is in the replica, every acknowledged
// write survives a SIGKILL, many writes share one upload (writers that
// commit back to back share every one), and a failing upload keeps them
// waiting.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import {
  Database,
  S3_KEYS,
  assertContiguous,
  folderLease,
  folderTxids,
  litestream,
  renewed,
  skipWithout,
  startRelay,
  startS3,
  tempDir,
  waitFor,
} from './helpers.mjs';
import { Writer } from './hosts.mjs';

const skipLitestream = skipWithout('litestream');
// The shortest lease offloop takes: a test that waits for one to expire
// waits this long.
const TTL = 3000;

function setup() {
  const dir = tempDir();
  const replicaDir = path.join(dir, 'replica');
  return { dir, replicaDir, url: pathToFileURL(replicaDir).href, file: (name) => path.join(dir, name) };
}

function lease(replicaDir) {
  return JSON.parse(fs.readFileSync(path.join(replicaDir, 'lock.json'), 'utf8'));
}

/** The values in table t of the replica, restored by `litestream restore`. */
async function restoredValues(url, dir) {
  const out = path.join(dir, `restored-${Date.now()}-${Math.random()}.db`);
  await litestream(['restore', '-o', out, url]);
  const db = await Database.open(out, { readOnly: true });
  try {
    return new Set((await db.prepare('SELECT v FROM t').all()).map((r) => r.v));
  } finally {
    await db.close();
  }
}

test("while one writer holds the replica's lease another's open is refused, naming the holder; a clean close releases it at once", async () => {
  const { url, file } = setup();
  const a = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000 } });
  const holder = a.stats().replica.leaseHolder;
  assert.equal(typeof holder, 'string');
  assert.equal(a.stats().replica.fenced, false);
  await assert.rejects(Database.open(file('b.db'), { replica: { url, leaseTtl: 60_000 } }), (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
    assert.ok(err.message.includes(holder), err.message);
    return true;
  });
  await a.close();
  const b = await Database.open(file('b.db'), { replica: { url, leaseTtl: 60_000 } });
  assert.notEqual(b.stats().replica.leaseHolder, holder);
  await b.close();
});

test("the lease is Litestream's lock.json (generation, expires_at, owner) naming the process lease that keeps it live, and litestream restore still reads the replica", { skip: skipLitestream }, async () => {
  const { dir, replicaDir, url, file } = setup();
  const db = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000, durability: 'replica' } });
  await db.exec('CREATE TABLE t(v TEXT)');
  await db.prepare('INSERT INTO t VALUES (?)').run('one');
  const record = lease(replicaDir);
  assert.deepEqual(Object.keys(record), ['generation', 'expires_at', 'owner', 'process_lease']);
  assert.equal(record.owner, db.stats().replica.leaseHolder);
  assert.match(record.process_lease, /^\.offloop\/leases\/[\w.-]+\.json$/);
  const process = folderLease(replicaDir).record;
  assert.deepEqual(Object.keys(process), ['generation', 'expires_at', 'owner']);
  assert.ok(Number.isInteger(record.generation) && record.generation >= 1);
  assert.ok(Date.parse(record.expires_at) > Date.now(), record.expires_at);
  assert.deepEqual([...(await restoredValues(url, dir))], ['one']);
  await db.close();
  // Released: expired for everyone, in the same format.
  assert.ok(Date.parse(lease(replicaDir).expires_at) < Date.now());
});

test('the same database reopened after SIGKILL takes its own lease back at once; another database waits for it to expire', async () => {
  const { url, file } = setup();
  const child = new Writer(file('a.db'), url, { leaseTtl: 60_000 });
  const { holder } = await child.next((m) => m.opened);
  await child.kill();
  // Another holder is refused for the lease's whole minute...
  await assert.rejects(Database.open(file('b.db'), { replica: { url, leaseTtl: 60_000 } }), /held by/);
  // ...but the same database is the same holder.
  const again = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000 } });
  assert.equal(again.stats().replica.leaseHolder, holder);
  await again.exec('INSERT INTO t(v) VALUES (1)');
  await again.close();
});

test('a paused writer (SIGSTOP past its lease) is fenced once it runs again: its writes reject ERR_OFFLOOP_FENCED, and the new writer owns every TXID after it', { skip: skipLitestream }, async () => {
  const { dir, replicaDir, url, file } = setup();
  const old = new Writer(file('a.db'), url, { leaseTtl: TTL, syncInterval: 50 });
  try {
    await old.next((m) => m.opened);
    await old.write(5);
    assert.equal(old.messages.filter((m) => m.refused).length, 0);
    await waitFor('the first writes in the replica', async () => {
      old.send({ stats: true });
      const { stats } = await old.next((m) => m.stats);
      return stats.txid > 0 && stats.pendingFiles === 0 && stats.lagMs === 0;
    });
    await renewed(replicaDir);
    old.proc.kill('SIGSTOP');
    // The new writer carries on from the replica once the lease expired.
    const expires = folderLease(replicaDir).expiresAt;
    await sleep(Math.max(0, expires - Date.now()) + 50);
    const fresh = await Database.open(file('b.db'), { replica: { url, leaseTtl: TTL, durability: 'replica' }, restore: 'full' });
    const insert = fresh.prepare('INSERT INTO t(v) VALUES (?)');
    for (let i = 0; i < 5; i++) await insert.run(`new.${i}`);
    old.messages.length = 0;
    old.proc.kill('SIGCONT');
    await old.write(5);
    const refused = old.messages.filter((m) => m.refused);
    assert.equal(refused.length, 5, JSON.stringify(old.messages));
    for (const r of refused) assert.equal(r.refused, 'ERR_OFFLOOP_FENCED');
    assert.equal(old.messages.filter((m) => m.acked).length, 0);
    // Lapsed, it refused them; its next renewal finds the lease taken and
    // fences it for good.
    const stats = await waitFor('the fence', async () => {
      old.send({ stats: true });
      const { stats } = await old.next((m) => m.stats);
      return stats.fenced && stats;
    });
    assert.match(stats.lastError, /lease/);
    // The replica is the new writer's: restored, it holds exactly its rows.
    const values = await restoredValues(url, dir);
    const mine = new Set((await fresh.prepare('SELECT v FROM t').all()).map((r) => r.v));
    assert.deepEqual([...values].sort(), [...mine].sort());
    assertContiguous(assert, folderTxids(replicaDir));
    await fresh.close();
  } finally {
    await old.kill();
  }
});

test('a TXID in the replica that this writer did not write fences it, and lastError says which', async () => {
  const { replicaDir, url, file } = setup();
  const db = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000, durability: 'replica' } });
  await db.exec('CREATE TABLE t(v TEXT)');
  const { txid } = await db.syncReplica();
  // Another writer's file at the next TXID (a copy with another timestamp).
  const l0 = path.join(replicaDir, 'ltx', '0');
  const name = (n) => `${n.toString(16).padStart(16, '0')}-${n.toString(16).padStart(16, '0')}.ltx`;
  const bytes = fs.readFileSync(path.join(l0, name(txid)));
  bytes.writeBigUInt64BE(1n, 32);
  fs.writeFileSync(path.join(l0, name(txid + 1)), bytes);
  await assert.rejects(db.exec("INSERT INTO t VALUES ('lost')"), { code: 'ERR_OFFLOOP_FENCED' });
  assert.match(db.stats().replica.lastError, new RegExp(`TXID ${name(txid + 1).slice(0, 16)} is already in the replica`));
  await assert.rejects(db.exec("INSERT INTO t VALUES ('later')"), { code: 'ERR_OFFLOOP_FENCED' });
  assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, 1, 'reads go on');
  await db.close();
});

test("durability 'replica': each write resolves only once its commit is in the replica, and concurrent writes share uploads", { skip: skipLitestream }, async () => {
  const { dir, replicaDir, url, file } = setup();
  // Uploads come only from the writes: the sync interval never runs out.
  const db = await Database.open(file('a.db'), {
    replica: { url, leaseTtl: 60_000, durability: 'replica', syncInterval: 3_600_000 },
  });
  await db.exec('CREATE TABLE t(v TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  for (const v of ['a', 'b']) {
    await insert.run(v);
    assert.ok((await restoredValues(url, dir)).has(v), v);
  }
  await db.transaction(async (tx) => {
    await tx.prepare('INSERT INTO t VALUES (?)').run('c');
  });
  assert.ok((await restoredValues(url, dir)).has('c'));
  await db.batch([[insert, 'd']]);
  assert.ok((await restoredValues(url, dir)).has('d'));
  const before = folderTxids(replicaDir).length;
  const values = Array.from({ length: 200 }, (_, i) => `many.${i}`);
  await Promise.all(values.map((v) => insert.run(v)));
  const restored = await restoredValues(url, dir);
  for (const v of values) assert.ok(restored.has(v), v);
  const uploads = folderTxids(replicaDir).length - before;
  assert.ok(uploads < values.length / 4, `${uploads} uploads for ${values.length} writes`);
  await db.close();
});

test("durability 'replica': writers committing back to back share every upload, which waits up to gatherWindow for the writers the last one answered", async () => {
  const { url, file } = setup();
  // A window far longer than a writer takes to commit again, so that which
  // writes share an upload depends on no timing; uploads come only from
  // the writes, never from the sync interval.
  const db = await Database.open(file('a.db'), {
    replica: { url, leaseTtl: 60_000, durability: 'replica', syncInterval: 3_600_000, gatherWindow: 1_000 },
  });
  await db.exec('CREATE TABLE t(writer INTEGER, n INTEGER, PRIMARY KEY (writer, n))');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
  const before = db.stats().replica;
  const WRITERS = 8;
  const WRITES = 10;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; n < WRITES; n++) {
        const { changes } = await insert.run(writer, n);
        assert.equal(changes, 1);
      }
    }),
  );
  const after = db.stats().replica;
  assert.equal(after.durableWrites - before.durableWrites, WRITERS * WRITES);
  // Answered one round and started at once, the next upload would carry
  // the first writer back and leave the others for the one after: two
  // groups taking turns, about two uploads per write of each writer. Each
  // upload waits for all of them instead; only the first uploads, made
  // before the writers fell into step, may carry fewer.
  const uploads = after.durableRounds - before.durableRounds;
  assert.ok(uploads <= WRITES + 3, `${uploads} uploads for ${WRITES} writes by each of ${WRITERS} writers`);
  const rows = await db.prepare('SELECT writer, count(*) AS c FROM t GROUP BY writer ORDER BY writer').all();
  assert.deepEqual(
    rows.map((r) => [r.writer, r.c]),
    Array.from({ length: WRITERS }, (_, w) => [w, WRITES]),
  );
  await db.close();
});

test("durability 'replica': a write whose upload fails keeps waiting and resolves once the replica takes it", async () => {
  const { replicaDir, url, file } = setup();
  const db = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000, durability: 'replica' } });
  await db.exec('CREATE TABLE t(v TEXT)');
  // The level-0 folder made a file: every upload fails until it is back.
  const l0 = path.join(replicaDir, 'ltx', '0');
  fs.renameSync(l0, `${l0}.away`);
  fs.writeFileSync(l0, 'not a folder');
  let settled = false;
  const write = db.exec("INSERT INTO t VALUES ('waits')").finally(() => {
    settled = true;
  });
  await waitFor('a failed upload', () => db.stats().replica.lastError !== null);
  await sleep(600);
  assert.equal(settled, false, 'still waiting after a failed upload and its retry');
  fs.rmSync(l0);
  fs.renameSync(`${l0}.away`, l0);
  await write;
  await db.close();
});

test("durability 'replica': after SIGKILL of a writer with concurrent writes, every acknowledged write is in the replica, over several rounds", { skip: skipLitestream }, async () => {
  const { dir, url, file } = setup();
  const acked = [];
  for (let round = 0; round < 3; round++) {
    const child = new Writer(file('a.db'), url, { durability: 'replica', leaseTtl: 60_000, syncInterval: 3_600_000 });
    try {
      await child.next((m) => m.opened);
      child.send({ write: 64 });
      child.send({ write: 64 });
      // Killed mid-way: some writes acknowledged, some not.
      await waitFor('acknowledged writes', () => child.messages.filter((m) => m.acked).length >= 40);
      await child.kill();
      acked.push(...child.messages.filter((m) => m.acked).map((m) => m.acked));
    } finally {
      await child.kill();
    }
  }
  const restored = await restoredValues(url, dir);
  const missing = acked.filter((v) => !restored.has(v));
  assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged writes missing`);
});

test("leaseTtl is an integer of at least 3000 ms, durability is 'local' or 'replica', lease a boolean, gatherWindow an integer of at least 0", async () => {
  const { url, file } = setup();
  const open = (replica) => async () => Database.open(file('a.db'), { replica: { url, ...replica } });
  await assert.rejects(open({ leaseTtl: 2999 }), { code: 'ERR_OUT_OF_RANGE' });
  await assert.rejects(open({ leaseTtl: 'long' }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(open({ durability: 'eventual' }), { code: 'ERR_INVALID_ARG_VALUE' });
  await assert.rejects(open({ durability: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(open({ lease: 'no' }), { code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(open({ lease: false, durability: 'replica' }), { code: 'ERR_INVALID_ARG_VALUE' });
  await assert.rejects(open({ lease: false, leaseTtl: 5000 }), { code: 'ERR_INVALID_ARG_VALUE' });
  await assert.rejects(open({ gatherWindow: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  await assert.rejects(open({ gatherWindow: 2.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  // Every replicating database takes the lease, with no option at all.
  const db = await Database.open(file('a.db'), { replica: { url } });
  assert.equal(typeof db.stats().replica.leaseHolder, 'string');
  await assert.rejects(Database.open(file('c.db'), { replica: { url } }), (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
    assert.match(err.message, /lease is held by/);
    return true;
  });
  await db.close();
  // lease: false takes none: two such databases may replicate there.
  const plain = await Database.open(file('b.db'), { replica: { url, lease: false } });
  assert.equal(plain.stats().replica.leaseHolder, null);
  assert.equal(plain.stats().replica.fenced, false);
  await plain.close();
});

test('a database the replica has moved past (another writer wrote meanwhile) is refused the open, never starting the replica again from its older file', async () => {
  const { url, file } = setup();
  const a = await Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000, durability: 'replica' } });
  await a.exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('a')");
  await a.close();
  const b = await Database.open(file('b.db'), { replica: { url, leaseTtl: 60_000, durability: 'replica' }, restore: 'full' });
  await b.exec("INSERT INTO t VALUES ('b')");
  await b.close();
  await assert.rejects(Database.open(file('a.db'), { replica: { url, leaseTtl: 60_000 } }), (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
    assert.match(err.message, /holds commits this database lacks/);
    return true;
  });
  // The replica is still b's.
  const c = await Database.open(file('c.db'), { replica: { url, leaseTtl: 60_000 }, restore: 'full' });
  assert.deepEqual((await c.prepare('SELECT v FROM t ORDER BY v').all()).map((r) => r.v), ['a', 'b']);
  await c.close();
});

test('a writer cut off from S3 past its lease refuses writes while it is away, and acknowledges them again once a renewal finds the lease still its own', { skip: skipWithout('s3_test_server') }, async () => {
  const { dir } = setup();
  const s3 = await startS3();
  const relay = await startRelay(s3.port);
  const url = 's3://replica/db';
  const via = (endpoint) => ({ endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_KEYS });
  const writer = new Writer(path.join(dir, 'a.db'), url, { leaseTtl: TTL, syncInterval: 50, ...via(relay.endpoint) });
  try {
    await writer.next((m) => m.opened);
    await writer.write(5);
    assert.equal(writer.acked().length, 5);
    await relay.down();
    // Past the lease's deadline (its TTL less the skew bound) by the
    // holder's clock: writes are refused, and the lease is not fenced.
    await waitFor('writes refused', async () => {
      writer.messages.length = 0;
      await writer.write(1);
      return writer.messages.some((m) => m.refused === 'ERR_OFFLOOP_FENCED');
    });
    const away = await writer.stats();
    assert.equal(away.fenced, false, 'lapsed, not fenced');
    assert.match(away.lastError, /not renewed before its deadline/);
    await relay.up();
    // The next renewal finds lock.json as the writer left it.
    await waitFor('writes acknowledged again', async () => {
      writer.messages.length = 0;
      await writer.write(1);
      return writer.acked().length === 1;
    });
    writer.messages.length = 0;
    await writer.write(5);
    assert.equal(writer.acked().length, 5, JSON.stringify(writer.messages));
    assert.equal((await writer.stats()).fenced, false);
    // Every acknowledged row reaches the replica, in one unbroken chain.
    await waitFor('the replica caught up', async () => {
      const s = await writer.stats();
      return s.pendingFiles === 0 && s.lagMs === 0;
    });
  } finally {
    await writer.kill();
    await relay.down();
    await s3.stop();
  }
});

test('a writer cut off from S3 (its relay down) past its lease is fenced when it can reach S3 again, and never acknowledges a write again', { skip: skipWithout('s3_test_server') }, async () => {
  const { dir } = setup();
  const s3 = await startS3();
  const relay = await startRelay(s3.port);
  const url = 's3://replica/db';
  const via = (endpoint) => ({ endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_KEYS });
  const old = new Writer(path.join(dir, 'a.db'), url, { leaseTtl: TTL, syncInterval: 50, ...via(relay.endpoint) });
  let fresh = null;
  try {
    await old.next((m) => m.opened);
    await old.write(5);
    await waitFor('the first writes in the replica', async () => {
      const s = await old.stats();
      return s.txid > 0 && s.pendingFiles === 0 && s.lagMs === 0;
    });
    await relay.down();
    // Another database takes over, straight to S3, once the lease expired.
    await waitFor('the takeover', async () => {
      const options = { replica: { url, leaseTtl: TTL, durability: 'replica', ...via(s3.endpoint) }, restore: 'full' };
      const candidate = new Database(path.join(dir, 'b.db'), options);
      try {
        fresh = await candidate.ready;
        return true;
      } catch (err) {
        assert.match(err.message, /lease is held by/);
        // A refused open may have restored the file: once its threads let
        // go of it (close() resolves then), start afresh.
        await candidate.close();
        for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('b.db'))) {
          fs.rmSync(path.join(dir, f), { recursive: true, force: true });
        }
        return false;
      }
    });
    await fresh.prepare('INSERT INTO t(v) VALUES (?)').run('new');
    await relay.up();
    old.messages.length = 0;
    await old.write(5);
    assert.deepEqual(old.acked(), []);
    for (const m of old.messages.filter((m) => m.refused)) assert.equal(m.refused, 'ERR_OFFLOOP_FENCED');
    await waitFor('the fence', async () => (await old.stats()).fenced);
    await fresh.prepare('INSERT INTO t(v) VALUES (?)').run('after');
  } finally {
    await old.kill();
    await fresh?.close();
    await relay.down();
    await s3.stop();
  }
});
