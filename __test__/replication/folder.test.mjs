// Continuous replication to a folder replica, checked with the real
// Litestream: what offloop writes, `litestream restore` reads; under
// constant writes and checkpoints no commit goes missing and TXIDs stay
// contiguous; a kill mid-replication resumes on the next open; a replica
// that can never work fails the open with a clear error.

import assert from 'node:assert/strict';
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import {
  Database,
  assertContiguous,
  folderTxids,
  inspect,
  litestream,
  mixedWorkload,
  skipWithout,
  startLitestream,
  tables,
  tempDir,
} from './helpers.mjs';

const skip = skipWithout('litestream');
const HERE = path.dirname(fileURLToPath(import.meta.url));

async function litestreamRestore(url, out, extra = []) {
  await litestream(['restore', ...extra, '-o', out, url]);
  return inspect(out);
}

test('a folder replica offloop wrote restores with litestream, table by table at the synced TXID', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), { replica: { url } });
  await mixedWorkload(db);
  const { txid } = await db.syncReplica();
  assert.ok(txid >= 1);
  const expected = await tables(db);
  const stats = db.stats().replica;
  assert.equal(stats.url, url);
  assert.equal(stats.txid, txid);
  assert.equal(stats.pendingFiles, 0);
  assert.equal(stats.lastError, null);
  assert.ok(stats.bytesShipped > 0);
  // Writes after the sync are not part of the TXID restored below.
  await db.exec("INSERT INTO items(name) VALUES ('after the sync')");

  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'), ['-txid', txid.toString(16).padStart(16, '0')]);
  assert.equal(restored.integrity, 'ok');
  assert.deepEqual(restored.tables, expected);
  assert.ok(expected.later.length > 0, 'the table created midway is there');
  await db.close();
});

test('close ships every commit before it resolves', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), { replica: { url, syncInterval: 3_600_000 } });
  await mixedWorkload(db, 1);
  const expected = await tables(db);
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.deepEqual(restored.tables, expected);
});

test('under constant writes and checkpoints that restart the WAL, the restore equals the source and TXIDs are contiguous', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), {
    // Checkpoints and WAL restarts every few commits.
    checkpoint: { thresholdFrames: 8, idleMs: 5 },
    replica: { url, syncInterval: 20 },
  });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, pad BLOB)');
  const insert = db.prepare('INSERT INTO t(v, pad) VALUES (?, randomblob(600))');
  // Many writers at once; every result is checked.
  const writers = Array.from({ length: 4 }, async (_, w) => {
    const ids = [];
    for (let i = 0; i < 150; i++) ids.push((await insert.run(`w${w}-${i}`)).lastInsertRowid);
    return ids;
  });
  const ids = (await Promise.all(writers)).flat();
  assert.equal(new Set(ids).size, 600);
  const { txid } = await db.syncReplica();
  const checkpoint = db.stats().checkpoint;
  assert.ok(checkpoint.runs > 0, 'the checkpointer ran while replicating');
  const expected = await tables(db);
  await db.close();

  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.equal(restored.integrity, 'ok');
  assert.deepEqual(restored.tables, expected);
  const l0 = folderTxids(path.join(dir, 'replica'));
  assert.equal(l0[0][0], 1);
  assertContiguous(assert, l0);
  assert.ok(l0.at(-1)[1] >= txid);
});

test('point-in-time restore by TXID and by timestamp returns the database as it was then', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), { replica: { url, syncInterval: 3_600_000 } });
  await db.exec('CREATE TABLE t(n INTEGER)');
  const points = [];
  for (let n = 1; n <= 3; n++) {
    await db.prepare('INSERT INTO t VALUES (?)').run(n);
    const { txid } = await db.syncReplica();
    points.push({ txid, at: new Date(), tables: await tables(db) });
    // Timestamps are milliseconds: keep the points apart.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await db.close();
  for (const [i, point] of points.entries()) {
    const byTxid = await litestreamRestore(url, path.join(dir, `txid-${i}.db`), ['-txid', point.txid.toString(16).padStart(16, '0')]);
    assert.deepEqual(byTxid.tables, point.tables);
    // Litestream restores by timestamp only inside the replica's time span,
    // from files written strictly before it: the last point has no time
    // after it in the replica.
    if (i === points.length - 1) continue;
    const byTime = await litestreamRestore(url, path.join(dir, `time-${i}.db`), ['-timestamp', point.at.toISOString()]);
    assert.deepEqual(byTime.tables, point.tables);
  }
});

test('after a SIGKILL mid-replication, the next open resumes: every commit up to the last resolved syncReplica is restorable, with no TXID gap or duplicate', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const file = path.join(dir, 'app.db');
  const child = fork(path.join(HERE, 'writer.mjs'), [file, url], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let synced = 0;
  await new Promise((resolve, reject) => {
    child.on('message', (m) => {
      synced = m.synced;
      // Killed with uploads and captures in flight.
      if (m.round >= 8) child.kill('SIGKILL');
    });
    child.on('exit', resolve);
    child.on('error', reject);
  });
  assert.ok(synced > 0, 'the writer synced before it was killed');

  const db = await Database.open(file, { replica: { url } });
  const rows = (await db.prepare('SELECT count(*) AS n FROM t').get()).n;
  assert.ok(rows >= synced);
  await db.prepare('INSERT INTO t(v) VALUES (?)').run('after the restart');
  await db.syncReplica();
  const expected = await tables(db);
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.equal(restored.integrity, 'ok');
  assert.deepEqual(restored.tables, expected);
  const l0 = folderTxids(path.join(dir, 'replica'));
  assertContiguous(assert, l0);
});

test('replicate() starts replicating an open database and stopReplicating() ships and stops', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'));
  assert.equal(db.stats().replica, null);
  await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
  const { txid } = await db.replicate({ url });
  assert.ok(txid >= 0);
  await assert.rejects(db.replicate({ url }), { code: 'ERR_INVALID_STATE' });
  await db.exec('INSERT INTO t VALUES (2)');
  const stopped = await db.stopReplicating();
  assert.ok(stopped.txid >= 1);
  assert.equal(db.stats().replica, null);
  const expected = await tables(db);
  await db.exec('INSERT INTO t VALUES (3)');
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.deepEqual(restored.tables, expected);
});

test('replicate() refuses a database opened so that it could not replicate from its open', async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const file = path.join(dir, 'app.db');
  const writable = await Database.open(file, { checkpoint: false });
  await writable.exec('CREATE TABLE t(v)');
  await assert.rejects(writable.replicate({ url }), (err) => err.code === 'ERR_INVALID_STATE' && /checkpointer/.test(err.message));
  assert.equal(writable.stats().replica, null);
  await writable.close();
  const readOnly = await Database.open(file, { readOnly: true });
  await assert.rejects(readOnly.replicate({ url }), (err) => err.code === 'ERR_INVALID_STATE' && /read-only/.test(err.message));
  await readOnly.close();
  assert.equal(fs.existsSync(`${dir}/replica`), false, 'nothing was replicated');
});

test('replicate() after stopCheckpointer() takes automatic checkpoints back from SQLite until stopReplicating()', async () => {
  const dir = tempDir();
  const db = await Database.open(path.join(dir, 'app.db'));
  const autocheckpoint = async () => (await db.prepare('PRAGMA wal_autocheckpoint').get()).wal_autocheckpoint;
  try {
    await db.exec('CREATE TABLE t(v)');
    await db.stopCheckpointer();
    await db.exec('INSERT INTO t VALUES (1)');
    assert.equal(await autocheckpoint(), 1000);
    await db.replicate({ url: `file://${dir}/replica` });
    await db.exec('INSERT INTO t VALUES (2)');
    assert.equal(await autocheckpoint(), 0);
    await db.stopReplicating();
    await db.exec('INSERT INTO t VALUES (3)');
    assert.equal(await autocheckpoint(), 1000);
  } finally {
    await db.close();
  }
});

test('a replica that can never work fails the open with a clear error', async () => {
  const dir = tempDir();
  const notAFolder = path.join(dir, 'file');
  fs.writeFileSync(notAFolder, 'x');
  await assert.rejects(
    Database.open(path.join(dir, 'a.db'), { replica: { url: `file://${notAFolder}` } }),
    (err) => err.code === 'ERR_OFFLOOP_REPLICA' && /is a file/.test(err.message),
  );
  assert.throws(() => new Database(path.join(dir, 'b.db'), { replica: { url: 'ftp://host/x' } }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  assert.throws(() => new Database(path.join(dir, 'c.db'), { replica: { url: 'file://relative/x' } }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  assert.throws(() => new Database(path.join(dir, 'd.db'), { checkpoint: false, replica: { url: `file://${dir}/r` } }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  // The failed open left nothing running: the database opens again.
  const db = await Database.open(path.join(dir, 'a.db'));
  await db.close();
});

test('Database.restore restores offloop’s own replica, latest, by TXID and by timestamp, and refuses to overwrite', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), { replica: { url, syncInterval: 3_600_000 } });
  await mixedWorkload(db, 1);
  const first = await db.syncReplica();
  const atFirst = await tables(db);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const between = new Date();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await mixedWorkload(db, 2);
  const second = await db.syncReplica();
  const atSecond = await tables(db);
  await db.close();

  const latest = path.join(dir, 'latest.db');
  assert.deepEqual(await Database.restore(url, latest), second);
  assert.deepEqual((await inspect(latest)).tables, atSecond);
  assert.equal((await inspect(latest)).integrity, 'ok');

  const byTxid = path.join(dir, 'by-txid.db');
  assert.deepEqual(await Database.restore(url, byTxid, { txid: first.txid }), first);
  assert.deepEqual((await inspect(byTxid)).tables, atFirst);

  const byTime = path.join(dir, 'by-time.db');
  assert.deepEqual(await Database.restore(url, byTime, { timestamp: between }), first);
  assert.deepEqual((await inspect(byTime)).tables, atFirst);

  await assert.rejects(Database.restore(url, latest), (err) => err.code === 'ERR_OFFLOOP_REPLICA' && /exists/.test(err.message));
  assert.deepEqual(await Database.restore(url, latest, { txid: first.txid, overwrite: true }), first);
  assert.deepEqual((await inspect(latest)).tables, atFirst);
});

test('Database.restore restores a folder replica that litestream replicate wrote', { skip }, async () => {
  const dir = tempDir();
  const file = path.join(dir, 'app.db');
  // Litestream owns checkpoints here, as it does beside an application.
  const db = await Database.open(file, { checkpoint: false });
  await db.exec('CREATE TABLE seed(x)');
  const sidecar = await startLitestream(file, [`type: file`, `path: ${dir}/replica`]);
  try {
    await mixedWorkload(db);
    const { txid } = await sidecar.sync();
    const expected = await tables(db);
    await sidecar.stop();
    const out = path.join(dir, 'restored.db');
    const restored = await Database.restore(`file://${dir}/replica`, out);
    assert.equal(restored.txid, txid);
    const got = await inspect(out);
    assert.equal(got.integrity, 'ok');
    assert.deepEqual(got.tables, expected);
  } finally {
    await sidecar.stop();
    await db.close();
  }
});

test('after a clean close the next open carries on without a full snapshot, unless the database changed meanwhile', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const file = path.join(dir, 'app.db');
  const l0Size = (txid) => {
    const name = `${txid.toString(16).padStart(16, '0')}-${txid.toString(16).padStart(16, '0')}.ltx`;
    return fs.statSync(path.join(dir, 'replica', 'ltx', '0', name)).size;
  };
  let db = await Database.open(file, { replica: { url } });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, pad BLOB)');
  await db.prepare('INSERT INTO t(pad) SELECT randomblob(4000) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) SELECT x FROM c)').run();
  const before = await db.syncReplica();
  await db.close();

  db = await Database.open(file, { replica: { url } });
  await db.prepare("INSERT INTO t(pad) VALUES (x'01')").run();
  const resumed = await db.syncReplica();
  assert.equal(resumed.txid, before.txid + 1);
  assert.ok(l0Size(resumed.txid) < 20_000, `the next file holds the change only (${l0Size(resumed.txid)} bytes)`);
  await db.close();

  // Changed without replication: the replica cannot know what changed.
  const plain = await Database.open(file);
  await plain.exec('DELETE FROM t WHERE id % 2 = 0');
  await plain.close();
  db = await Database.open(file, { replica: { url } });
  const restarted = await db.syncReplica();
  assert.equal(restarted.txid, resumed.txid + 1);
  assert.ok(l0Size(restarted.txid) > 200_000, 'the next file is a full image');
  const expected = await tables(db);
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.deepEqual(restored.tables, expected);
  assertContiguous(assert, folderTxids(path.join(dir, 'replica')));
});

test('without a lease, a wiped replica, or one found ahead of the database, starts again from a full snapshot with a warning', { skip }, async () => {
  // With a lease (the default) a replica found ahead refuses the open
  // instead: lease.test.mjs.
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const file = path.join(dir, 'app.db');
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    let db = await Database.open(file, { replica: { url, lease: false } });
    await mixedWorkload(db, 1);
    const first = await db.syncReplica();
    await db.close();

    // Wiped: the replica ends before this database's next TXID.
    fs.rmSync(path.join(dir, 'replica'), { recursive: true });
    db = await Database.open(file, { replica: { url, lease: false } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(warnings.some((w) => w.code === 'OFFLOOP_REPLICA' && /full snapshot/.test(w.message)), 'a warning');
    const wiped = await db.syncReplica();
    assert.equal(wiped.txid, 1, 'the replica starts again at TXID 1');
    let expected = await tables(db);
    await db.close();
    assert.deepEqual((await litestreamRestore(url, path.join(dir, 'wiped.db'))).tables, expected);

    // Ahead: another database wrote to the replica meanwhile.
    const other = await Database.open(path.join(dir, 'other.db'), { replica: { url, lease: false } });
    await other.exec('CREATE TABLE intruder(x); INSERT INTO intruder VALUES (1)');
    const ahead = await other.syncReplica();
    await other.close();
    assert.ok(ahead.txid > wiped.txid);
    warnings.length = 0;
    db = await Database.open(file, { replica: { url, lease: false } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(warnings.some((w) => /ahead/.test(w.message)), 'a warning');
    const resumed = await db.syncReplica();
    assert.equal(resumed.txid, ahead.txid + 1);
    expected = await tables(db);
    await db.close();
    const restored = await litestreamRestore(url, path.join(dir, 'ahead.db'));
    assert.deepEqual(restored.tables, expected);
    assert.equal(restored.tables.intruder, undefined);
    assert.ok(first.txid >= 1);
  } finally {
    process.off('warning', onWarning);
  }
});

test('replicate() called while stopReplicating() still ships waits for it, then carries on', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), { replica: { url } });
  await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
  const stopping = db.stopReplicating();
  const again = db.replicate({ url });
  const [stopped, restarted] = await Promise.all([stopping, again]);
  assert.ok(restarted.txid >= stopped.txid);
  await db.exec('INSERT INTO t VALUES (2)');
  await db.syncReplica();
  const expected = await tables(db);
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.deepEqual(restored.tables, expected);
  assertContiguous(assert, folderTxids(path.join(dir, 'replica')));
});

test('on short intervals the replicator compacts into L1 and L2, takes L9 snapshots and trims old history; the replica still restores', { skip }, async () => {
  const dir = tempDir();
  const url = `file://${dir}/replica`;
  const db = await Database.open(path.join(dir, 'app.db'), {
    replica: { url, syncInterval: 20, compactionIntervals: [100, 300], snapshotInterval: 400, retention: 300 },
  });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
  const level = (n) => folderTxids(path.join(dir, 'replica'), n);
  const snapshotsSeen = new Set();
  // Bounded: writes go on until every kind of file has shown up.
  for (let i = 0; i < 2000; i++) {
    await insert.run(`row ${i}`);
    await db.syncReplica();
    for (const [, max] of level(9)) snapshotsSeen.add(max);
    if (level(1).length > 0 && level(2).length > 0 && snapshotsSeen.size >= 3) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(level(1).length > 0, 'L1 files');
  assert.ok(level(2).length > 0, 'L2 files');
  assert.ok(snapshotsSeen.size >= 3, `${snapshotsSeen.size} snapshots taken`);
  assert.ok(level(9).length < snapshotsSeen.size, 'old snapshots were deleted');
  assertContiguous(assert, level(1));
  const expected = await tables(db);
  await db.close();
  const restored = await litestreamRestore(url, path.join(dir, 'restored.db'));
  assert.equal(restored.integrity, 'ok');
  assert.deepEqual(restored.tables, expected);
  const ours = path.join(dir, 'ours.db');
  await Database.restore(url, ours);
  assert.deepEqual((await inspect(ours)).tables, expected);
});

test('a replicating database whose open fails lets the process exit', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  // The open fails (the path is a folder) after the replicator started.
  const script = `
    const { Database } = require(${JSON.stringify(path.join(HERE, '..', '..', 'index.js'))});
    Database.open(${JSON.stringify(dir)}, { replica: { url: ${JSON.stringify(url)} } })
      .then(() => console.log('opened'), (err) => console.log('rejected: ' + err.message));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await once(child, 'exit');
  clearTimeout(killer);
  assert.match(out, /rejected: /);
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'the process exited by itself');
});

test('a replicating database, closed after a session that read or wrote, leaves no -wal or -shm file, every time, and the next open carries on', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const file = path.join(dir, 'app.db');
  const setup = await Database.open(file, { replica: { url } });
  await setup.exec('CREATE TABLE t(x)');
  await setup.close();
  const left = [];
  for (let round = 0; round < 6; round += 1) {
    const db = await Database.open(file, { replica: { url } });
    if (round % 2 === 0) await db.prepare('SELECT count(*) AS n FROM t').get();
    else await db.prepare('INSERT INTO t VALUES (?)').run(round);
    await db.close();
    const remaining = [`${file}-wal`, `${file}-shm`].filter((f) => fs.existsSync(f));
    if (remaining.length > 0) left.push({ round, remaining });
  }
  assert.deepEqual(left, []);
  const db = await Database.open(file, { replica: { url } });
  assert.deepEqual(await db.prepare('SELECT x FROM t ORDER BY x').all(), [1, 3, 5].map((x) => ({ __proto__: null, x })));
  await db.close();
});
