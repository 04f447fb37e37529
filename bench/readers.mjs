// W4 — reader scaling (docs/performance.md). A CPU-heavy read (a LIKE over
// every row of a 100,000-row table, about 10 ms of SQLite CPU) through
// offloop with 1, 2 and 4 reader threads, 8 calls in flight, next to
// better-sqlite3 running the same query on the JS thread. Each configuration
// runs in a fresh child process (bench/workloads/w4.mjs) once per round;
// rounds interleave the configurations and the tables show the median.
//
//   npm run bench -- readers [--rounds N] [--ms N] [--max-load X]
//
// Writes bench/results/readers.{json,md} and readers.svg. The options
// other than --max-load make a quick partial run: it writes the same files
// with a .tmp suffix (ignored by git).

import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { startBenchmark } from './lib/harness.mjs';
import { runChild } from './lib/child.mjs';
import { describeMachine, runUndisturbed } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- readers';
const WORKLOAD = path.join(BENCH, 'workloads', 'w4.mjs');
const ROWS = 100_000;
const READER_COUNTS = [1, 2, 4];
const IN_FLIGHT = 8;
const RUN_TIMEOUT_MS = 120_000;
// A run during which other processes used more than this share of the
// machine's CPU is run again, up to MAX_ATTEMPTS times in all: scaling
// needs both cores.
const OTHER_LOAD_PERCENT = 10;
const MAX_ATTEMPTS = 3;

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string' },
    ms: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.rounds || opts.ms);
const ROUNDS = Number(opts.rounds ?? 3);
const RUN_MS = Number(opts.ms ?? 3000);

const CONFIGS = [
  { id: 'better-sqlite3', peer: 'better-sqlite3', readers: null, label: 'better-sqlite3 (the JS thread)' },
  ...READER_COUNTS.map((n) => ({ id: `offloop-${n}`, peer: 'offloop', readers: n, label: `offloop, ${n} reader${n > 1 ? 's' : ''}` })),
];

function buildSeed(file) {
  const Database = createRequire(path.join(BENCH, 'package.json'))('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(nul, integer INTEGER, real REAL, text TEXT, blob BLOB)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      insert.run(null, (i * 1000003) % 2147483647, i * 0.3333, `The quick brown fox jumps over the lazy dog ${i}`, Buffer.alloc(16, i & 0xff));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** `runOnce`, again while other work on the machine disturbed it. */
async function runConfig(config, file, offloop) {
  return runUndisturbed(() => runOnce(config, file, offloop), { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT });
}

async function runOnce(config, file, offloop) {
  const { host } = nodes();
  const args = [WORKLOAD, '--peer', config.peer, '--file', file, '--ms', String(RUN_MS), '--in-flight', String(IN_FLIGHT)];
  if (config.peer === 'offloop') args.push('--readers', String(config.readers), '--offloop', offloop.dir);
  process.stderr.write(`  ${config.id} ... `);
  try {
    const { result } = await runChild(host.bin, args, { timeoutMs: RUN_TIMEOUT_MS });
    const qps = (result.queries / result.wallMs) * 1000;
    process.stderr.write(`${qps.toFixed(1)} queries/s, ${(result.processCpuMs / result.wallMs).toFixed(2)} cores\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  }
}

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

/** CPU by role: the JS thread, the reader threads, everything else. */
function roleCores(r) {
  let js = 0;
  let readers = 0;
  let other = 0;
  for (const [name, ms] of Object.entries(r.threadCpuMs)) {
    if (name === 'js') js += ms;
    else if (name.startsWith('offloop-reader')) readers += ms;
    else other += ms;
  }
  return { js: js / r.wallMs, readers: readers / r.wallMs, other: other / r.wallMs };
}

function summarize(config, results) {
  const all = results.filter((r) => !r.error);
  // The runs no other work disturbed, when there are any.
  const quiet = all.filter((r) => r.otherLoadPercent === null || r.otherLoadPercent <= OTHER_LOAD_PERCENT);
  const ok = quiet.length > 0 ? quiet : all;
  const cores = ok.map(roleCores);
  return {
    config: config.id,
    label: config.label,
    peer: config.peer,
    readers: config.readers,
    node: ok[0]?.node ?? null,
    version: ok[0]?.version ?? null,
    queriesPerSecond: round(median(ok.map((r) => (r.queries / r.wallMs) * 1000)), 2),
    msPerQuery: round(median(ok.map((r) => r.processCpuMs / r.queries)), 3),
    processCores: round(median(ok.map((r) => r.processCpuMs / r.wallMs)), 2),
    jsThreadCores: round(median(cores.map((c) => c.js)), 3),
    readerCores: round(median(cores.map((c) => c.readers)), 2),
    rounds: all.map((r) => round((r.queries / r.wallMs) * 1000, 2)),
    otherLoadPercent: all.map((r) => r.otherLoadPercent ?? null),
    roundsUsed: ok.length,
    errors: results.filter((r) => r.error).map((r) => r.error),
  };
}

const fix = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');

function table(rows) {
  const one = rows.find((r) => r.readers === 1)?.queriesPerSecond;
  const bs3 = rows.find((r) => r.peer === 'better-sqlite3')?.queriesPerSecond;
  const columns = [
    { title: 'Configuration', align: 'left' },
    { title: 'queries / s', align: 'right' },
    { title: 'against 1 reader', align: 'right' },
    { title: 'against better-sqlite3', align: 'right' },
    { title: 'cores used (process)', align: 'right' },
    { title: 'reader threads (cores)', align: 'right' },
    { title: 'JS thread (cores)', align: 'right' },
    { title: 'CPU ms per query', align: 'right' },
  ];
  return markdownTable(
    columns,
    rows.map((r) => [
      r.label,
      fix(r.queriesPerSecond, 1),
      r.peer === 'offloop' ? `${fix(r.queriesPerSecond / one)}×` : '—',
      `${fix(r.queriesPerSecond / bs3)}×`,
      fix(r.processCores),
      r.peer === 'offloop' ? fix(r.readerCores) : '—',
      fix(r.jsThreadCores, 3),
      fix(r.msPerQuery),
    ]),
  );
}

function markdown(report) {
  const { machine: m, offloop: o, configurations: rows } = report;
  return [
    '## W4 — reader scaling',
    '',
    `Command: \`${COMMAND}\` (${report.date}); the median of ${report.workload.rounds} rounds of ${report.workload.runMs} ms. A run during which other`,
    `processes used over ${OTHER_LOAD_PERCENT}% of the machine's CPU was run again (up to ${MAX_ATTEMPTS} times); the table shows the median of the`,
    'undisturbed runs (of all runs where none was). The JSON has every round.',
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}, copied before the first run), ${rows[0]?.node ?? '?'}.`,
    '',
    `\`${report.workload.query}\` over ${ROWS.toLocaleString('en-US')} rows (the W2 shape; cache_size -16000 on every connection), about 10 ms of SQLite CPU, with ${IN_FLIGHT} calls`,
    'in flight for offloop. Cores used: the process\'s CPU time over the wall time, and per thread from',
    '`/proc/self/task/*/schedstat`. This machine has 2 cores: past 2 readers, threads take turns.',
    '',
    table(rows),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = [];
  const bs3 = report.configurations.find((r) => r.peer === 'better-sqlite3');
  for (const r of report.configurations.filter((x) => x.peer === 'offloop')) {
    values.push({ readers: r.readers, metric: 'queries per second', value: r.queriesPerSecond, series: 'offloop' });
    values.push({ readers: r.readers, metric: 'cores used', value: r.processCores, series: 'offloop' });
  }
  for (const n of READER_COUNTS) {
    if (!bs3) break;
    values.push({ readers: n, metric: 'queries per second', value: bs3.queriesPerSecond, series: 'better-sqlite3' });
    values.push({ readers: n, metric: 'cores used', value: bs3.processCores, series: 'better-sqlite3' });
  }
  const panel = (metric) => ({
    title: { text: metric, fontSize: 12 },
    transform: [{ filter: { field: 'metric', equal: metric } }],
    width: 240,
    height: 180,
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'readers', type: 'quantitative', title: 'reader threads', scale: { domain: [1, 4] }, axis: { values: READER_COUNTS } },
      y: { field: 'value', type: 'quantitative', title: null, scale: { zero: true } },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'W4: a 10 ms read query with 1, 2 and 4 readers (2-core machine)',
      subtitle: [`${COMMAND} (${report.date}); better-sqlite3 runs it on the JS thread`],
      anchor: 'start',
    },
    data: { values },
    hconcat: [panel('queries per second'), panel('cores used')],
    config: { axis: { labelFontSize: 10, titleFontSize: 10 } },
  };
}

// ---------------------------------------------------------------------------

console.error(`W4, reader scaling: ${CONFIGS.length} configurations × ${ROUNDS} rounds`);
const bench = await startBenchmark({ label: 'readers', maxLoad: Number(opts['max-load']), tmpName: 'w4' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'W4 — reader scaling',
  command: COMMAND,
  ...bench.header,
  workload: { rows: ROWS, query: 'SELECT count(*) AS n, sum(length(text)) AS bytes FROM t WHERE text LIKE ?', inFlight: IN_FLIGHT, runMs: RUN_MS, rounds: ROUNDS },
  configurations: [],
};
try {
  const file = path.join(dir, 'w4.db');
  buildSeed(file);
  const results = new Map(CONFIGS.map((c) => [c.id, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = CONFIGS.map((_, i) => CONFIGS[(i + round) % CONFIGS.length]);
    for (const config of order) results.get(config.id).push(await runConfig(config, file, offloop));
  }
  report.configurations = CONFIGS.map((c) => summarize(c, results.get(c.id)));
} finally {
  bench.finish(report);
}

await publish('readers', report, markdown(report), chartSpec(report), partial);
