// What an open asks of an S3 replica, counted by a proxy in front of the S3
// server (moto) this file starts: a tenant's open reads and creates its
// lease and lists its replica's ten levels in one request, and a restore
// from that one listing finds the files of every level.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { countingProxy } from '../../bench/lib/s3-proxy.mjs';
import { Database, S3_KEYS, skipWithout, startS3, tables, tempDir, waitFor } from './helpers.mjs';

test('opening a tenant on S3 lists its replica once, and a restore from that listing reads every level', { skip: skipWithout('s3_test_server') }, async () => {
  const s3 = await startS3(['replica']);
  const proxy = await countingProxy(s3.port);
  const take = proxy.take;
  const dir = tempDir();
  const replica = (prefix, extra = {}) => ({ url: `s3://replica/tenants/${prefix}`, endpoint: proxy.endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_KEYS, ...extra });
  const dbs = [];
  try {
    // A sibling whose prefix starts with the other's name: its files are
    // not the other's.
    const sibling = await Database.open(path.join(dir, 'sibling.db'), { replica: replica('t00') });
    dbs.push(sibling);
    await sibling.exec('CREATE TABLE s(x); INSERT INTO s VALUES (1)');
    await sibling.syncReplica();
    take();
    // Fresh, ten tenants: each open lists once.
    for (let i = 0; i < 10; i++) {
      dbs.push(await Database.open(path.join(dir, `t${i}.db`), { replica: replica(`t${i}`) }));
    }
    const opens = take();
    assert.equal(opens.LIST, 10, `ten opens: ${JSON.stringify(opens)}`);
    // t0 restored nothing of t00's.
    assert.deepEqual(await tables(dbs[1]), {});
    // Files in L0, L1 and the snapshot level, then restored into a new file.
    const db = await Database.open(path.join(dir, 'leveled.db'), { replica: replica('t0x', { compactionIntervals: [50], snapshotInterval: 200 }) });
    await db.exec('CREATE TABLE t(x)');
    for (let i = 0; i < 20; i++) {
      await db.exec(`INSERT INTO t VALUES (${i})`);
      await db.syncReplica();
    }
    await waitFor('an L1 file and a snapshot', async () => {
      await db.exec('INSERT INTO t VALUES (-1)');
      await db.syncReplica();
      const res = await fetch(`${s3.endpoint}/replica?list-type=2&prefix=tenants/t0x/`);
      const body = await res.text();
      return body.includes('tenants/t0x/0001/') && body.includes('tenants/t0x/0009/');
    });
    const written = await tables(db);
    await db.close();
    take();
    const restored = path.join(dir, 'restored.db');
    const { url, ...s3Options } = replica('t0x');
    await Database.restore(url, restored, s3Options);
    const again = await Database.open(restored);
    dbs.push(again);
    assert.deepEqual(await tables(again), written);
    const restore = take();
    assert.equal(restore.LIST, 1, `the restore: ${JSON.stringify(restore)}`);
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
    await proxy.stop();
    await s3.stop();
  }
});
