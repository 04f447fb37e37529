// FAILOVER (a): commit latency and rate in one durability, in one child
// process of bench/failover.mjs.
//
//   node bench/workloads/failover-commits.mjs --url s3://bucket/prefix --endpoint URL
//        --durability local|replica --writers N --dir <scratch> [--seconds 8]
//        [--warmup 1] [--offloop <package dir>]
//
// Opens a fresh database replicating to the S3 replica at `url` through
// `endpoint` (the simulated link), holding the replica's lease, then
// `writers` async callers each insert one ~200-byte row per awaited call,
// back to back, for `seconds` after a warm-up. Prints one JSON line:
// commits, wall time, commit latency percentiles, and the TXIDs (uploads)
// the replica took meanwhile.

import crypto from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { S3_KEYS, S3_REGION } from '../lib/s3-servers.mjs';
import { percentile, round } from '../lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string' },
    endpoint: { type: 'string' },
    durability: { type: 'string' },
    writers: { type: 'string' },
    dir: { type: 'string' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '1' },
    offloop: { type: 'string', default: ROOT },
  },
});
const WRITERS = Number(opts.writers);
// The lease every writer here holds (the default of durability: 'replica').
const LEASE_TTL_MS = 10_000;
const bodies = Array.from({ length: 4096 }, () => crypto.randomBytes(184));

const { Database } = requireOffloop(opts.offloop);
const db = await Database.open(path.join(opts.dir, `commits-${opts.durability}-${WRITERS}.db`), {
  replica: {
    url: opts.url,
    durability: opts.durability,
    leaseTtl: LEASE_TTL_MS,
    endpoint: opts.endpoint,
    region: S3_REGION,
    forcePathStyle: true,
    ...S3_KEYS,
  },
});
await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, at REAL, body BLOB)');
const insert = db.prepare('INSERT INTO t(at, body) VALUES (?, ?)');

async function run(ms, latencies) {
  const end = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await insert.run(t0, bodies[n++ % bodies.length]);
        latencies?.push(performance.now() - t0);
      }
    }),
  );
}

await run(Number(opts.warmup) * 1000, null);
const txidBefore = db.stats().replica.txid;
const latencies = [];
const started = performance.now();
await run(Number(opts.seconds) * 1000, latencies);
const wallMs = performance.now() - started;
const { txid } = await db.syncReplica();
const stats = db.stats().replica;
await db.close();
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    durability: opts.durability,
    writers: WRITERS,
    commits: latencies.length,
    wallMs: round(wallMs),
    commitsPerSecond: round(latencies.length / (wallMs / 1000)),
    p50Ms: round(percentile(latencies, 0.5)),
    p99Ms: round(percentile(latencies, 0.99)),
    maxMs: round(latencies[latencies.length - 1]),
    uploads: txid - txidBefore,
    lastError: stats.lastError,
  }),
);
