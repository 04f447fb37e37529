// Following an S3 replica (moto on loopback): a follower of an offloop
// primary equals it after catchUp({ txid }); an idle follower, counted
// through a proxy, makes at most one request per pollInterval and no LIST;
// a replica made unreachable makes calls reject with ERR_OFFLOOP_STALE
// within maxStaleness plus one poll, and they work again once it answers.

import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { Database, S3_KEYS, mixedWorkload, skipWithout, startRelay, s3ForFile, tables, tempDir } from '../replication/helpers.mjs';
import { forwardingProxy } from '../../bench/lib/s3-proxy.mjs';

const skip = skipWithout('s3_test_server');
const s3 = s3ForFile(skip);

function options(prefix, endpoint = s3.endpoint, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', ...S3_KEYS, ...extra };
}

/** An HTTP proxy to moto that counts LISTs and other requests. */
async function countingProxy() {
  const counts = { list: 0, other: 0 };
  const proxy = await forwardingProxy(s3.port, (req, url) => {
    if (req.method === 'GET' && url.searchParams.has('list-type')) counts.list++;
    else counts.other++;
  });
  return { ...proxy, counts };
}

async function primaryOn(prefix) {
  const dir = tempDir();
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: options(prefix, s3.endpoint, { syncInterval: 50 }) });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  await primary.syncReplica();
  return { dir, primary };
}

test('a follower of an S3 replica equals the primary table by table after catchUp({ txid })', { skip }, async () => {
  const { dir, primary } = await primaryOn('mixed');
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: options('mixed', s3.endpoint, { pollInterval: 50 }) });
  try {
    await mixedWorkload(primary);
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 30_000 });
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('an idle follower makes at most one request per pollInterval and no LIST', { skip }, async () => {
  const { dir, primary } = await primaryOn('idle');
  const proxy = await countingProxy();
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: options('idle', proxy.endpoint, { pollInterval: 100 }) });
  try {
    await primary.exec("INSERT INTO t(v) VALUES ('a')");
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 30_000 });
    // Past the start (which lists) and the first quiet poll.
    await sleep(300);
    const from = { ...proxy.counts };
    const stats = follower.stats().follow;
    const started = Date.now();
    await sleep(2000);
    const elapsed = Date.now() - started;
    const list = proxy.counts.list - from.list;
    const other = proxy.counts.other - from.other;
    assert.equal(list, 0, 'no LIST while idle');
    assert.ok(other <= Math.ceil(elapsed / 100) + 1, `${other} requests in ${elapsed} ms`);
    assert.ok(other > 0, 'it still polls');
    const now = follower.stats().follow;
    assert.equal(now.requests.list, stats.requests.list);
    // The follower counts a request as it sends it, the proxy as it
    // arrives: one poll in flight as either count is read may be in one
    // and not yet in the other, at each end of the window.
    const counted = now.requests.get - stats.requests.get;
    assert.ok(Math.abs(counted - other) <= 2, `the follower counted ${counted} GETs, the proxy ${other}`);
  } finally {
    await follower.close();
    await primary.close();
    await proxy.stop();
  }
});

test('an unreachable replica makes calls reject with ERR_OFFLOOP_STALE, and they work again once it answers', { skip }, async () => {
  const { dir, primary } = await primaryOn('stale');
  const relay = await startRelay(s3.port);
  const poll = 100;
  const bound = 500;
  const follower = await Database.open(path.join(dir, 'follower.db'), {
    follow: options('stale', `http://127.0.0.1:${relay.port}`, { pollInterval: poll, maxStaleness: bound }),
  });
  const read = follower.prepare('SELECT count(*) AS n FROM t');
  try {
    await follower.catchUp({ timeout: 10_000 });
    assert.equal((await read.get()).n, 0);
    await relay.down();
    const downAt = Date.now();
    let staleAt = null;
    while (Date.now() - downAt < 20_000) {
      try {
        await read.get();
      } catch (err) {
        assert.equal(err.code, 'ERR_OFFLOOP_STALE');
        staleAt = Date.now();
        break;
      }
      await sleep(20);
    }
    assert.notEqual(staleAt, null, 'reads were never refused');
    assert.ok(follower.stats().follow.stalenessMs > bound);
    await relay.up();
    await primary.exec("INSERT INTO t(v) VALUES ('back')");
    const { txid } = await primary.syncReplica();
    await follower.catchUp({ txid, timeout: 20_000 });
    // A check that finds nothing newer makes it fresh again.
    await follower.catchUp({ timeout: 20_000 });
    assert.equal((await read.get()).n, 1);
  } finally {
    await relay.up();
    await follower.close();
    await primary.close();
    await relay.down();
  }
});
