// Promotion on one host, with a folder replica: a follower's promote()
// catches up, takes the lease and writes from the next TXID with an
// incremental L0 file; it is refused (and keeps following) while the
// writer's lease is live; of two followers promoting at once exactly one
// wins and the other follows it; `promote: 'auto'` promotes once a killed
// writer's lease expires and emits 'promoted'; and a fenced old primary
// reopened with `follow` sets its file aside, never deleting it, and
// follows the new writer; and the promoted writer uploads every
// `follow.syncInterval`.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import { Database, assertContiguous, folderTxids, litestream, skipWithout, tables, tempDir, waitFor } from '../replication/helpers.mjs';
import { Writer } from '../replication/hosts.mjs';

const skipLitestream = skipWithout('litestream');
// The shortest lease offloop takes.
const TTL = 3000;
const DEADLINE_MS = 30_000;
const FOLLOW = { pollInterval: 50, leaseTtl: TTL };

function setup() {
  const dir = tempDir();
  const replicaDir = path.join(dir, 'replica');
  return { dir, replicaDir, url: pathToFileURL(replicaDir).href, file: (name) => path.join(dir, name) };
}

const values = async (db) => (await db.prepare('SELECT v FROM t ORDER BY rowid').all()).map((r) => r.v);

/** A writer (this process) with a few rows in t, all in the replica. */
async function writer(url, file, leaseTtl = TTL) {
  const db = await Database.open(file, { replica: { url, leaseTtl, syncInterval: 50 } });
  await db.exec('CREATE TABLE t(v TEXT)');
  for (const v of ['a', 'b', 'c']) await db.prepare('INSERT INTO t VALUES (?)').run(v);
  const { txid } = await db.syncReplica();
  return { db, txid };
}

test('promote() catches up, takes the lease, and writes from the next TXID with an incremental L0 file', { skip: skipLitestream }, async () => {
  const { dir, replicaDir, url, file } = setup();
  const { db: primary, txid } = await writer(url, file('primary.db'));
  const follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW } });
  try {
    await follower.catchUp({ txid, timeout: DEADLINE_MS });
    // More the follower has not seen yet: promote() catches up first.
    await primary.prepare('INSERT INTO t VALUES (?)').run('d');
    const { txid: head } = await primary.syncReplica();
    await primary.close();
    await assert.rejects(follower.exec("INSERT INTO t VALUES ('refused')"), { sqliteCode: 'SQLITE_READONLY' });
    const promoted = await follower.promote();
    assert.deepEqual(promoted, { txid: head });
    assert.equal(follower.stats().follow, null);
    const replica = follower.stats().replica;
    assert.equal(typeof replica.leaseHolder, 'string');
    assert.equal(replica.fenced, false);
    assert.equal((await follower.prepare('PRAGMA query_only').get()).query_only, 0);
    await follower.prepare('INSERT INTO t VALUES (?)').run('e');
    assert.deepEqual(await follower.syncReplica(), { txid: head + 1 });
    assert.deepEqual(await values(follower), ['a', 'b', 'c', 'd', 'e']);
    // TXID head + 1 is an incremental file (not a full image from 1), and
    // the chain has no gap.
    const l0 = folderTxids(replicaDir);
    assert.ok(l0.some(([min, max]) => min === head + 1 && max === head + 1), JSON.stringify(l0));
    assertContiguous(assert, l0);
    const name = `${(head + 1).toString(16).padStart(16, '0')}-${(head + 1).toString(16).padStart(16, '0')}.ltx`;
    const size = fs.statSync(path.join(replicaDir, 'ltx', '0', name)).size;
    assert.ok(size < 4 * 4096, `an L0 file of ${size} bytes`);
    // The replica is the promoted writer's, as litestream restores it.
    const out = path.join(dir, 'restored.db');
    await litestream(['restore', '-o', out, url]);
    const restored = await Database.open(out, { readOnly: true });
    assert.deepEqual(await tables(restored), await tables(follower));
    await restored.close();
    await assert.rejects(follower.catchUp(), { code: 'ERR_INVALID_STATE' });
  } finally {
    await follower.close();
  }
});

test("promote() rejects ERR_OFFLOOP_REPLICA naming the holder while the writer's lease is live, and the database keeps following", async () => {
  const { url, file } = setup();
  const { db: primary, txid } = await writer(url, file('primary.db'), 60_000);
  const follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW } });
  try {
    await follower.catchUp({ txid, timeout: DEADLINE_MS });
    const holder = primary.stats().replica.leaseHolder;
    await assert.rejects(follower.promote(), (err) => {
      assert.equal(err.code, 'ERR_OFFLOOP_REPLICA');
      assert.ok(err.message.includes(holder), err.message);
      return true;
    });
    await primary.prepare('INSERT INTO t VALUES (?)').run('later');
    const { txid: next } = await primary.syncReplica();
    await follower.catchUp({ txid: next, timeout: DEADLINE_MS });
    assert.deepEqual(await values(follower), ['a', 'b', 'c', 'later']);
    assert.notEqual(follower.stats().follow, null);
    await assert.rejects(follower.exec("INSERT INTO t VALUES ('refused')"), { sqliteCode: 'SQLITE_READONLY' });
    // The primary never lost its lease.
    await primary.prepare('INSERT INTO t VALUES (?)').run('still');
    assert.equal(primary.stats().replica.fenced, false);
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('of two followers promoting at once exactly one wins; the other keeps following the winner', async () => {
  const { replicaDir, url, file } = setup();
  const { db: primary, txid } = await writer(url, file('primary.db'));
  const a = await Database.open(file('a.db'), { follow: { url, ...FOLLOW } });
  const b = await Database.open(file('b.db'), { follow: { url, ...FOLLOW } });
  try {
    await a.catchUp({ txid, timeout: DEADLINE_MS });
    await b.catchUp({ txid, timeout: DEADLINE_MS });
    await primary.close();
    const outcomes = await Promise.allSettled([a.promote(), b.promote()]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(won.length, 1, JSON.stringify(outcomes.map((o) => o.reason?.message)));
    const lost = outcomes.find((o) => o.status === 'rejected');
    assert.equal(lost.reason.code, 'ERR_OFFLOOP_REPLICA');
    const [winner, loser] = outcomes[0].status === 'fulfilled' ? [a, b] : [b, a];
    await winner.prepare('INSERT INTO t VALUES (?)').run('won');
    const { txid: next } = await winner.syncReplica();
    await loser.catchUp({ txid: next, timeout: DEADLINE_MS });
    assert.deepEqual(await values(loser), ['a', 'b', 'c', 'won']);
    assertContiguous(assert, folderTxids(replicaDir));
  } finally {
    await a.close();
    await b.close();
  }
});

test("promote: 'auto' promotes a follower once a killed writer's lease expired, and emits 'promoted'", async () => {
  const { url, file } = setup();
  const old = new Writer(file('primary.db'), url, { leaseTtl: TTL, syncInterval: 50 });
  let follower;
  try {
    await old.next((m) => m.opened);
    await old.write(5);
    const { txid } = await waitFor('the writes in the replica', async () => {
      const stats = await old.stats();
      return stats.pendingFiles === 0 && stats.lagMs === 0 && stats.txid > 0 && stats;
    });
    follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW, promote: 'auto' } });
    const promoted = new Promise((resolve) => follower.once('promoted', resolve));
    await follower.catchUp({ txid, timeout: DEADLINE_MS });
    await sleep(300);
    assert.notEqual(follower.stats().follow, null, 'no promotion while the lease is live');
    await old.kill();
    // An open database keeps no process alive: this wait does.
    await waitFor('the promotion', () => follower.stats().follow === null);
    assert.deepEqual(await promoted, { txid });
    assert.equal(follower.stats().follow, null);
    await follower.prepare('INSERT INTO t(v) VALUES (?)').run('after');
    assert.equal((await follower.prepare('SELECT count(*) AS n FROM t').get()).n, 6);
  } finally {
    await old.kill();
    await follower?.close();
  }
});

test('a fenced old primary reopened with follow keeps its file aside, -wal and all, and follows the new writer', async () => {
  const { url, file } = setup();
  const oldFile = file('old.db');
  const old = new Writer(oldFile, url, { leaseTtl: TTL, syncInterval: 50 });
  let follower;
  try {
    await old.next((m) => m.opened);
    await old.write(3);
    await waitFor('the writes in the replica', async () => {
      const stats = await old.stats();
      return stats.pendingFiles === 0 && stats.lagMs === 0 && stats.txid > 0;
    });
    follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW, promote: 'auto' } });
    const promoted = new Promise((resolve) => follower.once('promoted', resolve));
    old.proc.kill('SIGSTOP');
    await waitFor('the promotion', () => follower.stats().follow === null);
    await promoted;
    await follower.prepare('INSERT INTO t(v) VALUES (?)').run('new');
    await follower.syncReplica();
    old.proc.kill('SIGCONT');
    await old.write(2);
    assert.deepEqual(
      old.messages.filter((m) => m.refused).map((m) => m.refused),
      ['ERR_OFFLOOP_FENCED', 'ERR_OFFLOOP_FENCED'],
    );
    old.send({ close: true });
    await old.next((m) => m.closed);
    await old.kill();
    const before = fs.readdirSync(path.dirname(oldFile)).filter((n) => n.startsWith('old.db'));
    const rejoined = await Database.open(oldFile, { follow: { url, ...FOLLOW } });
    try {
      const { keptFile } = rejoined.stats().follow;
      assert.equal(typeof keptFile, 'string');
      assert.ok(path.basename(keptFile).startsWith('old.db.diverged-'), keptFile);
      // Kept whole: it opens, and holds the old primary's rows.
      const kept = await Database.open(keptFile, { readOnly: true });
      assert.equal((await kept.prepare('SELECT count(*) AS n FROM t').get()).n, 3);
      await kept.close();
      assert.ok(fs.existsSync(`${keptFile}-replica`));
      assert.ok(before.includes('old.db-replica'), JSON.stringify(before));
      const { txid } = await follower.syncReplica();
      await rejoined.catchUp({ txid, timeout: DEADLINE_MS });
      assert.deepEqual(await tables(rejoined), await tables(follower));
    } finally {
      await rejoined.close();
    }
  } finally {
    await old.kill();
    await follower?.close();
  }
});

test("a file that was no writer's of this replica is still refused, and left as it is", async () => {
  const { url, file } = setup();
  const { db: primary } = await writer(url, file('primary.db'));
  await primary.close();
  // A writer's file, of another replica.
  const { url: other } = setup();
  const stranger = await Database.open(file('stranger.db'), { replica: { url: other, leaseTtl: TTL } });
  await stranger.exec('CREATE TABLE mine(x)');
  await stranger.close();
  await assert.rejects(Database.open(file('stranger.db'), { follow: { url, ...FOLLOW } }), { code: 'ERR_OFFLOOP_REPLICA' });
  const names = fs.readdirSync(path.dirname(file('stranger.db'))).filter((n) => n.includes('diverged'));
  assert.deepEqual(names, []);
});

test('a promoted database reopened as a writer carries on its chain: the next TXID, the same holder, no gap', async () => {
  const { replicaDir, url, file } = setup();
  const { db: primary } = await writer(url, file('primary.db'));
  await primary.close();
  const promoted = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW } });
  const { txid: head } = await promoted.promote();
  const holder = promoted.stats().replica.leaseHolder;
  await promoted.prepare('INSERT INTO t VALUES (?)').run('d');
  assert.deepEqual(await promoted.syncReplica(), { txid: head + 1 });
  await promoted.close();
  assert.equal(fs.existsSync(`${file('follower.db')}-follow`), false, "the follower's record is gone");
  const again = await Database.open(file('follower.db'), { replica: { url, leaseTtl: TTL } });
  try {
    assert.equal(again.stats().replica.leaseHolder, holder);
    await again.prepare('INSERT INTO t VALUES (?)').run('e');
    const { txid } = await again.syncReplica();
    assert.ok(txid > head + 1);
    assert.equal(again.stats().replica.lastError, null);
    assertContiguous(assert, folderTxids(replicaDir));
    assert.deepEqual(await values(again), ['a', 'b', 'c', 'd', 'e']);
  } finally {
    await again.close();
  }
});

test("the promoted writer uploads every follow.syncInterval, which is checked as replica.syncInterval is", async () => {
  const { replicaDir, url, file } = setup();
  assert.throws(() => new Database(file('bad.db'), { follow: { url, syncInterval: 0 } }), {
    code: 'ERR_OUT_OF_RANGE',
    message: /options\.follow\.syncInterval/,
  });
  assert.throws(() => new Database(file('bad.db'), { follow: { url, syncInterval: '1s' } }), { code: 'ERR_INVALID_ARG_TYPE' });
  const { db: primary } = await writer(url, file('primary.db'));
  await primary.close();
  // Far longer than the test: nothing is uploaded but by syncReplica().
  const follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW, syncInterval: 600_000 } });
  try {
    const { txid: head } = await follower.promote();
    await follower.prepare('INSERT INTO t VALUES (?)').run('d');
    // Past the default interval (1 s), with room for a loaded machine.
    await sleep(2500);
    const name = (txid) => `${txid.toString(16).padStart(16, '0')}-${txid.toString(16).padStart(16, '0')}.ltx`;
    assert.equal(fs.existsSync(path.join(replicaDir, 'ltx', '0', name(head + 1))), false, 'uploaded before syncInterval');
    assert.deepEqual(await follower.syncReplica(), { txid: head + 1 });
    assert.equal(fs.existsSync(path.join(replicaDir, 'ltx', '0', name(head + 1))), true);
  } finally {
    await follower.close();
  }
});

test('a promotion reaches the head through a full image in L0 at the next TXID followed by more TXIDs', async () => {
  const { replicaDir, url, file } = setup();
  const { db: primary, txid: at } = await writer(url, file('primary.db'));
  // No poll before the promotion: it finds the rest itself.
  const follower = await Database.open(file('follower.db'), { follow: { url, ...FOLLOW, pollInterval: 600_000 } });
  try {
    await follower.catchUp({ txid: at, timeout: DEADLINE_MS });
    await waitFor("the follower's first check", () => follower.stats().follow.lastCheckAt !== null);
    await primary.prepare('INSERT INTO t VALUES (?)').run('d');
    assert.deepEqual(await primary.syncReplica(), { txid: at + 1 });
    await primary.prepare('INSERT INTO t VALUES (?)').run('e');
    const { txid: head } = await primary.syncReplica();
    await primary.close();
    // TXID at + 1 named as a full image that started the chain again there
    // (L0 names from TXID 1 sort before every other): what it holds
    // continues the database either way.
    const name = (min, max) => `${min.toString(16).padStart(16, '0')}-${max.toString(16).padStart(16, '0')}.ltx`;
    const l0 = path.join(replicaDir, 'ltx', '0');
    fs.renameSync(path.join(l0, name(at + 1, at + 1)), path.join(l0, name(1, at + 1)));
    assert.deepEqual(await follower.promote(), { txid: head });
    assert.deepEqual(await values(follower), ['a', 'b', 'c', 'd', 'e']);
  } finally {
    await follower.close();
  }
});
