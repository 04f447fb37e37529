// PR: one open of a missing database from its S3 replica, in a child
// process of bench/paged.mjs, so that its timings start from a process
// that has read nothing of the replica and its CPU time is the open's own.
//
//   node bench/workloads/paged-open.mjs --mode paged|full --out <file>
//        --url s3://bucket/prefix --endpoint <url> --ids 17,4711,...
//        [--offloop <package dir>]
//
// It opens `out` with `Database.open(out, { replica, restore: mode })`,
// reads the order with the first id as soon as the open resolves (the
// first response), then the other ids one at a time, then waits for
// `db.filled` and closes. It prints one JSON line: when each step ended
// (ms from the start of the open, and the open's start in ms since the
// epoch, for lining up with the link's counters), `stats().restore` at
// the open, the first response and the end, the process's CPU time in
// each phase, CPU per thread, and the fill's progress every 100 ms.
//
// It never opens anything but `out`, and never writes to the database.

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { ORDER_BY_ID } from '../lib/orders.mjs';
import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { epochNow } from '../lib/replica-watch.mjs';
import { S3_KEYS, S3_REGION } from '../lib/s3-servers.mjs';
import { threadCpuMs } from '../lib/tools.mjs';

/** How often the fill's progress and the threads' CPU are sampled. */
const SAMPLE_MS = 100;
/**
 * No compaction while the run is timed: it would read the replica back
 * through the link. Nothing is written, so nothing else is uploaded.
 */
const NO_COMPACTION = [3_600_000];

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string' },
    out: { type: 'string' },
    url: { type: 'string' },
    endpoint: { type: 'string' },
    ids: { type: 'string' },
    offloop: { type: 'string', default: ROOT },
  },
});
if (opts.mode !== 'paged' && opts.mode !== 'full') throw new Error(`--mode paged or full, not ${opts.mode}`);
const ids = opts.ids.split(',').map(Number);

const { Database } = requireOffloop(opts.offloop);
const replica = { url: opts.url, endpoint: opts.endpoint, region: S3_REGION, ...S3_KEYS, compactionIntervals: NO_COMPACTION };

/** CPU seconds between two `process.cpuUsage()` readings. */
const between = (a, b) => (b.user + b.system - a.user - a.system) / 1e6;
/** Each thread's CPU ms, the highest seen: the fill's thread is gone by the end. */
const threads = {};
const noteThreads = () => {
  for (const [name, ms] of Object.entries(threadCpuMs())) threads[name] = Math.max(threads[name] ?? 0, ms);
};

const cpu0 = process.cpuUsage();
const startedAt = epochNow();
const t0 = performance.now();
const since = () => performance.now() - t0;

const db = await Database.open(opts.out, { replica, restore: opts.mode });
const openMs = since();
const cpuOpen = process.cpuUsage();
// Read before anything else runs: the fill starts after this turn.
const atOpen = db.stats().restore;

const progress = [];
const sample = () => {
  const r = db.stats().restore;
  if (r) progress.push([Math.round(since()), r.pagesLocal, r.bytesFetched, r.requests]);
  noteThreads();
};
const sampler = setInterval(sample, SAMPLE_MS);

const byId = db.prepare(ORDER_BY_ID);
const first = await byId.get(ids[0]);
const firstResponseMs = since();
const atFirst = db.stats().restore;
if (first?.id !== ids[0]) throw new Error(`order ${ids[0]} came back as ${JSON.stringify(first)}`);

const readsMs = [];
for (const id of ids.slice(1)) {
  const t = performance.now();
  const row = await byId.get(id);
  readsMs.push(performance.now() - t);
  if (row?.id !== id) throw new Error(`order ${id} came back as ${JSON.stringify(row)}`);
}
const readsEndMs = since();

await db.filled;
const filledMs = since();
const cpuFilled = process.cpuUsage();
clearInterval(sampler);
sample();
const atEnd = db.stats().restore;
await db.close();
const closedMs = since();

console.log(
  JSON.stringify({
    node: process.version,
    mode: opts.mode,
    startedAt,
    openMs,
    firstResponseMs,
    readsMs,
    readsEndMs,
    filledMs,
    closedMs,
    restore: { atOpen, atFirst, atEnd },
    // The process's CPU: the open, from the open to every page local,
    // and from the start of the open to the end of the close.
    cpuSeconds: { open: between(cpu0, cpuOpen), fill: between(cpuOpen, cpuFilled), total: between(cpu0, process.cpuUsage()) },
    // Since the process started (Node's start and loading the addon too).
    processCpuSeconds: between({ user: 0, system: 0 }, process.cpuUsage()),
    threadCpuMs: threads,
    progress,
  }),
);
