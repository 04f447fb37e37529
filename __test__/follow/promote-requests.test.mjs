// What a promotion asks of an S3 replica (moto on loopback, behind a
// counting proxy that delays each answer as a far store would): one
// listing before the lease, with L0 listed from the follower's next TXID
// on, the lease's read and conditional write, and after the lease a check
// by name, never a second listing; the promoted writer's replicator takes
// neither the lease nor a listing again. The counts are the same on a
// replica of a few L0 files and of hundreds.

import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { Database, S3_KEYS, skipWithout, s3ForFile, tempDir, waitFor } from '../replication/helpers.mjs';
import { requestKind } from '../../bench/lib/s3-proxy.mjs';

const skip = skipWithout('s3_test_server');
// Every level a replica may hold, L0 to L9: one listing lists each once.
const LEVELS = 10;
// What the proxy waits before each answer: the far store's round trip.
const DELAY_MS = 20;
const s3 = s3ForFile(skip);

function options(prefix, endpoint, extra = {}) {
  return { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', ...S3_KEYS, ...extra };
}

/**
 * An HTTP proxy to moto that answers each request `DELAY_MS` late and
 * records what it was (a listing, the lease object, an LTX file) and when
 * it was in flight.
 */
async function countingProxy() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const kind = requestKind(req, url);
    const entry = { kind, start: performance.now(), end: null };
    requests.push(entry);
    const upstream = http.request(
      { host: '127.0.0.1', port: s3.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        setTimeout(() => {
          res.writeHead(up.statusCode, up.headers);
          const body = [];
          up.on('data', (chunk) => kind === 'LIST' && body.push(chunk));
          up.pipe(res);
          up.on('end', () => {
            entry.end = performance.now();
            entry.keys = Number(/<KeyCount>(\d+)<\/KeyCount>/.exec(Buffer.concat(body).toString())?.[1] ?? 0);
          });
        }, DELAY_MS);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    /** Requests since the last take, by kind, and the rounds they made. */
    take() {
      const taken = requests.splice(0);
      const counts = {};
      for (const r of taken) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
      const listed = taken.reduce((n, r) => n + (r.keys ?? 0), 0);
      return { counts, listed, rounds: rounds(taken) };
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Groups of requests in flight together, one after another: round trips. */
function rounds(requests) {
  let n = 0;
  let until = -Infinity;
  for (const r of [...requests].sort((a, b) => a.start - b.start)) {
    if (r.start > until) n++;
    until = Math.max(until, r.end ?? r.start);
  }
  return n;
}

/**
 * A writer that left `files` L0 files in the replica and closed (its lease
 * released), and a follower of it at its head through the proxy.
 */
async function followerOf(prefix, files, proxy) {
  const dir = tempDir();
  const primary = await Database.open(path.join(dir, 'primary.db'), {
    replica: options(prefix, s3.endpoint, { syncInterval: 60_000, leaseTtl: 30_000 }),
  });
  await primary.exec('CREATE TABLE t(v TEXT)');
  const insert = primary.prepare('INSERT INTO t VALUES (?)');
  let txid = 0;
  for (let i = 0; i < files; i++) {
    await insert.run(`row ${i}`);
    ({ txid } = await primary.syncReplica());
  }
  await primary.close();
  // No poll during the promotion, no renewal: only the promotion's own
  // requests are counted.
  const follower = await Database.open(path.join(dir, 'follower.db'), {
    follow: options(prefix, proxy.endpoint, { pollInterval: 600_000, leaseTtl: 30_000 }),
  });
  await follower.catchUp({ txid, timeout: 60_000 });
  // The restore at open put it at txid already: this waits for the end of
  // the follower's first check (a listing), which asks nothing more for
  // the next ten minutes.
  await waitFor("the follower's first check", () => follower.stats().follow.lastCheckAt !== null, 60_000);
  return { follower, txid };
}

test('a promotion lists the replica once, before the lease, and asks the same whatever the number of L0 files', { skip }, async (t) => {
  const proxy = await countingProxy();
  const seen = [];
  try {
    for (const files of [3, 300]) {
      const { follower, txid } = await followerOf(`files-${files}`, files, proxy);
      try {
        proxy.take();
        const started = performance.now();
        assert.deepEqual(await follower.promote(), { txid });
        const ms = performance.now() - started;
        const promotion = proxy.take();
        t.diagnostic(
          `${files} L0 files: ${JSON.stringify(promotion.counts)}, ${promotion.listed} files listed, ` +
            `in ${promotion.rounds} rounds, ${ms.toFixed(0)} ms`,
        );
        seen.push(promotion);
        // Every level in one LIST of the replica's prefix.
        assert.equal(promotion.counts.LIST, 1, 'one listing of every level');
        // L0 is listed from the next TXID on: none of its files, only the
        // few of the levels above (a snapshot, a compaction).
        assert.ok(promotion.listed < LEVELS, `${promotion.listed} files listed`);
        assert.equal(promotion.counts['GET lease'], 1, 'one read of the lease');
        assert.equal(promotion.counts['PUT lease'], 1, 'one conditional write of the lease');
        // After the lease: the next TXID's L0 file and a full image at that
        // TXID, by name, both absent.
        assert.equal(promotion.counts['GET ltx'], 2, 'two files asked for by name');
        assert.equal(promotion.counts['PUT ltx'], undefined, 'nothing uploaded');
        // The first write goes out as TXID txid + 1 with one conditional create.
        await follower.prepare('INSERT INTO t VALUES (?)').run('after');
        assert.deepEqual(await follower.syncReplica(), { txid: txid + 1 });
        const write = proxy.take();
        t.diagnostic(`${files} L0 files, the first upload: ${JSON.stringify(write.counts)}`);
        assert.deepEqual(write.counts, { 'PUT ltx': 1 });
      } finally {
        await follower.close();
      }
    }
    assert.deepEqual(seen[0].counts, seen[1].counts);
  } finally {
    await proxy.stop();
  }
});
