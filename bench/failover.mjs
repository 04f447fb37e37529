// FAILOVER — one fenced writer (docs/performance.md), in one run, through
// the simulated link (bench/lib/link.mjs: 20 ms per request, one shared
// 100 MB/s) in front of moto:
//
//  a. commit latency p50/p99 and commits/s for `durability: 'replica'`
//     against `'local'`, at 1, 16 and 64 concurrent writers, each run in a
//     fresh child process (bench/workloads/failover-commits.mjs), the two
//     durabilities interleaved at each count;
//  b. failover over `--rounds` rounds, through promotion: a writer under
//     `durability: 'replica'` with 16 callers is SIGKILLed once it has
//     acknowledged writes; a standby (bench/workloads/failover-writer.mjs
//     --standby: a follower with `promote: 'auto'`, polling every
//     `pollInterval`) promotes itself once the lease expired, and the next
//     round's standby starts. The failover time runs from the kill to the
//     new writer's first acknowledged write, and every write the killed one
//     acknowledged is looked for in the database the standby promoted.
//
//   npm run bench -- failover [--quick] [--rounds 10] [--max-load X]
//
// Writes bench/results/failover.{json,md,svg}; --quick (shorter runs,
// 3 rounds) writes them with a .tmp suffix (ignored by git).

import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { parseArgs } from 'node:util';

import { runChild } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { DEFAULT_BYTES_PER_SECOND, DEFAULT_LATENCY_MS, startLink } from './lib/link.mjs';
import { BENCH, HOST_NODE } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { startMoto } from './lib/s3-servers.mjs';
import { percentile, round } from './lib/stats.mjs';
import { toolVersions } from './lib/tools.mjs';

const COMMAND = 'npm run bench -- failover';
const COMMITS = path.join(BENCH, 'workloads', 'failover-commits.mjs');
const WRITER = path.join(BENCH, 'workloads', 'failover-writer.mjs');
const BUCKET = 'bench';
const WRITER_COUNTS = [1, 16, 64];
const LINK = { latencyMs: DEFAULT_LATENCY_MS, bytesPerSecond: DEFAULT_BYTES_PER_SECOND };
// The failover rounds' lease: the shortest offloop takes.
const LEASE_TTL_MS = 3000;
// Acknowledged writes a killed writer has made before the kill.
const ACKED_BEFORE_KILL = 200;
// Callers of each failover writer.
const ROUND_WRITERS = 16;
// How often a standby reads the lease: the follower's default.
const POLL_INTERVAL_MS = 1000;

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    'max-load': { type: 'string', default: '3' },
  },
});
const SECONDS = opts.quick ? 3 : 8;
const ROUNDS = Number(opts.rounds ?? (opts.quick ? 3 : 10));
// The goals (docs/performance.md). An upload of one sync's rows is
// a few KiB: its transfer at 100 MB/s is well under a millisecond.
const GOAL = {
  lost: 0,
  replicaCommitsPerSecondAt64: 1000,
  replicaP99AtMostMs: `3 round trips (${3 * LINK.latencyMs} ms) + one upload's transfer`,
  failoverAtMostMs: `leaseTtl + pollInterval + 1000 (${LEASE_TTL_MS} + ${POLL_INTERVAL_MS} + 1000)`,
};

async function measureCommits(ctx) {
  const runs = [];
  for (const writers of WRITER_COUNTS) {
    for (const durability of ['local', 'replica']) {
      const prefix = `commits-${durability}-${writers}`;
      const args = [COMMITS, '--url', `s3://${BUCKET}/${prefix}`, '--endpoint', ctx.link.url, '--durability', durability];
      args.push('--writers', String(writers), '--dir', ctx.dir, '--seconds', String(SECONDS), '--offloop', ctx.offloop.dir);
      const before = ctx.link.counters();
      const { result } = await runChild(HOST_NODE, args, { timeoutMs: 180_000 });
      const after = ctx.link.counters();
      result.linkRequests = after.requests - before.requests;
      console.error(JSON.stringify(result));
      runs.push(result);
    }
  }
  return runs;
}

/** A failover writer child; `lines` gets each JSON line it prints. */
function startWriter(ctx, file, prefix, standby) {
  const args = [WRITER, ...(standby ? ['--standby', '--poll-interval', String(POLL_INTERVAL_MS)] : []), '--url', `s3://${BUCKET}/${prefix}`, '--endpoint', ctx.link.url, '--file', path.join(ctx.dir, file)];
  args.push('--writers', String(ROUND_WRITERS), '--lease-ttl', String(LEASE_TTL_MS), '--offloop', ctx.offloop.dir);
  const child = spawn(HOST_NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const w = { child, acked: [], rows: null, openedAt: null, promotedAt: null, firstAckAt: null, waiters: [] };
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.opened) w.openedAt = m.at;
    if (m.promoted) w.promotedAt = m.at;
    if (m.rows) w.rows = new Set(m.rows);
    if (m.acked) {
      w.acked.push(m.acked);
      w.firstAckAt ??= m.at;
    }
    for (const f of w.waiters.splice(0)) f();
  });
  w.until = async (done, what) => {
    const deadline = Date.now() + 120_000;
    while (!done()) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`failover writer: no ${what}`);
      await new Promise((resolve) => {
        w.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  w.kill = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  return w;
}

async function measureFailover(ctx) {
  const prefix = 'failover';
  const rounds = [];
  let current = startWriter(ctx, 'round-0.db', prefix, false);
  let next = null;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      await current.until(() => current.acked.length >= ACKED_BEFORE_KILL, 'acknowledged writes');
      next = startWriter(ctx, `round-${round}.db`, prefix, true);
      await next.until(() => next.openedAt !== null, 'standby open');
      await current.kill();
      const killedAt = Date.now();
      const acked = current.acked;
      await next.until(() => next.firstAckAt !== null && next.rows !== null, 'takeover');
      const lost = acked.filter((v) => !next.rows.has(v)).length;
      const r = { round, acked: acked.length, lost, failoverMs: next.firstAckAt - killedAt, promoteMs: next.promotedAt - killedAt };
      console.error(JSON.stringify(r));
      rounds.push(r);
      current = next;
      next = null;
    }
  } finally {
    await current.kill();
    await next?.kill();
  }
  const times = rounds.map((r) => r.failoverMs).sort((a, b) => a - b);
  return {
    rounds,
    leaseTtlMs: LEASE_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
    failoverP50Ms: percentile(times, 0.5),
    failoverMaxMs: times[times.length - 1],
    acknowledged: rounds.reduce((n, r) => n + r.acked, 0),
    lost: rounds.reduce((n, r) => n + r.lost, 0),
  };
}

function markdown(report) {
  const byKey = new Map(report.commits.map((r) => [`${r.durability}/${r.writers}`, r]));
  const rows = WRITER_COUNTS.map((writers) => {
    const local = byKey.get(`local/${writers}`);
    const replica = byKey.get(`replica/${writers}`);
    return [
      writers,
      local.commitsPerSecond,
      local.p50Ms,
      local.p99Ms,
      replica.commitsPerSecond,
      replica.p50Ms,
      replica.p99Ms,
      replica.uploads,
      round(replica.commits / Math.max(1, replica.uploads), 1),
    ];
  });
  const f = report.failover;
  return [
    `# FAILOVER — one fenced writer (${report.date})`,
    '',
    `${report.command}; link ${LINK.latencyMs} ms per request, ${LINK.bytesPerSecond / 1e6} MB/s shared, in front of moto; lease ${report.commitLeaseTtlMs} ms (commits) and ${f.leaseTtlMs} ms (failover). A shared 2-core machine: compare within this run.`,
    '',
    markdownTable(
      ['writers', "'local' commits/s", 'p50 ms', 'p99 ms', "'replica' commits/s", 'p50 ms', 'p99 ms', 'uploads', 'commits per upload'].map(
        (title) => ({ title, align: 'right' }),
      ),
      rows,
    ),
    '',
    `Failover over ${f.rounds.length} rounds through promotion (SIGKILL of a writer with ${ROUND_WRITERS} callers under durability: 'replica', to the first write acknowledged by a standby with promote: 'auto', leaseTtl ${f.leaseTtlMs} ms, pollInterval ${f.pollIntervalMs} ms): p50 ${f.failoverP50Ms} ms, max ${f.failoverMaxMs} ms (goal: at most ${f.leaseTtlMs + f.pollIntervalMs + 1000} ms); acknowledged writes lost: ${f.lost} of ${f.acknowledged}.`,
    '',
  ].join('\n');
}

function chartSpec(report) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'FAILOVER: commits/s by durability and writers (simulated 20 ms link)',
    data: { values: report.commits.map((r) => ({ writers: String(r.writers), durability: r.durability, rate: r.commitsPerSecond })) },
    mark: 'bar',
    encoding: {
      x: { field: 'writers', type: 'ordinal', title: 'concurrent writers' },
      xOffset: { field: 'durability' },
      y: { field: 'rate', type: 'quantitative', title: 'commits/s' },
      color: { field: 'durability' },
    },
  };
}

const bench = await startBenchmark({ label: 'failover', maxLoad: Number(opts['max-load']), tmpName: 'failover' });
const report = {
  benchmark: 'FAILOVER — one fenced writer',
  command: COMMAND,
  ...bench.header,
  tools: toolVersions(),
  plan: { seconds: SECONDS, rounds: ROUNDS, writerCounts: WRITER_COUNTS, link: LINK, quick: opts.quick },
  goal: GOAL,
  commitLeaseTtlMs: 10_000,
};
const started = performance.now();
const ctx = { offloop: bench.offloop, dir: bench.dir, moto: null, link: null };
try {
  ctx.moto = await startMoto({ buckets: [BUCKET] });
  ctx.link = await startLink({ target: ctx.moto.endpoint, ...LINK });
  report.commits = await measureCommits(ctx);
  report.failover = await measureFailover(ctx);
} finally {
  await ctx.link?.close();
  await ctx.moto?.stop();
  report.minutes = round((performance.now() - started) / 60_000, 1);
  bench.finish(report);
}
await publish('failover', report, markdown(report), chartSpec(report), opts.quick);
