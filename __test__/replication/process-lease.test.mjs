// One lease per process under a replica root: the databases of one process
// whose replicas sit in one folder (or under one S3 prefix) share one
// process lease object there, each lock.json naming it, renewed by one
// thread for all, so idle databases add no lease writes; a takeover of
// one database of a paused process replaces that process lease, and the
// process, resumed, is fenced on every database it held there; after a
// SIGKILL the same database takes its own lease back at once, which frees
// the dead process's other databases too; and a follower with
// `promote: 'auto'` reads the process lease, never promoting while the
// writer renews it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { countingProxy } from '../../bench/lib/s3-proxy.mjs';
import { Database, S3_KEYS, folderLease, renewed, skipWithout, startS3, tempDir, toolEnv, waitFor } from './helpers.mjs';
import { Writer } from './hosts.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// The shortest lease offloop takes.
const TTL = 3000;
const DEADLINE_MS = 30_000;

function setup() {
  const dir = tempDir();
  const replicas = path.join(dir, 'replicas');
  return { dir, replicas, url: (i) => pathToFileURL(path.join(replicas, `t${i}`)).href };
}

/** The process lease objects in the folder that holds the replicas. */
function processLeases(replicas) {
  const dir = path.join(replicas, '.offloop', 'leases');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
}

const leaseThreads = () =>
  fs.readdirSync('/proc/self/task').filter((id) => {
    try {
      return fs.readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim() === 'offloop-lease';
    } catch {
      return false;
    }
  }).length;

/** A process writing `count` databases (tenants-writer.mjs) under `replicas`. */
class Tenants {
  constructor(dir, replicas, count, options) {
    this.messages = [];
    this.rounds = 0;
    const args = [path.join(HERE, 'tenants-writer.mjs'), dir, pathToFileURL(replicas).href, String(count), JSON.stringify(options)];
    this.proc = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: toolEnv() });
    this.proc.on('message', (m) => this.messages.push(m));
  }

  async next(pick) {
    return waitFor('the tenants process', () => {
      const i = this.messages.findIndex(pick);
      return i >= 0 && this.messages.splice(i, 1)[0];
    });
  }

  /** One insert in every database: 'acked' or the error code, each. */
  async write() {
    const round = ++this.rounds;
    this.proc.send({ write: true, round });
    return (await this.next((m) => m.round === round)).results;
  }

  async stats() {
    this.proc.send({ stats: true });
    return (await this.next((m) => m.stats)).stats;
  }

  async kill(signal = 'SIGKILL') {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.kill(signal);
    await exited;
  }
}

test('the databases of one process replicating into one folder share one process lease, each lock.json naming it, renewed by one thread', async () => {
  const { dir, replicas, url } = setup();
  const threadsBefore = leaseThreads();
  const dbs = [];
  for (let i = 0; i < 10; i++) {
    const db = await Database.open(path.join(dir, `t${i}.db`), { replica: { url: url(i), leaseTtl: TTL } });
    dbs.push(db);
  }
  try {
    const [file] = processLeases(replicas);
    assert.deepEqual(processLeases(replicas), [file], 'one process lease for ten databases');
    for (const [i, db] of dbs.entries()) {
      const { lock, record } = folderLease(path.join(replicas, `t${i}`));
      assert.equal(lock.owner, db.stats().replica.leaseHolder);
      assert.equal(lock.process_lease, `.offloop/leases/${file}`);
      assert.ok(Date.parse(record.expires_at) > Date.now(), record.expires_at);
    }
    assert.equal(leaseThreads() - threadsBefore, 1, 'one lease thread for ten databases');
    // Renewed for all: live two TTLs on, and every database writes.
    await sleep(2 * TTL);
    for (const db of dbs) await db.exec('CREATE TABLE IF NOT EXISTS t(v)');
    assert.ok(folderLease(path.join(replicas, 't0')).expiresAt > Date.now());
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
  }
  const { record } = folderLease(path.join(replicas, 't0'));
  assert.equal(Date.parse(record.expires_at), 0, 'the last close released the process lease');
  assert.equal(leaseThreads(), threadsBefore, 'and its thread ended');
});

test('idle databases under one S3 prefix renew one lease object: their lease writes a minute do not grow with their number', { skip: skipWithout('s3_test_server') }, async () => {
  const s3 = await startS3(['replica']);
  const proxy = await countingProxy(s3.port);
  const take = proxy.take;
  const dir = tempDir();
  const options = (i) => ({
    url: `s3://replica/tenants/t${i}`,
    endpoint: proxy.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    ...S3_KEYS,
    leaseTtl: TTL,
    syncInterval: 50,
  });
  const dbs = [];
  /** Lease writes over 2 TTLs of idleness (a renewal every TTL / 3: 6). */
  const idleLeaseWrites = async () => {
    await sleep(500);
    take();
    await sleep(2 * TTL);
    const idle = take();
    assert.equal(idle['PUT lease'], undefined, `no lock.json is written while idle: ${JSON.stringify(idle)}`);
    return idle['PUT process-lease'] ?? 0;
  };
  try {
    dbs.push(await Database.open(path.join(dir, 't0.db'), { replica: options(0) }));
    const one = await idleLeaseWrites();
    for (let i = 1; i < 20; i++) dbs.push(await Database.open(path.join(dir, `t${i}.db`), { replica: options(i) }));
    const twenty = await idleLeaseWrites();
    // One lease a database renewed every TTL / 3 would be 20 × 6 = 120.
    assert.ok(one >= 4 && one <= 8, `one database: ${one} lease writes`);
    assert.ok(twenty <= one + 2, `twenty databases: ${twenty} lease writes, one: ${one}`);
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
    await proxy.stop();
    await s3.stop();
  }
});

test('a takeover of one database of a paused process replaces its process lease; resumed, the process is fenced on every database it held there', async () => {
  const { dir, replicas, url } = setup();
  const old = new Tenants(dir, replicas, 3, { leaseTtl: TTL, syncInterval: 50 });
  const taken = [];
  try {
    await old.next((m) => m.opened);
    assert.deepEqual(await old.write(), ['acked', 'acked', 'acked']);
    await waitFor('the writes in the replicas', async () => (await old.stats()).every((s) => s.txid > 0 && s.pendingFiles === 0));
    const t0 = path.join(replicas, 't0');
    const { file } = folderLease(t0);
    await renewed(t0);
    old.proc.kill('SIGSTOP');
    await sleep(Math.max(0, folderLease(t0).expiresAt - Date.now()) + 50);
    // Another writer takes one of its databases over.
    const fresh = await Database.open(path.join(dir, 'new0.db'), { replica: { url: url(0), leaseTtl: TTL }, restore: 'full' });
    taken.push(fresh);
    const replaced = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.equal(Date.parse(replaced.expires_at), 0, 'the paused process lease was replaced, expired for good');
    assert.equal(replaced.owner, fresh.stats().replica.leaseHolder);
    old.proc.kill('SIGCONT');
    // Every database of the old process refuses its writes, not only the
    // one taken, and is fenced for good.
    assert.deepEqual(await old.write(), ['ERR_OFFLOOP_FENCED', 'ERR_OFFLOOP_FENCED', 'ERR_OFFLOOP_FENCED']);
    const stats = await waitFor('the fence of every database', async () => {
      const stats = await old.stats();
      return stats.every((s) => s.fenced) && stats;
    });
    for (const s of stats) assert.match(s.lastError, /lease/);
    assert.deepEqual(await old.write(), ['ERR_OFFLOOP_FENCED', 'ERR_OFFLOOP_FENCED', 'ERR_OFFLOOP_FENCED']);
    // Its other databases are free at once.
    taken.push(await Database.open(path.join(dir, 'new1.db'), { replica: { url: url(1), leaseTtl: TTL }, restore: 'full' }));
    await fresh.exec('INSERT INTO t(v) VALUES (1)');
  } finally {
    await old.kill();
    await Promise.all(taken.map((db) => db.close()));
  }
});

test('after SIGKILL, the same database reopened takes its own lease back at once, which frees the dead process’s other databases too', async () => {
  const { dir, replicas, url } = setup();
  const old = new Tenants(dir, replicas, 2, { leaseTtl: 60_000, syncInterval: 50 });
  const opened = [];
  try {
    const { holders } = await old.next((m) => m.opened);
    assert.deepEqual(await old.write(), ['acked', 'acked']);
    await waitFor('the writes in the replicas', async () => (await old.stats()).every((s) => s.txid > 0 && s.pendingFiles === 0));
    await old.kill();
    // The dead process's lease lives on for its minute...
    await assert.rejects(
      Database.open(path.join(dir, 'other1.db'), { replica: { url: url(1), leaseTtl: 60_000 }, restore: 'full' }),
      (err) => err.code === 'ERR_OFFLOOP_REPLICA' && err.message.includes(holders[1]),
    );
    // ...but the same database is the same holder, and takes it at once.
    const again = await Database.open(path.join(dir, 't0.db'), { replica: { url: url(0), leaseTtl: 60_000 } });
    opened.push(again);
    assert.equal(again.stats().replica.leaseHolder, holders[0]);
    // Which replaced the dead process's lease: its other database is free.
    opened.push(await Database.open(path.join(dir, 'other1.db'), { replica: { url: url(1), leaseTtl: 60_000 }, restore: 'full' }));
    assert.ok(processLeases(replicas).length >= 1);
  } finally {
    await old.kill();
    await Promise.all(opened.map((db) => db.close()));
  }
});

test("a follower with promote: 'auto' reads the process lease: no promotion while the writer renews it, one once the writer is paused past it", async () => {
  const { dir, replicas, url } = setup();
  const replicaDir = path.join(replicas, 't0');
  const old = new Writer(path.join(dir, 'primary.db'), url(0), { leaseTtl: TTL, syncInterval: 50 });
  let follower;
  try {
    await old.next((m) => m.opened);
    await old.write(3);
    const { txid } = await waitFor('the writes in the replica', async () => {
      const stats = await old.stats();
      return stats.pendingFiles === 0 && stats.lagMs === 0 && stats.txid > 0 && stats;
    });
    follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url: url(0), pollInterval: 50, leaseTtl: TTL, promote: 'auto' } });
    await follower.catchUp({ txid, timeout: DEADLINE_MS });
    await sleep(2 * TTL);
    // lock.json's own expires_at passed long ago (it is written once); the
    // process lease it names is renewed, and the follower goes by that.
    assert.ok(Date.parse(folderLease(replicaDir).lock.expires_at) < Date.now() - TTL);
    assert.notEqual(follower.stats().follow, null, 'no promotion while the process lease is renewed');
    await renewed(replicaDir);
    old.proc.kill('SIGSTOP');
    await waitFor('the promotion', () => follower.stats().follow === null, DEADLINE_MS);
    old.proc.kill('SIGCONT');
    await old.write(1);
    assert.deepEqual(old.refusedCodes(), ['ERR_OFFLOOP_FENCED']);
    await follower.prepare('INSERT INTO t(v) VALUES (?)').run('after');
  } finally {
    await old.kill();
    await follower?.close();
  }
});
