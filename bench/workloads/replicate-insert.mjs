// REP (a): insert throughput and latency in one replication mode, in one
// child process of bench/replicate.mjs.
//
//   node bench/workloads/replicate-insert.mjs --mode <id> --dir <scratch> [--seconds 10]
//        [--warmup 1] [--callers 8] [--offloop <package dir>] [replica arguments]
//
// Opens a fresh database (offloop's defaults: WAL, synchronous NORMAL, the
// checkpointer on), replicating as the mode says — offloop's own replica,
// or a `litestream replicate` sidecar started here once the table exists —
// then `callers` async callers each insert one ~200-byte row per awaited
// call, back to back, for `seconds` after a warm-up. Prints one JSON line:
// rows, wall time, latency percentiles, CPU (this process by thread, and
// the sidecar's), and how long the replica took to catch up at the end.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { startLitestream } from '../lib/litestream.mjs';
import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { REPLICA_ARG_OPTIONS, modeById, offloopReplicaOptions, replicaFromArgs } from '../lib/replication-modes.mjs';
import { percentile, round } from '../lib/stats.mjs';
import { threadCpuMs } from '../lib/tools.mjs';

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string' },
    dir: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '1' },
    callers: { type: 'string', default: '8' },
    'sync-interval': { type: 'string', default: '1000' },
    offloop: { type: 'string', default: ROOT },
    ...REPLICA_ARG_OPTIONS,
  },
});
const mode = modeById(opts.mode);
const replica = replicaFromArgs(mode, opts);
const SYNC_INTERVAL_MS = Number(opts['sync-interval']);
const CALLERS = Number(opts.callers);
/** Bytes of random payload per row: with its id and time, a row of about 200 bytes. */
const BODY_BYTES = 184;
// Random bodies, so the replica's compression has nothing easy to squeeze.
const bodies = Array.from({ length: 4096 }, () => crypto.randomBytes(BODY_BYTES));

const { Database } = requireOffloop(opts.offloop);
const file = path.join(opts.dir, 'insert.db');
const db = await Database.open(file, mode.replicator === 'offloop' ? { replica: offloopReplicaOptions(replica, SYNC_INTERVAL_MS) } : {});
await db.exec('CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER NOT NULL, body BLOB NOT NULL)');
const sidecar =
  mode.replicator === 'litestream'
    ? await startLitestream({ db: file, replica, dir: path.join(opts.dir, 'litestream'), syncIntervalMs: SYNC_INTERVAL_MS })
    : null;
const insert = db.prepare('INSERT INTO events(at, body) VALUES (?, ?)');
const { journalMode, synchronous, journalSizeLimit } = (await db.settings()).writer;

/** Runs the callers for `ms`; returns the latencies (ms) of the calls made. */
async function load(ms) {
  const end = performance.now() + ms;
  const latencies = [];
  let next = 0;
  const caller = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await insert.run(Date.now(), bodies[next++ & 4095]);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  return latencies;
}

await load(Number(opts.warmup) * 1000);
const cpu0 = process.cpuUsage();
const threads0 = threadCpuMs();
const sidecar0 = sidecar?.cpuSeconds() ?? 0;
const stats0 = db.stats();
const t0 = performance.now();
const latencies = await load(Number(opts.seconds) * 1000);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const threads1 = threadCpuMs();
const sidecarCpuSeconds = sidecar ? sidecar.cpuSeconds() - sidecar0 : null;
const walBytes = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
const stats1 = db.stats();

// How long the replica takes to hold every row once the load stops.
const drain0 = performance.now();
const synced = mode.replicator === 'offloop' ? await db.syncReplica() : sidecar ? await sidecar.sync() : null;
const drainMs = mode.replicator ? performance.now() - drain0 : null;
const { n: rows } = await db.prepare('SELECT count(*) AS n FROM events').get();
await sidecar?.stop();
await db.close();

latencies.sort((a, b) => a - b);
const threadCpu = {};
for (const [name, ms] of Object.entries(threads1)) threadCpu[name] = round(ms - (threads0[name] ?? 0), 1);
console.log(
  JSON.stringify({
    node: process.version,
    mode: mode.id,
    callers: CALLERS,
    settings: { journalMode, synchronous, journalSizeLimit },
    calls: latencies.length,
    rowsInTable: rows,
    wallMs,
    latencyMs: {
      p50: round(percentile(latencies, 0.5), 3),
      p99: round(percentile(latencies, 0.99), 3),
      p999: round(percentile(latencies, 0.999), 3),
      max: round(latencies.at(-1), 3),
    },
    processCpuSeconds: (cpu.user + cpu.system) / 1e6,
    sidecarCpuSeconds,
    threadCpuMs: threadCpu,
    walBytesAtEnd: walBytes,
    // The checkpointer's and the writer's figures over the timed window.
    checkpoint: {
      runs: stats1.checkpoint.runs - stats0.checkpoint.runs,
      framesCopied: stats1.checkpoint.framesCopied - stats0.checkpoint.framesCopied,
      writerCatchUps: stats1.checkpoint.writerCatchUps - stats0.checkpoint.writerCatchUps,
      backstops: stats1.checkpoint.backstops - stats0.checkpoint.backstops,
      maxMs: stats1.checkpoint.maxMs,
      backstopMaxMs: stats1.checkpoint.backstopMaxMs,
    },
    writerWaitMaxMs: stats1.writer.waitMaxMs,
    replicaAtEnd: stats1.replica,
    synced,
    drainMs,
    // Everything this process and its sidecar used, start-up included: the
    // parent tells other work on the machine from it.
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage()) + (sidecar?.cpuSeconds() ?? 0),
  }),
);
