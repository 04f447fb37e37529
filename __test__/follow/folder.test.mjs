// Following a folder replica that an offloop primary writes: the follower
// opens from the replica, polls for each next TXID, applies it atomically
// and equals the primary after catchUp({ txid }); what it refuses (every
// write route, `follow` with `replica`, a file not made by a follower of
// the replica) and what it reports (stats().follow, 'applied' events).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Database, mixedWorkload, tables, tempDir } from '../replication/helpers.mjs';

const FAST = { syncInterval: 50 };

async function primaryAndFollower(extra = {}, open = {}) {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: { url, ...FAST } });
  await primary.exec('CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)');
  await primary.syncReplica();
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 50, ...extra }, ...open });
  return { dir, url, primary, follower };
}

test('a follower equals the primary table by table after catchUp({ txid })', async () => {
  const { primary, follower } = await primaryAndFollower();
  try {
    await mixedWorkload(primary);
    const { txid } = await primary.syncReplica();
    const reached = await follower.catchUp({ txid, timeout: 20_000 });
    assert.ok(reached.txid >= txid);
    assert.deepEqual(await tables(follower), await tables(primary));
    assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    const s = follower.stats().follow;
    assert.equal(s.txid, reached.txid);
    assert.equal(s.lastError, null);
    assert.ok(s.requests.get > 0 && s.bytesFetched > 0);
    assert.equal(typeof s.stalenessMs, 'number');
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('catchUp() checks the replica now and applies everything there', async () => {
  const { primary, follower } = await primaryAndFollower({ pollInterval: 60_000 });
  try {
    await primary.prepare('INSERT INTO accounts(balance) VALUES (?)').run(5);
    const { txid } = await primary.syncReplica();
    const reached = await follower.catchUp();
    assert.ok(reached.txid >= txid);
    assert.deepEqual(await follower.prepare('SELECT balance FROM accounts').all(), [{ __proto__: null, balance: 5 }]);
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('catchUp({ txid }) rejects with a TimeoutError after its timeout, and with the reason on abort', async () => {
  const { primary, follower } = await primaryAndFollower();
  try {
    const far = follower.stats().follow.txid + 1000;
    await assert.rejects(follower.catchUp({ txid: far, timeout: 200 }), (err) => err.name === 'TimeoutError');
    const controller = new AbortController();
    const waiting = follower.catchUp({ txid: far, signal: controller.signal });
    const reason = new Error('gave up');
    controller.abort(reason);
    await assert.rejects(waiting, (err) => err === reason);
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('every write route rejects with SQLITE_READONLY on a follower', async () => {
  // No readers: deserialize() needs a database without them.
  const { primary, follower } = await primaryAndFollower({}, { readers: 0 });
  const readOnly = (err) => err.errcode === 8 && err.sqliteCode === 'SQLITE_READONLY';
  try {
    await primary.prepare('INSERT INTO accounts(balance) VALUES (?)').run(1);
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 20_000 });
    const insert = follower.prepare('INSERT INTO accounts(balance) VALUES (?)');
    await assert.rejects(insert.run(2), readOnly);
    await assert.rejects(follower.exec('DELETE FROM accounts'), readOnly);
    await assert.rejects(follower.exec('CREATE TABLE t(x)'), readOnly);
    await assert.rejects(follower.exec('PRAGMA query_only = 0'), (err) => err.code === 'ERR_SQLITE_ERROR');
    await assert.rejects(follower.exec('INSERT INTO sqlite_dbpage(pgno, data) VALUES (2, NULL)'), readOnly);
    await assert.rejects(
      follower.transaction(async (tx) => {
        await tx.prepare('INSERT INTO accounts(balance) VALUES (?)').run(3);
      }),
      readOnly,
    );
    const handle = await follower.begin().catch((err) => err);
    if (handle instanceof Error) assert.ok(readOnly(handle));
    else {
      await assert.rejects(handle.prepare('INSERT INTO accounts(balance) VALUES (?)').run(4), readOnly);
      await handle.rollback();
    }
    const batch = await follower.batch([[insert, [5]]]).catch((err) => err);
    assert.ok(readOnly(batch) || readOnly(batch.error ?? {}), String(batch));
    const image = await primary.serialize();
    await assert.rejects(follower.deserialize(image), readOnly);
    const session = await primary.createSession();
    await primary.prepare('INSERT INTO accounts(balance) VALUES (?)').run(6);
    const changeset = await session.changeset();
    await assert.rejects(follower.applyChangeset(changeset), readOnly);
    assert.deepEqual(await follower.prepare('SELECT balance FROM accounts').all(), [{ __proto__: null, balance: 1 }]);
  } finally {
    await follower.close();
    await primary.close();
  }
});

test("each applied file is an 'applied' event with its TXID and page count", async () => {
  const { primary, follower } = await primaryAndFollower();
  const seen = [];
  follower.on('applied', (e) => seen.push(e));
  try {
    await primary.prepare('INSERT INTO accounts(balance) VALUES (?)').run(7);
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 20_000 });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(seen.length > 0);
    const last = seen.at(-1);
    assert.equal(last.txid, follower.stats().follow.txid);
    assert.ok(last.pages > 0);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].txid > seen[i - 1].txid);
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('follow with replica or with readOnly is refused', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  for (const extra of [{ replica: { url } }, { readOnly: true }]) {
    assert.throws(
      () => new Database(path.join(dir, 'x.db'), { follow: { url }, ...extra }),
      (err) => err.code === 'ERR_INVALID_ARG_VALUE',
      JSON.stringify(extra),
    );
  }
});

test('an existing file no follower of the replica made is refused with ERR_OFFLOOP_REPLICA and left untouched', async () => {
  const { dir, url, primary, follower } = await primaryAndFollower();
  await follower.close();
  await primary.close();
  const other = path.join(dir, 'other.db');
  const db = await Database.open(other);
  await db.exec('CREATE TABLE mine(x); INSERT INTO mine VALUES (42)');
  await db.close();
  const before = fs.readFileSync(other);
  await assert.rejects(Database.open(other, { follow: { url } }), (err) => err.code === 'ERR_OFFLOOP_REPLICA');
  assert.deepEqual(fs.readFileSync(other), before);
  assert.equal(fs.existsSync(`${other}-follow`), false);
});
