// CORES — the many-cores side by side (docs/performance.md, issue 40): on
// whatever machine runs it, `get()` by rowid, `all()` of 100 rows and a
// ~5 ms scan, each through better-sqlite3 on the JS thread, a pool of
// worker threads each with its own better-sqlite3 (what a team that wants
// more than one core builds instead), and offloop, with 64 and 256 calls in
// flight. Beside each rate: the JS thread's CPU per call and per row, which
// is offloop's ceiling on a big machine, and the event loop's delay p99.
// A second part pins the whole process to one CPU (taskset -c 0), where
// nothing spins and every nanosecond is work, and compares the JS thread's
// CPU per call with better-sqlite3's whole call.
//
//   npm run bench -- cores [--threads 4,8,15] [--ms N] [--rounds N]
//
// `--threads` lists offloop's reader counts and the pool's worker counts
// (default: 2 on a machine of up to 4 cores, else 4, 8 and cores - 1).
// Each configuration runs in a fresh child (bench/workloads/cores.mjs),
// once per round; rounds interleave the configurations and the table shows
// the median. Writes bench/results/cores.{json,md,svg}; --ms or --rounds
// make a quick partial run, written with a .tmp suffix (ignored by git).

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { runChild } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { describeMachine } from './lib/machine.mjs';
import { BENCH, benchRequire, nodes } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- cores';
const WORKLOAD = path.join(BENCH, 'workloads', 'cores.mjs');
const TABLE_ROWS = 100_000;
const RUN_TIMEOUT_MS = 120_000;
const QUERIES = [
  { id: 'get', label: '`get()` by rowid', rows: 1 },
  { id: 'all', label: '`all()` of 100 rows', rows: 100 },
  { id: 'scan', label: 'a ~5 ms scan', rows: 1 },
];

const { values: opts } = parseArgs({
  options: {
    threads: { type: 'string' },
    ms: { type: 'string' },
    rounds: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.ms || opts.rounds);
const RUN_MS = Number(opts.ms ?? 2000);
const ROUNDS = Number(opts.rounds ?? 3);
const CORES = os.availableParallelism();
const THREADS = opts.threads ? opts.threads.split(',').map(Number) : CORES <= 4 ? [2] : [4, 8, CORES - 1];
const canPin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** Every configuration of one query: the unpinned side by side, then the pinned pair. */
function configurations(query) {
  const list = [{ peer: 'better-sqlite3', query, threads: 1, inFlight: 1 }];
  for (const n of THREADS) {
    list.push({ peer: 'b3-pool', query, threads: n, inFlight: 64 });
    for (const inFlight of [64, 256]) list.push({ peer: 'offloop', query, threads: n, inFlight });
    if (query.id === 'all') list.push({ peer: 'offloop', query, threads: n, inFlight: 64, arrays: true });
  }
  if (canPin && query.id !== 'scan') {
    list.push({ peer: 'better-sqlite3', query, threads: 1, inFlight: 1, pinned: true });
    list.push({ peer: 'offloop', query, threads: THREADS[0], inFlight: 64, pinned: true });
  }
  return list.map((c) => ({ ...c, key: key(c) }));
}

function key(c) {
  return [c.query.id, c.peer, c.threads, c.inFlight, c.arrays ? 'arrays' : 'objects', c.pinned ? 'pinned' : 'unpinned'].join('/');
}

function label(c) {
  const pinned = c.pinned ? ', pinned to one CPU' : '';
  if (c.peer === 'better-sqlite3') return `better-sqlite3 on the JS thread${pinned}`;
  if (c.peer === 'b3-pool') return `better-sqlite3, pool of ${c.threads} workers, 64 in flight`;
  return `offloop, ${c.threads} readers, ${c.inFlight} in flight${c.arrays ? ', rows as arrays' : ''}${pinned}`;
}

function buildSeed(file) {
  const Database = benchRequire('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE small(nul, integer INTEGER, real REAL, text TEXT, blob BLOB)');
  const insert = db.prepare('INSERT INTO small VALUES (NULL, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < TABLE_ROWS; i++) insert.run(i, i * 1.5, `text value ${i}`, Buffer.alloc(16, i & 0xff));
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function runOnce(c, file, offloop) {
  const { host } = nodes();
  const args = [WORKLOAD, '--peer', c.peer, '--file', file, '--query', c.query.id, '--threads', String(c.threads)];
  args.push('--in-flight', String(c.inFlight), '--ms', String(RUN_MS), '--offloop', offloop.dir);
  if (c.arrays) args.push('--arrays');
  const [bin, argv] = c.pinned ? ['taskset', ['-c', '0', host.bin, ...args]] : [host.bin, args];
  process.stderr.write(`  ${c.key} ... `);
  try {
    const { result } = await runChild(bin, argv, { timeoutMs: RUN_TIMEOUT_MS });
    process.stderr.write(`${Math.round((result.calls / result.wallMs) * 1000)} calls/s\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  }
}

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

function summarize(c, results) {
  const ok = results.filter((r) => !r.error);
  return {
    key: c.key,
    label: label(c),
    query: c.query.id,
    peer: c.peer,
    threads: c.threads,
    inFlight: c.inFlight,
    arrays: Boolean(c.arrays),
    pinned: Boolean(c.pinned),
    version: ok[0]?.version ?? null,
    node: ok[0]?.node ?? null,
    callsPerSecond: round(median(ok.map((r) => (r.calls / r.wallMs) * 1000)), 0),
    // better-sqlite3 runs the whole call on the JS thread: its JS CPU is
    // the call's whole CPU.
    jsCpuUsPerCall: round(median(ok.map((r) => (r.jsCpuMs * 1000) / r.calls)), 3),
    jsCpuNsPerRow: round(median(ok.map((r) => (r.jsCpuMs * 1e6) / r.rows)), 0),
    processCores: round(median(ok.map((r) => r.processCpuMs / r.wallMs)), 2),
    loopDelayP99Ms: c.peer === 'better-sqlite3' ? null : round(median(ok.map((r) => r.loopDelayP99Ms)), 2),
    rounds: ok.map((r) => round((r.calls / r.wallMs) * 1000, 0)),
    errors: results.filter((r) => r.error).map((r) => r.error),
  };
}

const fix = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');

function table(rows) {
  const columns = [
    { title: 'Query', align: 'left' },
    { title: 'Configuration', align: 'left' },
    { title: 'calls / s', align: 'right' },
    { title: 'against better-sqlite3', align: 'right' },
    { title: 'JS thread µs per call', align: 'right' },
    { title: 'JS thread ns per row', align: 'right' },
    { title: 'JS CPU against better-sqlite3\'s whole call', align: 'right' },
    { title: 'loop delay p99 (ms)', align: 'right' },
  ];
  const body = rows.map((r) => {
    const peer = rows.find((p) => p.query === r.query && p.peer === 'better-sqlite3' && p.pinned === r.pinned);
    const mine = r.peer !== 'better-sqlite3';
    return [
      r.query,
      r.label,
      fix(r.callsPerSecond, 0),
      mine ? `${fix(r.callsPerSecond / peer?.callsPerSecond)}×` : '1×',
      fix(r.jsCpuUsPerCall),
      fix(r.jsCpuNsPerRow, 0),
      mine ? `${fix(r.jsCpuUsPerCall / peer?.jsCpuUsPerCall)}×` : '1×',
      r.loopDelayP99Ms === null ? '(held)' : fix(r.loopDelayP99Ms),
    ];
  });
  return markdownTable(columns, body);
}

function markdown(report) {
  const { machine: m, offloop: o } = report;
  return [
    '## CORES — the many-cores side by side',
    '',
    `Command: \`${COMMAND}\` (${report.date}); the median of ${report.workload.rounds} rounds of ${report.workload.runMs} ms. The JSON has every round.`,
    `Machine: ${describeMachine(m)} (${CORES} CPUs); load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''}, ${report.configurations[0]?.node ?? '?'}.`,
    '',
    `${TABLE_ROWS.toLocaleString('en-US')} rows of (NULL, integer, real, text, blob). Reader and worker counts: ${THREADS.join(', ')}.`,
    'JS thread: its CPU time from `/proc/self/task/<pid>/schedstat` over the calls made; for better-sqlite3 that is the whole call.',
    'Pinned rows run the whole process on one CPU (`taskset -c 0`): nothing spins, so all of the JS thread\'s time is work.',
    'Loop delay: `monitorEventLoopDelay` p99 while the calls ran; better-sqlite3 holds the loop for the whole run.',
    '',
    table(report.configurations),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = report.configurations
    .filter((r) => !r.pinned && !r.arrays && r.inFlight !== 256)
    .map((r) => ({ query: r.query, series: r.peer, threads: r.threads, value: r.callsPerSecond }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `CORES: calls/s on ${CORES} CPUs`, subtitle: [`${COMMAND} (${report.date})`], anchor: 'start' },
    data: { values },
    facet: { column: { field: 'query', type: 'nominal', title: null } },
    spec: {
      width: 180,
      height: 160,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'threads', type: 'quantitative', title: 'readers / workers' },
        y: { field: 'value', type: 'quantitative', title: 'calls/s', scale: { zero: true } },
        color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}

// ---------------------------------------------------------------------------

const configs = QUERIES.flatMap(configurations);
console.error(`CORES: ${configs.length} configurations × ${ROUNDS} rounds on ${CORES} CPUs`);
const bench = await startBenchmark({ label: 'cores', maxLoad: Number(opts['max-load']), tmpName: 'cores' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'CORES — the many-cores side by side',
  command: COMMAND,
  ...bench.header,
  workload: { rows: TABLE_ROWS, threads: THREADS, runMs: RUN_MS, rounds: ROUNDS, cores: CORES },
  configurations: [],
};
try {
  const file = path.join(dir, 'cores.db');
  buildSeed(file);
  const results = new Map(configs.map((c) => [c.key, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = configs.map((_, i) => configs[(i + r) % configs.length]);
    for (const c of order) results.get(c.key).push(await runOnce(c, file, offloop));
  }
  report.configurations = configs.map((c) => summarize(c, results.get(c.key)));
} finally {
  bench.finish(report);
}

await publish('cores', report, markdown(report), chartSpec(report), partial);
