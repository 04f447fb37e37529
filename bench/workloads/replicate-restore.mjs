// REP (c): one full restore with offloop's `Database.restore`, in a child
// process of bench/replicate.mjs, so that its CPU time is the restore's own.
//
//   node bench/workloads/replicate-restore.mjs --url s3://bucket/prefix --endpoint <url>
//        --out <file> [--offloop <package dir>]
//
// Prints one JSON line: the TXID restored, when the call started, its wall
// time, and the CPU time the process used during it (the restore's threads
// are gone by then, so only the process's total tells).

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { S3_KEYS, S3_REGION } from '../lib/s3-servers.mjs';
import { ROOT, requireOffloop } from '../lib/paths.mjs';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string' },
    endpoint: { type: 'string' },
    out: { type: 'string' },
    offloop: { type: 'string', default: ROOT },
  },
});

const { Database } = requireOffloop(opts.offloop);
const cpu0 = process.cpuUsage();
const startedAt = performance.timeOrigin + performance.now();
const t0 = performance.now();
const { txid } = await Database.restore(opts.url, opts.out, { endpoint: opts.endpoint, region: S3_REGION, ...S3_KEYS });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    node: process.version,
    txid,
    startedAt,
    wallMs,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  }),
);
