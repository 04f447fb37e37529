// What a primary does that a follower must survive, with an offloop primary
// and with the real `litestream replicate`: a database that shrinks
// (VACUUM: the pages past the new size go), a primary that restarts,
// compaction with a follower that was away (it catches up through L1), a
// full image at the next TXID, and a next L0 file that never comes.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Database, mixedWorkload, skipWithout, startLitestream, tables, tempDir } from '../replication/helpers.mjs';

const skipLitestream = skipWithout('litestream');

async function pageCount(db) {
  return (await db.prepare('PRAGMA page_count').get()).page_count;
}

test('a VACUUM on the primary shrinks the follower: the pages past the new size go', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: { url, syncInterval: 50 } });
  await primary.exec('CREATE TABLE big(x BLOB)');
  await primary.batch(Array.from({ length: 400 }, () => ['INSERT INTO big VALUES (randomblob(4000))']));
  await primary.exec('CREATE TABLE keep(k)');
  await primary.exec("INSERT INTO keep VALUES ('kept')");
  await primary.syncReplica();
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 20 } });
  try {
    const grown = await pageCount(follower);
    assert.ok(grown > 400);
    await primary.exec('DELETE FROM big');
    await primary.exec('VACUUM');
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 20_000 });
    assert.equal(await pageCount(follower), await pageCount(primary));
    assert.ok((await pageCount(follower)) < grown / 10);
    assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    assert.deepEqual(await tables(follower), await tables(primary));
    await follower.checkpoint('TRUNCATE');
    assert.equal(await pageCount(follower), await pageCount(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('a follower carries on across a restart of its offloop primary', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const file = path.join(dir, 'primary.db');
  let primary = await Database.open(file, { replica: { url, syncInterval: 50 } });
  await primary.exec('CREATE TABLE t(x)');
  await primary.syncReplica();
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 20 } });
  try {
    for (let i = 0; i < 3; i++) {
      await primary.exec(`INSERT INTO t VALUES (${i})`);
      await primary.close();
      primary = await Database.open(file, { replica: { url, syncInterval: 50 } });
      await primary.exec(`INSERT INTO t VALUES (${i + 100})`);
      const { txid } = await primary.syncReplica();
      await follower.catchUp({ txid, timeout: 20_000 });
      assert.deepEqual(await tables(follower), await tables(primary));
    }
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('a follower that was away catches up through compacted files once the L0 files it needs are gone', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), {
    replica: { url, syncInterval: 20, compactionIntervals: [200] },
  });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  await primary.syncReplica();
  const file = path.join(dir, 'follower.db');
  let follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  const start = follower.stats().follow.txid;
  await follower.close();
  for (let i = 0; i < 30; i++) {
    await primary.prepare('INSERT INTO t(v) VALUES (?)').run(`row ${i}`);
    await primary.syncReplica();
  }
  const { txid } = await primary.syncReplica();
  // Wait for an L1 file covering what the follower needs, then take the
  // L0 files away as retention would.
  const l1 = path.join(dir, 'replica', 'ltx', '1');
  for (let i = 0; i < 200; i++) {
    const names = fs.existsSync(l1) ? fs.readdirSync(l1) : [];
    const covered = names.some((n) => Number.parseInt(n.slice(17, 33), 16) >= txid);
    if (covered) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const l0 = path.join(dir, 'replica', 'ltx', '0');
  for (const name of fs.readdirSync(l0)) {
    if (Number.parseInt(name.slice(0, 16), 16) > start) fs.rmSync(path.join(l0, name));
  }
  follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  try {
    await follower.catchUp({ txid, timeout: 20_000 });
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('a follower of a replica that `litestream replicate` writes equals its database after catchUp({ txid })', { skip: skipLitestream }, async () => {
  const dir = tempDir();
  const file = path.join(dir, 'app.db');
  // Litestream owns checkpoints here, as it does beside an application.
  const db = await Database.open(file, { checkpoint: false });
  await db.exec('CREATE TABLE seed(x)');
  const sidecar = await startLitestream(file, ['type: file', `path: ${dir}/replica`]);
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  let follower = null;
  try {
    await sidecar.sync();
    follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 50 } });
    await mixedWorkload(db);
    const { txid } = await sidecar.sync();
    await follower.catchUp({ txid, timeout: 30_000 });
    assert.deepEqual(await tables(follower), await tables(db));
    assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
  } finally {
    await follower?.close();
    await sidecar.stop();
    await db.close();
  }
});

/** Waits, without catchUp() (which lists), until the follower reaches `txid`. */
async function reaches(follower, txid) {
  for (let i = 0; i < 1000 && follower.stats().follow.txid < txid; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(follower.stats().follow.txid >= txid, `stuck at ${follower.stats().follow.txid} of ${txid}`);
}

test('a full image at the next TXID (a database changed behind the primary, then one restored to an earlier point) is applied by polling alone', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const file = path.join(dir, 'primary.db');
  let primary = await Database.open(file, { replica: { url, syncInterval: 50 } });
  await primary.exec('CREATE TABLE t(x)');
  const created = (await primary.syncReplica()).txid;
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 10 } });
  try {
    // Changed while nothing replicated it: the next open ships a full image.
    await primary.close();
    const bare = await Database.open(file);
    await bare.exec("INSERT INTO t VALUES ('behind its back')");
    await bare.close();
    primary = await Database.open(file, { replica: { url, syncInterval: 50 } });
    await primary.exec("INSERT INTO t VALUES ('after')");
    let { txid } = await primary.syncReplica();
    await reaches(follower, txid);
    assert.deepEqual(await tables(follower), await tables(primary));
    // Restored to an earlier TXID and replicating again: the replica is
    // ahead, so the primary ships a full image at its next TXID.
    await primary.close();
    await Database.restore(url, path.join(dir, 'earlier.db'), { txid: created });
    primary = await Database.open(path.join(dir, 'earlier.db'), { replica: { url, syncInterval: 50 } });
    await primary.syncReplica();
    await primary.exec("INSERT INTO t VALUES ('from the earlier state')");
    ({ txid } = await primary.syncReplica());
    await reaches(follower, txid);
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('a next L0 file that never comes while later ones do (a gap a compaction covers) is found by polling alone', async () => {
  const dir = tempDir();
  const source = path.join(dir, 'replica');
  const mirror = path.join(dir, 'mirror');
  const primary = await Database.open(path.join(dir, 'primary.db'), {
    replica: { url: pathToFileURL(source).href, syncInterval: 20, compactionIntervals: [100] },
  });
  await primary.exec('CREATE TABLE t(x)');
  await primary.syncReplica();
  // The follower reads a copy of the replica that the test fills itself.
  const copy = (filter) => {
    for (const level of fs.readdirSync(path.join(source, 'ltx'))) {
      fs.mkdirSync(path.join(mirror, 'ltx', level), { recursive: true });
      for (const name of fs.readdirSync(path.join(source, 'ltx', level))) {
        if (filter(Number(level), name)) fs.copyFileSync(path.join(source, 'ltx', level, name), path.join(mirror, 'ltx', level, name));
      }
    }
  };
  copy(() => true);
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url: pathToFileURL(mirror).href, pollInterval: 10 } });
  try {
    const at = follower.stats().follow.txid;
    for (let i = 0; i < 5; i++) {
      await primary.exec(`INSERT INTO t VALUES (${i})`);
      await primary.syncReplica();
    }
    // Compaction runs after a round that ships, once its interval passed
    // since the last: past the interval, one more write ships and
    // compacts every L0 file up to it, however fast the writes above ran.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await primary.exec('INSERT INTO t VALUES (5)');
    const { txid } = await primary.syncReplica();
    // Wait for an L1 file reaching the last TXID.
    const l1 = path.join(source, 'ltx', '1');
    const compacted = () => (fs.existsSync(l1) ? fs.readdirSync(l1) : []).some((n) => Number.parseInt(n.slice(17, 33), 16) >= txid);
    for (let i = 0; i < 400 && !compacted(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(compacted(), `no L1 file reaches TXID ${txid}`);
    // Every new file but the next L0 one.
    copy((level, name) => !(level === 0 && Number.parseInt(name.slice(0, 16), 16) === at + 1));
    await reaches(follower, txid);
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});
