// REP — replication (docs/performance.md), in one run, offloop's defaults
// throughout (WAL, synchronous NORMAL, the checkpointer on):
//
//  a. insert throughput and latency with replication off, offloop
//     replicating to a folder and to S3 (moto), and a Litestream 0.5
//     sidecar (`litestream replicate`) beside an offloop that does not
//     replicate, to a folder and to S3 — each run in a fresh child process
//     (bench/workloads/replicate-insert.mjs), rounds interleaved;
//  b. replication lag at a steady 1,000 commits/s with a 1 s sync interval,
//     watched from outside: the replica is listed over and over, and each
//     new file is restored to find which commits it holds
//     (bench/workloads/replicate-lag.mjs, bench/lib/lag.mjs);
//  c. full restores of 64 MiB and 1 GiB through a simulated link (20 ms
//     per request, one shared 100 MB/s: bench/lib/link.mjs) in front of
//     s3rver, and of moto up to 256 MiB: `Database.restore` against
//     `litestream restore` of the same replica;
//  d. the memory each replica operation costs on a 256 MiB database (the
//     first snapshot and sync, an L1 compaction over the full image, a full
//     restore, a paged restore's fill), each in a fresh child process
//     (bench/workloads/replicate-memory.mjs): its peak resident memory over
//     the process at rest.
//
//   npm run bench -- replicate [--quick] [--only insert,lag,restore,memory] [--max-load X]
//   npm run bench -- replicate --render
//
// Writes bench/results/replicate.{json,md,svg}. --quick (smaller sizes,
// shorter runs) and --only make a partial run, written with a .tmp suffix
// (ignored by git). --render measures nothing: it redraws the Markdown and
// the chart from the saved replicate.json (with --quick or --only, from the
// partial run's replicate.json.tmp).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { runChild } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { coverage, lags } from './lib/lag.mjs';
import { startLink } from './lib/link.mjs';
import { litestreamRestore, litestreamS3Url } from './lib/litestream.mjs';
import { cpuTimes, otherLoadPercent, runUndisturbed } from './lib/machine.mjs';
import { BENCH, HOST_NODE, requireOffloop } from './lib/paths.mjs';
import { epochNow, watchReplica } from './lib/replica-watch.mjs';
import { markdown, chartSpec } from './lib/replicate-report.mjs';
import { MODES, offloopReplicaOptions, replicaArgs, replicaFor } from './lib/replication-modes.mjs';
import { publish, resultPath } from './lib/results.mjs';
import { startMoto, startS3rver } from './lib/s3-servers.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';
import { processCpuSeconds, toolVersions } from './lib/tools.mjs';

const COMMAND = 'npm run bench -- replicate';
const INSERT = path.join(BENCH, 'workloads', 'replicate-insert.mjs');
const LAG = path.join(BENCH, 'workloads', 'replicate-lag.mjs');
const RESTORE = path.join(BENCH, 'workloads', 'replicate-restore.mjs');
const MEMORY = path.join(BENCH, 'workloads', 'replicate-memory.mjs');
const MEMORY_PHASES = ['snapshot', 'compact', 'restore', 'paged'];
const BUCKET = 'bench';
const MiB = 1 << 20;
const SYNC_INTERVAL_MS = 1000;
const LINK = { latencyMs: 20, bytesPerSecond: 100e6 };
// A run during which other processes used more than this share of the
// machine's CPU is run again, up to MAX_ATTEMPTS in all (insert runs only:
// a lag or restore run is long, and its figures move less with load).
const OTHER_LOAD_PERCENT = 15;
const MAX_ATTEMPTS = 2;
// How often the replica is listed while lag is measured: a folder is
// cheap to list; every S3 listing costs moto CPU the writer competes with.
const WATCH_INTERVAL_MS = { file: 5, s3: 20 };
const GOAL = { throughputRatio: 0.9, lagP99Ms: 1500, restoreOverLinkLimit: 1.2, memoryGrowthMiB: 64 };

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
    render: { type: 'boolean', default: false },
  },
});
const parts = new Set((opts.only ?? 'insert,lag,restore,memory').split(','));
const partial = opts.quick || opts.only !== undefined;
const PLAN = opts.quick
  ? { insertSeconds: 3, insertRounds: 1, callers: 8, lagSeconds: 6, lagWarmup: 2, restoreSizes: [8 * MiB, 32 * MiB], restoreRounds: [1, 1], memoryBytes: 32 * MiB }
  : { insertSeconds: 10, insertRounds: 3, callers: 8, lagSeconds: 20, lagWarmup: 3, restoreSizes: [64 * MiB, 1024 * MiB], restoreRounds: [3, 1], memoryBytes: 256 * MiB };

let prefixes = 0;
/** A key prefix no other run used. */
const freshPrefix = (what) => `${what}-${++prefixes}`;

function scratch(parent, name) {
  return fs.mkdtempSync(path.join(parent, `${name}-`));
}

// ---------------------------------------------------------------------------
// a. Insert throughput

async function insertOnce(ctx, mode) {
  const dir = scratch(ctx.dir, 'insert');
  const replica = replicaFor(mode, { dir, endpoint: ctx.moto.endpoint, bucket: BUCKET, prefix: freshPrefix(`insert-${mode.id}`) });
  const server0 = processCpuSeconds(ctx.moto.pid);
  process.stderr.write(`  insert, ${mode.label} ... `);
  try {
    const args = [INSERT, '--mode', mode.id, '--dir', dir, '--seconds', String(PLAN.insertSeconds), '--callers', String(PLAN.callers)];
    args.push('--sync-interval', String(SYNC_INTERVAL_MS), '--offloop', ctx.offloop.dir, ...replicaArgs(replica));
    const { result } = await runChild(HOST_NODE, args, { timeoutMs: 120_000 });
    // moto's CPU is this run's own work, not other load on the machine.
    result.serverCpuSeconds = processCpuSeconds(ctx.moto.pid) - server0;
    result.cpuSeconds += result.serverCpuSeconds;
    result.rowsPerSecond = (result.calls / result.wallMs) * 1000;
    process.stderr.write(`${Math.round(result.rowsPerSecond)} rows/s, p99 ${result.latencyMs.p99} ms\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

function summarizeInsert(mode, runs) {
  const ok = runs.filter((r) => !r.error);
  // CPU s × 1e6 / rows = µs per row = ms per 1,000 rows.
  const cpuPerKRows = (r) => ((r.processCpuSeconds + (r.sidecarCpuSeconds ?? 0) + r.serverCpuSeconds) * 1e6) / r.calls;
  const replicaCpu = (r) => (r.threadCpuMs['offloop-replica'] ?? 0) / (r.calls / 1000);
  // Cores: CPU time over the timed window, by thread (names as Linux cuts them).
  const cores = (r, thread) => (r.threadCpuMs[thread] ?? 0) / r.wallMs;
  return {
    mode: mode.id,
    label: mode.label,
    rowsPerSecond: round(median(ok.map((r) => r.rowsPerSecond)), 0),
    latencyMs: {
      p50: round(median(ok.map((r) => r.latencyMs.p50)), 3),
      p99: round(median(ok.map((r) => r.latencyMs.p99)), 3),
      p999: round(median(ok.map((r) => r.latencyMs.p999)), 3),
    },
    cpuMsPerThousandRows: round(median(ok.map(cpuPerKRows)), 1),
    replicaThreadsCpuMsPerThousandRows: round(median(ok.map(replicaCpu)), 1),
    sidecarCpuCores: mode.replicator === 'litestream' ? round(median(ok.map((r) => r.sidecarCpuSeconds / (r.wallMs / 1000))), 2) : null,
    serverCpuCores: mode.target === 's3' ? round(median(ok.map((r) => r.serverCpuSeconds / (r.wallMs / 1000))), 2) : null,
    threadCores: {
      js: round(median(ok.map((r) => cores(r, 'js'))), 2),
      writer: round(median(ok.map((r) => cores(r, 'offloop-writer'))), 2),
      checkpointer: round(median(ok.map((r) => cores(r, 'offloop-checkpo'))), 2),
      replica: round(median(ok.map((r) => cores(r, 'offloop-replica'))), 2),
      process: round(median(ok.map((r) => r.processCpuSeconds / (r.wallMs / 1000))), 2),
    },
    writerUsPerRow: round(median(ok.map((r) => ((r.threadCpuMs['offloop-writer'] ?? 0) * 1000) / r.calls)), 1),
    checkpointRuns: round(median(ok.map((r) => r.checkpoint.runs)), 0),
    writerWaitMaxMs: round(median(ok.map((r) => r.writerWaitMaxMs)), 0),
    walMBAtEnd: round(median(ok.map((r) => r.walBytesAtEnd / 1e6)), 1),
    backstops: ok.map((r) => r.checkpoint.backstops),
    drainMs: mode.replicator ? round(median(ok.map((r) => r.drainMs)), 0) : null,
    settings: ok[0]?.settings ?? null,
    rounds: runs.map((r) => (r.error ? { error: r.error } : { rowsPerSecond: round(r.rowsPerSecond, 0), p99: r.latencyMs.p99, otherLoadPercent: r.otherLoadPercent ?? null, attempts: r.attempts })),
    raw: ok,
  };
}

async function measureInsert(ctx) {
  console.error(`a. insert throughput: ${MODES.length} modes × ${PLAN.insertRounds} rounds of ${PLAN.insertSeconds} s`);
  const runs = new Map(MODES.map((m) => [m.id, []]));
  for (let round = 0; round < PLAN.insertRounds; round++) {
    const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]);
    for (const mode of order) {
      runs.get(mode.id).push(await runUndisturbed(() => insertOnce(ctx, mode), { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT }));
    }
  }
  const rows = MODES.map((m) => summarizeInsert(m, runs.get(m.id)));
  const off = rows.find((r) => r.mode === 'off').rowsPerSecond;
  for (const r of rows) r.ratioToOff = round(r.rowsPerSecond / off, 3);
  return { seconds: PLAN.insertSeconds, rounds: PLAN.insertRounds, callers: PLAN.callers, modes: rows };
}

// ---------------------------------------------------------------------------
// b. Lag

/** Quantiles 0, 1, …, 100 % of ascending samples (for the JSON and a chart). */
const quantiles = (ascending) => Array.from({ length: 101 }, (_, q) => round(percentile(ascending, Math.max(q, 0.0001) / 100), 1));

function lagFigures(lagsMs) {
  const s = sorted(lagsMs);
  return { p50: round(percentile(s, 0.5), 0), p90: round(percentile(s, 0.9), 0), p99: round(percentile(s, 0.99), 0), max: round(s[s.length - 1], 0), count: s.length, quantiles: quantiles(s) };
}

async function lagOnce(ctx, mode) {
  const dir = scratch(ctx.dir, 'lag');
  const replica = replicaFor(mode, { dir, endpoint: ctx.moto.endpoint, bucket: BUCKET, prefix: freshPrefix(`lag-${mode.id}`) });
  process.stderr.write(`  lag, ${mode.label} ... `);
  const before = cpuTimes();
  const server0 = processCpuSeconds(ctx.moto.pid);
  const self0 = process.cpuUsage();
  const watch = watchReplica(replica, { intervalMs: WATCH_INTERVAL_MS[replica.type] });
  try {
    const args = [LAG, '--mode', mode.id, '--dir', dir, '--seconds', String(PLAN.lagSeconds), '--warmup', String(PLAN.lagWarmup)];
    args.push('--sync-interval', String(SYNC_INTERVAL_MS), '--offloop', ctx.offloop.dir, ...replicaArgs(replica));
    let result;
    let seen;
    try {
      ({ result } = await runChild(HOST_NODE, args, { timeoutMs: 180_000 }));
    } finally {
      seen = await watch.stop();
    }
    const self = process.cpuUsage(self0);
    const ownCpu = result.cpuSeconds + (processCpuSeconds(ctx.moto.pid) - server0) + (self.user + self.system) / 1e6;
    const load = otherLoadPercent(before, cpuTimes(), ownCpu);
    const firstId = result.firstMeasuredId;
    const lastId = firstId + result.ackMs.length - 1;
    const ackAt = (id) => result.startedAt + result.ackMs[id - firstId];
    // A file seen before the first measured commit cannot hold it; a
    // second of slack covers an acknowledgement the event loop delivered late.
    const fromMs = ackAt(firstId) - 1000;
    const cov = await coverage({ Database: ctx.Database, replica, firstSeen: seen.firstSeen, fromMs, lastId, scratchDir: dir });
    const outside = lags(cov.files, firstId, lastId, ackAt);
    const out = {
      mode: mode.id,
      label: mode.label,
      commits: result.ackMs.length,
      achievedRate: round(result.achievedRate, 1),
      issueLateMs: { p99: round(result.issueLateMs.p99, 2), max: round(result.issueLateMs.max, 2) },
      failures: result.failureCount,
      lagMs: lagFigures(outside.lagsMs),
      unseen: outside.unseen,
      filesRestored: cov.files.length,
      filesSkipped: cov.skipped,
      watch: { intervalMs: WATCH_INTERVAL_MS[replica.type], polls: seen.polls, listingMs: { p50: round(seen.pollMs.p50, 2), max: round(seen.pollMs.max, 1) } },
      otherLoadPercent: load,
    };
    if (result.statsFirstSeen.length > 0) {
      // The same commits, timed by when stats().replica.txid first
      // showed each file instead of when a listing first held it.
      const statsAt = new Map(result.statsFirstSeen);
      const byStats = cov.files.filter((f) => statsAt.has(f.txid)).map((f) => ({ ...f, seenAt: statsAt.get(f.txid) }));
      const inside = lags(byStats, firstId, lastId, ackAt);
      const gaps = cov.files.filter((f) => statsAt.has(f.txid)).map((f) => f.seenAt - statsAt.get(f.txid));
      out.statsLagMs = lagFigures(inside.lagsMs);
      out.listingAfterStatsMs = { p50: round(median(gaps), 1), min: round(Math.min(...gaps), 1), max: round(Math.max(...gaps), 1) };
    }
    process.stderr.write(`p50 ${out.lagMs.p50} ms, p99 ${out.lagMs.p99} ms (${out.unseen} commits never seen), other load ${load}%\n`);
    return out;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { mode: mode.id, label: mode.label, error: err.message };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measureLag(ctx) {
  const modes = MODES.filter((m) => m.replicator && m.lag !== false);
  console.error(`b. lag: ${modes.length} modes, ${PLAN.lagSeconds} s at 1,000 commits/s each`);
  const runs = [];
  for (const mode of modes) runs.push(await lagOnce(ctx, mode));
  return { rate: 1000, seconds: PLAN.lagSeconds, warmupSeconds: PLAN.lagWarmup, syncIntervalMs: SYNC_INTERVAL_MS, modes: runs };
}

// ---------------------------------------------------------------------------
// c. Restore

/** Builds a database of about `bytes` of random 1000-byte blobs (4 to a page: nothing to compress). */
async function buildDatabase(Database, file, bytes) {
  const db = await Database.open(file, { journalMode: 'delete', synchronous: 'off', readers: 0, checkpoint: false });
  await db.exec('CREATE TABLE blobs(id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const fill = db.prepare('WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) INSERT INTO blobs(body) SELECT randomblob(1000) FROM k');
  const size = db.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()');
  // 64 MiB of rows per statement: a few transactions, none of them huge.
  for (let { n } = await size.get(); n < bytes; { n } = await size.get()) {
    await fill.run(Math.min(65_536, Math.ceil((bytes - n) / 1024) + 1));
  }
  await db.close();
  return fs.statSync(file).size;
}

function sha256(file) {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

async function restoreOnce(ctx, { restorer, server, link, prefix, bytes, sourceSha, dir }) {
  const out = path.join(dir, `restored-${restorer}.db`);
  process.stderr.write(`  restore ${(bytes / MiB).toFixed(0)} MiB from ${server.name}, ${restorer} ... `);
  link.reset();
  const server0 = processCpuSeconds(server.pid);
  try {
    let run;
    if (restorer === 'offloop') {
      const args = [RESTORE, '--url', `s3://${BUCKET}/${prefix}`, '--endpoint', link.url, '--out', out, '--offloop', ctx.offloop.dir];
      ({ result: run } = await runChild(HOST_NODE, args, { timeoutMs: 600_000 }));
    } else {
      const startedAt = epochNow();
      const r = await litestreamRestore({ url: litestreamS3Url({ endpoint: link.url, bucket: BUCKET, prefix }), out, timeoutMs: 600_000 });
      run = { ...r, startedAt };
    }
    const counters = link.counters();
    const serverCpuSeconds = processCpuSeconds(server.pid) - server0;
    const seconds = run.wallMs / 1000;
    const limit = bytes / LINK.bytesPerSecond + LINK.latencyMs / 1000;
    const identical = (await sha256(out)) === sourceSha;
    const result = {
      restorer,
      server: server.name,
      bytes,
      seconds: round(seconds, 2),
      megabytesPerSecond: round(bytes / 1e6 / seconds, 1),
      linkLimitSeconds: round(limit, 3),
      overLinkLimit: round(seconds / limit, 2),
      requests: counters.byMethod,
      bytesOverLink: counters.responseBytes + counters.requestBytes,
      // From the start to the first request, and from the last byte to the end.
      beforeFirstRequestSeconds: round((counters.firstRequestAt - run.startedAt) / 1000, 2),
      afterLastByteSeconds: round((run.startedAt + run.wallMs - counters.lastByteAt) / 1000, 2),
      restorerCpuSeconds: run.cpuSeconds === null ? null : round(run.cpuSeconds, 2),
      serverCpuSeconds: round(serverCpuSeconds, 2),
      identicalToSource: identical,
    };
    process.stderr.write(`${result.seconds} s (${result.overLinkLimit}× the link's limit), ${identical ? 'identical' : 'DIFFERENT'}\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { restorer, server: server.name, bytes, error: err.message };
  } finally {
    for (const f of [out, `${out}-wal`, `${out}-shm`, `${out}.tmp`]) fs.rmSync(f, { force: true });
  }
}

// moto reads a whole object to answer each ranged GET, so a restore's
// 8 MiB ranges of a 1 GiB snapshot cost it minutes of CPU and the figure
// says nothing of the restorer. Past this size only s3rver, which streams a
// range from its file as S3 does, serves the restores.
const MOTO_RESTORE_LIMIT = 256 * MiB;

function restoreServers(bytes) {
  return bytes > MOTO_RESTORE_LIMIT ? ['s3rver'] : ['moto', 's3rver'];
}

async function measureRestore(ctx) {
  console.error(`c. restore: ${PLAN.restoreSizes.map((b) => `${b / MiB} MiB`).join(' and ')} through a ${LINK.latencyMs} ms, ${LINK.bytesPerSecond / 1e6} MB/s link, from moto (up to ${MOTO_RESTORE_LIMIT / MiB} MiB) and s3rver`);
  const results = [];
  const uploads = [];
  for (const [i, target] of PLAN.restoreSizes.entries()) {
    const dir = scratch(ctx.dir, 'restore');
    try {
      const file = path.join(dir, 'source.db');
      const t0 = performance.now();
      const bytes = await buildDatabase(ctx.Database, file, target);
      const buildSeconds = (performance.now() - t0) / 1000;
      for (const name of restoreServers(target)) {
        const server = name === 'moto' ? await startMoto({ buckets: [BUCKET] }) : await startS3rver({ dir: scratch(ctx.dir, 's3rver'), buckets: [BUCKET] });
        const link = await startLink({ target: server.endpoint, ...LINK });
        try {
          const prefix = freshPrefix('restore');
          // The replica: the first upload of a database is a full snapshot.
          const t1 = performance.now();
          const replica = { type: 's3', endpoint: server.endpoint, bucket: BUCKET, prefix };
          const db = await ctx.Database.open(file, { replica: offloopReplicaOptions(replica, SYNC_INTERVAL_MS) });
          await db.syncReplica();
          await db.close();
          fs.rmSync(`${file}-replica`, { recursive: true, force: true });
          // After the close: opening it for replication made it a WAL database.
          const sourceSha = await sha256(file);
          uploads.push({ bytes, server: name, buildSeconds: round(buildSeconds, 1), uploadSeconds: round((performance.now() - t1) / 1000, 1) });
          for (let r = 0; r < PLAN.restoreRounds[i]; r++) {
            const order = r % 2 === 0 ? ['offloop', 'litestream'] : ['litestream', 'offloop'];
            for (const restorer of order) results.push(await restoreOnce(ctx, { restorer, server, link, prefix, bytes, sourceSha, dir }));
          }
        } finally {
          await link.close();
          await server.stop();
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return { link: LINK, sizes: PLAN.restoreSizes, rounds: PLAN.restoreRounds, uploads, runs: results };
}

// ---------------------------------------------------------------------------
// d. Memory

/** Each phase's peak over the process at rest, in order, on one folder replica. */
async function measureMemory(ctx) {
  const dir = scratch(ctx.dir, 'memory');
  try {
    const db = path.join(dir, 'source.db');
    const bytes = await buildDatabase(ctx.Database, db, PLAN.memoryBytes);
    const url = `file://${path.join(dir, 'replica')}`;
    const runs = [];
    for (const phase of MEMORY_PHASES) {
      const out = path.join(dir, `${phase}.db`);
      const args = [MEMORY, '--phase', phase, '--db', db, '--url', url, '--out', out, '--offloop', ctx.offloop.dir];
      const { result } = await runChild(HOST_NODE, ['--expose-gc', ...args], { timeoutMs: 600_000 });
      console.error(`  memory ${phase}: +${result.growthMiB} MiB over ${result.idleMiB} MiB at rest`);
      runs.push(result);
    }
    // The first sync again, to S3: its files go up as conditional creates.
    const s3 = await startMoto({ buckets: [BUCKET] });
    try {
      const url = `s3://${BUCKET}/${freshPrefix('memory')}`;
      const args = [MEMORY, '--phase', 'snapshot', '--db', db, '--url', url, '--endpoint', s3.endpoint, '--offloop', ctx.offloop.dir];
      const { result } = await runChild(HOST_NODE, ['--expose-gc', ...args], { timeoutMs: 600_000 });
      console.error(`  memory snapshot to S3: +${result.growthMiB} MiB over ${result.idleMiB} MiB at rest`);
      runs.push(result);
    } finally {
      await s3.stop();
    }
    return { bytes, runs };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------

async function measure() {
  const bench = await startBenchmark({ label: 'replicate', maxLoad: Number(opts['max-load']), tmpName: 'rep' });
  const report = {
    benchmark: 'REP — replication',
    command: COMMAND,
    ...bench.header,
    tools: toolVersions(),
    s3rver: JSON.parse(fs.readFileSync(path.join(BENCH, 'node_modules', 's3rver', 'package.json'), 'utf8')).version,
    plan: { ...PLAN, quick: opts.quick, parts: [...parts] },
    goal: GOAL,
  };
  const started = performance.now();
  const ctx = { offloop: bench.offloop, dir: bench.dir, Database: requireOffloop(bench.offloop.dir).Database, moto: null };
  try {
    if (parts.has('insert') || parts.has('lag')) ctx.moto = await startMoto({ buckets: [BUCKET] });
    if (parts.has('insert')) report.insert = await measureInsert(ctx);
    if (parts.has('lag')) report.lag = await measureLag(ctx);
    await ctx.moto?.stop();
    ctx.moto = null;
    if (parts.has('restore')) report.restore = await measureRestore(ctx);
    if (parts.has('memory')) report.memory = await measureMemory(ctx);
  } finally {
    await ctx.moto?.stop();
    report.minutes = round((performance.now() - started) / 60_000, 1);
    bench.finish(report);
  }
  return report;
}

// --render with --quick or --only redraws the partial run's files.
const saved = resultPath(`replicate.json${partial ? '.tmp' : ''}`);
const report = opts.render ? JSON.parse(fs.readFileSync(saved, 'utf8')) : await measure();
await publish('replicate', report, markdown(report), chartSpec(report), partial);
