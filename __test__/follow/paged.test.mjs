// A paged follower (`follow` with `restore: 'paged'`): on a missing file it
// answers its first query before the database is local, and follows the
// replica while the fill brings in the rest. The replica lives in moto on
// loopback; the follower reads it through a link (bench/lib/link.mjs) that
// holds the fill's large ranged reads back, so that commits land, are
// applied and are checkpointed while pages are still missing. A page an
// apply changed is the new image once every page is local, never the
// fill's older one.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { startLink } from '../../bench/lib/link.mjs';
import { Database, S3_KEYS, skipWithout, s3ForFile, tables, tempDir } from '../replication/helpers.mjs';

const skip = skipWithout('s3_test_server');
const s3 = s3ForFile(skip);

function options(prefix, endpoint, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', ...S3_KEYS, ...extra };
}

/** A primary replicating `rows` rows of 300 random bytes (about 16 MiB at 40,000). */
async function primaryOn(prefix, rows) {
  const dir = tempDir();
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: options(prefix, s3.endpoint, { syncInterval: 50 }) });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)');
  await primary.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO t SELECT i, randomblob(300) FROM n`,
  ).run(rows);
  await primary.syncReplica();
  return { dir, primary };
}

const ROWS = 40_000;

// moto refuses anonymous requests but checks no signature.
const AUTH = `AWS4-HMAC-SHA256 Credential=${S3_KEYS.accessKeyId}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0`;

/** The size of every file under `prefix` in the replica, by its path in the bucket's URLs. */
async function sizes(prefix) {
  const res = await fetch(`${s3.endpoint}/replica?list-type=2&prefix=${encodeURIComponent(`${prefix}/`)}`, { headers: { authorization: AUTH } });
  const xml = await res.text();
  assert.equal(res.status, 200, xml);
  const found = new Map();
  for (const m of xml.matchAll(/<Key>([^<]+)<\/Key>.*?<Size>(\d+)<\/Size>/gs)) found.set(`/replica/${m[1]}`, Number(m[2]));
  return found;
}

/**
 * A predicate for the fill's reads of the files `sizes` lists: ranged reads
 * larger than a page on demand with its read-ahead (nine frames of about
 * 4 KiB here). The open's own reads are not: a file's first bytes (from
 * byte 0) and its end (its page index).
 */
function fillReads(sizes) {
  return (req) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (m === null) return false;
    const [start, end] = [Number(m[1]), Number(m[2])];
    const size = sizes.get(req.url.split('?')[0]);
    return start > 0 && end + 1 !== size && end - start + 1 > 40 << 10;
  };
}

test('a paged follower answers before the fill ends, applies what lands during it, and equals the primary once filled', { skip }, async () => {
  const { dir, primary } = await primaryOn('paged-during', ROWS);
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 1e12 });
  // The fill waits until the applies below were checkpointed.
  link.hold(fillReads(await sizes('paged-during')));
  const file = path.join(dir, 'follower.db');
  const follower = await Database.open(file, { follow: options('paged-during', link.url, { pollInterval: 20 }), restore: 'paged' });
  try {
    const first = await follower.prepare('SELECT id, length(v) AS n FROM t WHERE id = ?').get(ROWS);
    assert.deepEqual({ ...first }, { id: ROWS, n: 300 });
    assert.equal(follower.stats().restore.filled, false);
    // The last rows sit in the pages the fill brings in last: changed,
    // deleted and added to (the database grows past the size the fill
    // began from) in several TXIDs.
    const changed = [];
    for (let i = 0; i < 10; i++) {
      const id = ROWS - i * 37;
      changed.push(id);
      await primary.prepare("UPDATE t SET v = 'changed during the fill ' || id WHERE id = ?").run(id);
      await primary.prepare('DELETE FROM t WHERE id = ?').run(id - 1);
      await primary.syncReplica();
    }
    await primary.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
       INSERT INTO t SELECT ? + i, randomblob(300) FROM n`,
    ).run(ROWS);
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 30_000 });
    const read = follower.prepare('SELECT v FROM t WHERE id = ?');
    for (const id of changed) {
      assert.equal(String((await read.get(id)).v), `changed during the fill ${id}`);
      assert.equal(await follower.prepare('SELECT id FROM t WHERE id = ?').get(id - 1), undefined);
    }
    // The applied pages go from the WAL into the file while the fill still
    // runs: from here on the file's bytes are the only copy.
    await follower.checkpoint('TRUNCATE');
    assert.equal(follower.stats().restore.filled, false, 'the fill was still running when the applies were checkpointed');
    link.release();
    await follower.filled;
    assert.equal(follower.stats().restore.pagesLocal, follower.stats().restore.pagesTotal);
    for (const id of changed) {
      assert.equal(String((await read.get(id)).v), `changed during the fill ${id}`, `row ${id} is the applied image`);
    }
    assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    assert.deepEqual(await tables(follower), await tables(primary));
    // Followed on after the fill, as any follower.
    await primary.exec("UPDATE t SET v = 'after the fill' WHERE id = 1");
    const later = await primary.syncReplica();
    await follower.catchUp({ txid: later.txid, timeout: 30_000 });
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await link.close();
    await primary.close();
  }
});

test('a paged follower closed during the fill carries on at its next open, then equals the primary', { skip }, async () => {
  const { dir, primary } = await primaryOn('paged-reopen', ROWS);
  const link = await startLink({ target: s3.endpoint, latencyMs: 5, bytesPerSecond: 1e12 });
  const file = path.join(dir, 'follower.db');
  const open = () => Database.open(file, { follow: options('paged-reopen', link.url, { pollInterval: 20 }), restore: 'paged' });
  // No fill at all during the first open.
  link.hold(fillReads(await sizes('paged-reopen')));
  let follower = await open();
  try {
    await primary.prepare("UPDATE t SET v = 'changed before the close' WHERE id = ?").run(ROWS);
    let { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 30_000 });
    assert.equal(follower.stats().restore.filled, false);
    await follower.close();
    link.release();
    await primary.prepare("UPDATE t SET v = 'changed while closed' WHERE id = ?").run(ROWS - 1);
    ({ txid } = await primary.syncReplica());
    follower = await open();
    await follower.catchUp({ txid, timeout: 30_000 });
    await follower.filled;
    assert.deepEqual(await tables(follower), await tables(primary));
    // Without `restore: 'paged'` a follower whose fill has not finished is
    // refused; once filled it is an ordinary follower's file.
    await follower.close();
    follower = await Database.open(file, { follow: options('paged-reopen', link.url, { pollInterval: 20 }) });
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await link.close();
    await primary.close();
  }
});
