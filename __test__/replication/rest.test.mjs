// A replicated database at rest: once its writer's connection has been
// idle for `idleTimeout` and the replica holds every commit, the writer
// closes and its replicator lets go of its files too (read connections,
// WAL, capture log): an idle tenant holds no descriptor. The next call
// opens everything again, and the replica's chain carries on from where it
// stood, without a full image; litestream restores every tenant whole.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, assertContiguous, folderTxids, inspect, litestream, skipWithout, tables, tempDir, waitFor } from './helpers.mjs';

const linuxOnly = process.platform !== 'linux' && 'counts descriptors in /proc';
const skip = skipWithout('litestream') || linuxOnly;

Database.configure({ idleTimeout: 150 });
after(() => Database.configure({ idleTimeout: null }));

/** Descriptors this process holds on files under `dir`. */
function descriptorsUnder(dir) {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir + path.sep)) n++;
    } catch {}
  }
  return n;
}

test('idle replicated tenants rest with no file open, wake on the next call, and restore whole without a full image', { skip }, async () => {
  const dir = fs.realpathSync(tempDir());
  const TENANTS = 8;
  const url = (i) => `file://${dir}/replica-${i}`;
  const dbs = await Promise.all(
    Array.from({ length: TENANTS }, (_, i) => Database.open(path.join(dir, `tenant-${i}.db`), { replica: { url: url(i) } })),
  );
  try {
    // Random bytes: a full image of this file would be far larger than one
    // small commit's file.
    await Promise.all(
      dbs.map(async (db, i) => {
        await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v)');
        await db.prepare('INSERT INTO t(v) VALUES (?)').run(randomBytes(64 * 1024).toString('base64'));
        await db.prepare('INSERT INTO t(v) VALUES (?)').run(`tenant ${i}`);
      }),
    );
    await waitFor('every tenant at rest, holding no file', () => Database.stats().connections === 0 && descriptorsUnder(dir) === 0);
    for (const db of dbs) assert.equal(db.stats().replica.lastError, null);
    const before = dbs.map((_, i) => folderTxids(path.join(dir, `replica-${i}`)));

    // Every tenant wakes: reads and writes, many at once.
    const woke = await Promise.all(
      dbs.map(async (db, i) => {
        const [count] = await Promise.all([db.prepare('SELECT count(*) AS n FROM t').get(), db.prepare('INSERT INTO t(v) VALUES (?)').run(`after rest ${i}`)]);
        return count.n;
      }),
    );
    // Each read was asked before the write beside it, not after it
    // resolved: a reader runs it, before or after that commit.
    for (const n of woke) assert.ok(n === 2 || n === 3, `${n} rows`);
    await Promise.all(dbs.map((db) => db.syncReplica()));
    await waitFor('at rest again', () => Database.stats().connections === 0 && descriptorsUnder(dir) === 0);

    for (let i = 0; i < TENANTS; i++) {
      const replica = path.join(dir, `replica-${i}`);
      const ranges = folderTxids(replica);
      assertContiguous(assert, ranges);
      // The files after the rest: one small commit each, not an image.
      for (const [min, max] of ranges.slice(before[i].length)) {
        const name = `${min.toString(16).padStart(16, '0')}-${max.toString(16).padStart(16, '0')}.ltx`;
        assert.ok(fs.statSync(path.join(replica, 'ltx', '0', name)).size < 32 * 1024, `${name} is a small commit, not a full image`);
      }
      assert.equal(dbs[i].stats().replica.lastError, null);
    }
    const expected = await Promise.all(dbs.map((db) => tables(db)));
    await Promise.all(dbs.map((db) => db.close()));
    for (let i = 0; i < TENANTS; i++) {
      const out = path.join(dir, `restored-${i}.db`);
      await litestream(['restore', '-o', out, url(i)]);
      const restored = await inspect(out);
      assert.equal(restored.integrity, 'ok');
      assert.deepEqual(restored.tables, expected[i]);
    }
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
  }
});

test('a rest kept from taking by another connection to the file: the replicator\'s connections stay counted, and the rest takes once that connection is gone', { skip: linuxOnly }, async () => {
  // A second database on the same file, reading: its read transaction
  // keeps the WAL from being copied and removed when the tenant rests.
  // The replicator keeps its read connections open meanwhile; they used to
  // be counted by no one, and kept open until the tenant's next call.
  const dir = fs.realpathSync(tempDir());
  const file = path.join(dir, 'tenant.db');
  const db = await Database.open(file, { replica: { url: `file://${dir}/replica` } });
  const other = await Database.open(file);
  try {
    await db.exec('CREATE TABLE t(v); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 10000) INSERT INTO t SELECT i FROM c');
    // A cursor part way through 10,000 rows holds its read transaction.
    const rows = other.prepare('SELECT v FROM t').iterate();
    assert.equal((await rows.next()).value.v, 1);
    await db.prepare('INSERT INTO t VALUES (?)').run(10001);
    // The tenant's writer closes; its replicator's two read connections
    // are all of the tenant's that stay open, and they count, beside the
    // other database's one (its writer, which ran the query's first call
    // and holds the cursor).
    await waitFor('the tenant\'s writer closed', () => Database.stats().connections === 3);
    assert.ok(descriptorsUnder(dir) > 0);
    await rows.return();
    await other.close();
    await waitFor('the tenant at rest, holding no file', () => Database.stats().connections === 0 && descriptorsUnder(dir) === 0);
    assert.equal(db.stats().replica.lastError, null);
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, 10001);
  } finally {
    await other.close();
    await db.close();
  }
});
