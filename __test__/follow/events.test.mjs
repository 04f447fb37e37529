// More of what a primary does that a follower must survive, beside
// primaries.test.mjs: a new snapshot that is all that is left of what the
// follower needs (offloop's retention, and Litestream's snapshot with the
// files before it gone), and, with the real `litestream replicate` as the
// primary, a restart, a restore to an earlier TXID that then replicates
// again, and a full image after the WAL restarted behind its back. What
// Litestream 0.5.17 writes in the last two cases was checked: a full image
// of the database under the next TXID's L0 name (past the replica's newest
// TXID, so no TXID name is reused), and a snapshot a second after it starts.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Database, litestream, skipWithout, startLitestream, tables, tempDir } from '../replication/helpers.mjs';

const skipLitestream = skipWithout('litestream');

/** The LTX files of the folder replica at `root`: `{ level, min, max, file }`. */
function files(root) {
  const out = [];
  const ltx = path.join(root, 'ltx');
  if (!fs.existsSync(ltx)) return out;
  for (const level of fs.readdirSync(ltx)) {
    for (const name of fs.readdirSync(path.join(ltx, level))) {
      const m = /^([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/.exec(name);
      if (m === null) continue;
      out.push({ level: Number(level), min: Number.parseInt(m[1], 16), max: Number.parseInt(m[2], 16), file: path.join(ltx, level, name) });
    }
  }
  return out;
}

async function until(what, check) {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function pageCount(db) {
  return (await db.prepare('PRAGMA page_count').get()).page_count;
}

/**
 * The follower's tables and size equal the primary's; once checkpointed,
 * its file holds exactly its pages (the pages past a smaller database's
 * end went: the header's page count alone would hide them).
 */
async function assertEqual(follower, primary) {
  assert.deepEqual(await tables(follower), await tables(primary));
  const pages = await pageCount(follower);
  assert.equal(pages, await pageCount(primary));
  assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
  await follower.checkpoint('TRUNCATE');
  const { page_size: size } = await follower.prepare('PRAGMA page_size').get();
  assert.equal(fs.statSync(follower.location()).size, pages * size);
}

test('a follower that was away catches up through a new snapshot once retention removed the files after its TXID', async () => {
  const dir = tempDir();
  const root = path.join(dir, 'replica');
  const url = pathToFileURL(root).href;
  // Retention runs after a compaction: every 100 ms here.
  const replica = { url, syncInterval: 20, compactionIntervals: [100], snapshotInterval: 200, retention: 1 };
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  await primary.syncReplica();
  const file = path.join(dir, 'follower.db');
  let follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  const at = follower.stats().follow.txid;
  await follower.close();
  for (let i = 0; i < 20; i++) {
    await primary.prepare('INSERT INTO t(v) VALUES (?)').run(`row ${i}`);
    await primary.syncReplica();
  }
  const { txid } = await primary.syncReplica();
  // Retention leaves a snapshot past the follower's TXID and nothing that
  // continues the follower from where it stopped.
  await until('a snapshot past the follower, and no file continuing it', () => {
    const all = files(root);
    return all.some((f) => f.level === 9 && f.max > at) && !all.some((f) => f.level < 9 && f.min <= at + 1 && f.max > at);
  });
  follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  try {
    await follower.catchUp({ txid, timeout: 20_000 });
    await assertEqual(follower, primary);
  } finally {
    await follower.close();
    await primary.close();
  }
});

/** `litestream replicate` beside an offloop database that leaves it the checkpoints. */
async function litestreamPrimary(dir, name = 'app.db', topYaml = []) {
  const file = path.join(dir, name);
  const db = await Database.open(file, { checkpoint: false });
  const root = path.join(dir, 'replica');
  const sidecar = await startLitestream(file, ['type: file', `path: ${root}`], {}, topYaml);
  return { file, db, root, sidecar, url: pathToFileURL(root).href };
}

test('a Litestream primary: a follower that was away catches up through its new snapshot alone', { skip: skipLitestream }, async () => {
  const dir = tempDir();
  // A snapshot every second (the default is a day).
  const { db, root, sidecar, url } = await litestreamPrimary(dir, 'app.db', ['snapshot:', '  interval: 1s']);
  let follower = null;
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    await sidecar.sync();
    const followerFile = path.join(dir, 'follower.db');
    follower = await Database.open(followerFile, { follow: { url, pollInterval: 20 } });
    const at = follower.stats().follow.txid;
    await follower.close();
    follower = null;
    for (let i = 0; i < 10; i++) {
      await db.prepare('INSERT INTO t(v) VALUES (?)').run(`row ${i}`);
      await sidecar.sync();
    }
    const { txid } = await sidecar.sync();
    await until('a Litestream snapshot at the last TXID', () => files(root).some((f) => f.level === 9 && f.max >= txid));
    await sidecar.stop();
    // As retention would: only the snapshot covers what the follower lacks.
    for (const f of files(root)) if (f.level < 9 && f.max > at) fs.rmSync(f.file);
    follower = await Database.open(followerFile, { follow: { url, pollInterval: 20 } });
    await follower.catchUp({ txid, timeout: 20_000 });
    await assertEqual(follower, db);
  } finally {
    await follower?.close();
    await sidecar.stop();
    await db.close();
  }
});

test('a Litestream primary restarting: the follower carries on', { skip: skipLitestream }, async () => {
  const dir = tempDir();
  let { file, db, root, sidecar, url } = await litestreamPrimary(dir);
  let follower = null;
  try {
    await db.exec('CREATE TABLE t(x)');
    await sidecar.sync();
    follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 20 } });
    for (let i = 0; i < 3; i++) {
      await db.exec(`INSERT INTO t VALUES (${i})`);
      await sidecar.sync();
      await sidecar.stop();
      await db.close();
      db = await Database.open(file, { checkpoint: false });
      sidecar = await startLitestream(file, ['type: file', `path: ${root}`]);
      await db.exec(`INSERT INTO t VALUES (${i + 100})`);
      const { txid } = await sidecar.sync();
      await follower.catchUp({ txid, timeout: 20_000 });
      await assertEqual(follower, db);
    }
  } finally {
    await follower?.close();
    await sidecar.stop();
    await db.close();
  }
});

test('a Litestream primary restored to an earlier TXID and replicating again: the follower goes back with it', { skip: skipLitestream }, async () => {
  const dir = tempDir();
  let { db, root, sidecar, url } = await litestreamPrimary(dir);
  let follower = null;
  try {
    await db.exec('CREATE TABLE t(x)');
    await db.exec('CREATE TABLE big(x BLOB)');
    await db.exec("INSERT INTO t VALUES ('kept')");
    const kept = (await sidecar.sync()).txid;
    follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 20 } });
    await db.batch(Array.from({ length: 300 }, () => ['INSERT INTO big VALUES (randomblob(4000))']));
    await db.exec("INSERT INTO t VALUES ('lost by the restore')");
    const newest = (await sidecar.sync()).txid;
    await follower.catchUp({ txid: newest, timeout: 20_000 });
    const grown = await pageCount(follower);
    await sidecar.stop();
    await db.close();
    const earlier = path.join(dir, 'earlier.db');
    await litestream(['restore', '-txid', kept.toString(16).padStart(16, '0'), '-o', earlier, url]);
    ({ db, sidecar } = await litestreamPrimary(dir, 'earlier.db'));
    await db.exec("INSERT INTO t VALUES ('from the earlier state')");
    const { txid } = await sidecar.sync();
    // Litestream wrote the restored database whole under the TXID after
    // the replica's newest: applying it takes the follower back, the pages
    // past its size gone.
    assert.ok(txid > newest, 'TXIDs go on past the replica, none reused');
    assert.ok(files(root).some((f) => f.level === 0 && f.min === newest + 1));
    await follower.catchUp({ txid, timeout: 20_000 });
    await assertEqual(follower, db);
    assert.ok((await pageCount(follower)) < grown / 10);
    assert.deepEqual((await follower.prepare('SELECT x FROM t ORDER BY rowid').all()).map((r) => r.x), ['kept', 'from the earlier state']);
  } finally {
    await follower?.close();
    await sidecar.stop();
    await db.close();
  }
});

test('a Litestream primary whose WAL restarted behind its back: the follower applies its full image', { skip: skipLitestream }, async () => {
  const dir = tempDir();
  let { file, db, root, sidecar, url } = await litestreamPrimary(dir);
  let follower = null;
  try {
    await db.exec('CREATE TABLE t(x)');
    await db.exec('CREATE TABLE big(x BLOB)');
    await db.batch(Array.from({ length: 300 }, () => ['INSERT INTO big VALUES (randomblob(4000))']));
    let { txid } = await sidecar.sync();
    follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 20 } });
    await follower.catchUp({ txid, timeout: 20_000 });
    const grown = await pageCount(follower);
    // Litestream stopped; the database shrinks and its WAL restarts.
    await sidecar.stop();
    await db.exec('DELETE FROM big');
    await db.exec('VACUUM');
    await db.exec("INSERT INTO t VALUES ('behind its back')");
    await db.checkpoint('TRUNCATE');
    sidecar = await startLitestream(file, ['type: file', `path: ${root}`]);
    await db.exec("INSERT INTO t VALUES ('after')");
    ({ txid } = await sidecar.sync());
    await follower.catchUp({ txid, timeout: 20_000 });
    await assertEqual(follower, db);
    assert.ok((await pageCount(follower)) < grown / 10);
  } finally {
    await follower?.close();
    await sidecar.stop();
    await db.close();
  }
});
