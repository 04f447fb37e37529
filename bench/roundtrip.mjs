// RT — the awaited round trip (BENCH.md). How long one awaited call takes
// when nothing else is in flight, next to its floor and its peers: the
// floor is offloop's echo thread (a Rust thread answering at once through
// offloop's own completion path, no SQLite); then offloop's get() of one
// row, run() of one insert and all() of 10 rows, node-sqlite3's prepared
// stmt.get() (libuv's thread pool), better-sqlite3's get() on the JS
// thread, and offloop's get() with 64 calls in flight. Context switches per
// call, counted over every thread of the process, say how many wake-ups a
// call cost; they are counts, not times, and hold up on a busy machine.
//
// Each configuration runs in a fresh child process (bench/workloads/
// roundtrip.mjs) on a fresh copy of the database, once pinned to one CPU
// (taskset -c 0: every thread shares it, which takes the cost of waking a
// thread on another CPU out) and once unpinned, once per round; rounds
// interleave the configurations and the tables show the median.
//
//   npm run bench -- roundtrip [--rounds N] [--ms N] [--max-load X]
//
// Writes bench/results/roundtrip.{json,md} and roundtrip.svg. The options
// other than --max-load make a quick partial run: it writes the same files
// with a .tmp suffix (ignored by git).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { runChild } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { describeMachine, runUndisturbed } from './lib/machine.mjs';
import { BENCH, benchRequire, nodes } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- roundtrip';
const WORKLOAD = path.join(BENCH, 'workloads', 'roundtrip.mjs');
const RUN_TIMEOUT_MS = 60_000;
const ROWS = 1000;
const IN_FLIGHT = 64;
// A run during which other processes used more than this share of the
// machine's CPU is run again, up to MAX_ATTEMPTS times in all.
const OTHER_LOAD_PERCENT = 10;
const MAX_ATTEMPTS = 2;

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string' },
    ms: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.rounds || opts.ms);
const ROUNDS = Number(opts.rounds ?? 5);
const RUN_MS = Number(opts.ms ?? 1500);

const TASKS = [
  { id: 'floor', peer: 'offloop', task: 'floor', label: 'floor: offloop echo thread (no SQLite)' },
  { id: 'offloop-get', peer: 'offloop', task: 'get', label: 'offloop get(), awaited' },
  { id: 'offloop-run', peer: 'offloop', task: 'run', label: 'offloop run() (insert), awaited' },
  { id: 'offloop-all', peer: 'offloop', task: 'all', label: 'offloop all() of 10 rows, awaited' },
  { id: 'sqlite3-get', peer: 'sqlite3', task: 'get', label: 'sqlite3 prepared stmt.get(), awaited' },
  { id: 'bs3-get', peer: 'better-sqlite3', task: 'get', label: 'better-sqlite3 get(), synchronous' },
  { id: 'offloop-get-64', peer: 'offloop', task: 'get-inflight', label: `offloop get(), ${IN_FLIGHT} in flight` },
];
const MODES = ['pinned', 'unpinned'];
const CONFIGS = MODES.flatMap((mode) => TASKS.map((t) => ({ ...t, mode, key: `${t.id}/${mode}` })));

function buildSeed(file) {
  const Database = benchRequire('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, name TEXT, score REAL)');
  db.exec('CREATE TABLE log(id INTEGER PRIMARY KEY, n INTEGER, note TEXT)');
  const insert = db.prepare('INSERT INTO t(n, name, score) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert.run(i * 7, `row number ${i}`, i / 3);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

function haveTaskset() {
  return !spawnSync('taskset', ['-c', '0', 'true']).error;
}

async function runConfig(config, seed, dir, offloop) {
  return runUndisturbed(() => runOnce(config, seed, dir, offloop), { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT });
}

async function runOnce(config, seed, dir, offloop) {
  const { host } = nodes();
  const file = path.join(dir, `run-${config.id}.db`);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  fs.copyFileSync(seed, file);
  const args = [WORKLOAD, '--peer', config.peer, '--task', config.task, '--file', file, '--ms', String(RUN_MS)];
  args.push('--in-flight', String(IN_FLIGHT), '--offloop', offloop.dir);
  const [bin, argv] = config.mode === 'pinned' ? ['taskset', ['-c', '0', host.bin, ...args]] : [host.bin, args];
  process.stderr.write(`  ${config.key} ... `);
  try {
    const { result } = await runChild(bin, argv, { timeoutMs: RUN_TIMEOUT_MS });
    const us = (result.wallMs * 1000) / result.calls;
    const cs = (result.switches.voluntary + result.switches.involuntary) / result.calls;
    process.stderr.write(`${us.toFixed(2)} µs per call, ${cs.toFixed(2)} context switches per call\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  }
}

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

function summarize(config, results) {
  // Every round counts, disturbed or not: keeping only the quiet ones
  // would compare a configuration that happened to get a quiet round with
  // one that did not.
  const ok = results.filter((r) => !r.error);
  const quiet = ok.filter((r) => r.otherLoadPercent !== null && r.otherLoadPercent <= OTHER_LOAD_PERCENT);
  const per = (f) => round(median(ok.map(f)), 3);
  return {
    config: config.key,
    task: config.id,
    mode: config.mode,
    label: config.label,
    peer: config.peer,
    node: ok[0]?.node ?? null,
    version: ok[0]?.version ?? null,
    usPerCall: per((r) => (r.wallMs * 1000) / r.calls),
    callsPerSecond: round(median(ok.map((r) => (r.calls / r.wallMs) * 1000)), 0),
    switchesPerCall: per((r) => (r.switches.voluntary + r.switches.involuntary) / r.calls),
    voluntarySwitchesPerCall: per((r) => r.switches.voluntary / r.calls),
    jsThreadCpuUsPerCall: per((r) => (r.jsThreadCpuMs * 1000) / r.calls),
    processCpuUsPerCall: per((r) => (r.processCpuMs * 1000) / r.calls),
    rounds: ok.map((r) => round((r.wallMs * 1000) / r.calls, 3)),
    otherLoadPercent: ok.map((r) => r.otherLoadPercent ?? null),
    quietRounds: quiet.length,
    errors: results.filter((r) => r.error).map((r) => r.error),
  };
}

/**
 * The goals of BENCH.md RT, judged on the times of `mode`'s runs. Pinned,
 * every thread shares one CPU, so a call's time is its process CPU plus
 * what other work ran on that CPU meanwhile: `byCpu` is the same ratio
 * from process CPU per call, the figure a quiet machine would give.
 */
function goals(rows, mode) {
  const row = (id) => rows.find((r) => r.task === id && r.mode === mode);
  const floor = row('floor');
  const get = row('offloop-get');
  const sqlite3 = row('sqlite3-get');
  const bs3 = row('bs3-get');
  const get64 = row('offloop-get-64');
  const out = [];
  const add = (text, value, byCpu, target, met, unit = '×') =>
    out.push({ mode, text, value: round(value, 2), byCpu: mode === 'pinned' ? round(byCpu, 2) : null, target, unit, met });
  const cpu = (r) => r.processCpuUsPerCall;
  if (floor && get) {
    const ratio = get.usPerCall / floor.usPerCall;
    add("offloop get() time over the floor's", ratio, cpu(get) / cpu(floor), '≤ 1.3', ratio <= 1.3);
  }
  if (sqlite3 && get) {
    const ratio = get.callsPerSecond / sqlite3.callsPerSecond;
    add("offloop get() rate over sqlite3 stmt.get()'s", ratio, cpu(sqlite3) / cpu(get), '≥ 1.5', ratio >= 1.5);
  }
  if (get) add('context switches per lone awaited get()', get.switchesPerCall, get.switchesPerCall, '≤ 3', get.switchesPerCall <= 3, '');
  if (bs3 && get64) {
    const ratio = get64.callsPerSecond / bs3.callsPerSecond;
    add(`offloop get(), ${IN_FLIGHT} in flight, rate over better-sqlite3's`, ratio, cpu(bs3) / cpu(get64), '≥ 1.0', ratio >= 1.0);
  }
  return out;
}

const fix = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');

function table(rows, mode) {
  const columns = [
    { title: `Call (${mode})`, align: 'left' },
    { title: 'µs / call', align: 'right' },
    { title: 'calls / s', align: 'right' },
    { title: 'context switches / call', align: 'right' },
    { title: 'JS-thread CPU µs / call', align: 'right' },
    { title: 'process CPU µs / call', align: 'right' },
  ];
  return markdownTable(
    columns,
    TASKS.map((t) => {
      const r = rows.find((x) => x.task === t.id && x.mode === mode);
      return [
        t.label,
        fix(r?.usPerCall),
        fix(r?.callsPerSecond, 0),
        fix(r?.switchesPerCall),
        fix(r?.jsThreadCpuUsPerCall),
        fix(r?.processCpuUsPerCall),
      ];
    }),
  );
}

function goalTable(list) {
  return markdownTable(
    [
      { title: 'Goal', align: 'left' },
      { title: 'CPUs', align: 'left' },
      { title: 'measured', align: 'right' },
      { title: 'from process CPU', align: 'right' },
      { title: 'target', align: 'right' },
      { title: 'met', align: 'left' },
    ],
    list.map((g) => [
      g.text,
      g.mode,
      `${fix(g.value)}${g.unit}`,
      g.byCpu === null ? '—' : `${fix(g.byCpu)}${g.unit}`,
      `${g.target}${g.unit}`,
      g.met ? 'yes' : '**no**',
    ]),
  );
}

function quietShare(rows) {
  const quiet = rows.reduce((n, r) => n + r.quietRounds, 0);
  const all = rows.reduce((n, r) => n + r.rounds.length, 0);
  return `${quiet} of the ${all}`;
}

function markdown(report) {
  const { machine: m, offloop: o, configurations: rows } = report;
  return [
    '## RT — the awaited round trip',
    '',
    `Command: \`${COMMAND}\` (${report.date}); the median of ${report.workload.rounds} rounds of ${report.workload.runMs} ms per configuration, every configuration`,
    'in a fresh child process, interleaved. "pinned": the child runs under `taskset -c 0`, all its threads on one CPU; "unpinned": as scheduled.',
    `A run during which other processes used over ${OTHER_LOAD_PERCENT}% of the machine's CPU was run again (up to ${MAX_ATTEMPTS} times), and the last attempt counts;`,
    `${quietShare(rows)} runs kept were undisturbed. The JSON has every round and the share of the CPU other processes used during it.`,
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}), ${rows[0]?.node ?? '?'}.`,
    '',
    `A table of ${ROWS.toLocaleString('en-US')} rows (4 columns), WAL, synchronous NORMAL. get: \`${report.workload.get}\`; all: \`${report.workload.all}\`;`,
    `run: \`${report.workload.run}\`. Context switches: voluntary and involuntary, of every thread of the process. CPU: the JS thread's`,
    '(`/proc/self/task/<pid>/schedstat`) and the whole process\'s (`process.cpuUsage()`). Switches and CPU are counts, steadier than times',
    'on a busy machine; pinned, with one CPU for every thread, a call\'s time is its process CPU plus whatever else ran on that CPU.',
    '',
    table(rows, 'pinned'),
    '',
    table(rows, 'unpinned'),
    '',
    goalTable(report.goals),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = [];
  for (const r of report.configurations) {
    if (r.task === 'offloop-get-64' || r.task === 'bs3-get') continue;
    const name = TASKS.find((t) => t.id === r.task).label.replace(', awaited', '');
    values.push({ call: name, mode: r.mode, metric: 'µs per awaited call', value: r.usPerCall });
    values.push({ call: name, mode: r.mode, metric: 'context switches per call', value: r.switchesPerCall });
  }
  const panel = (metric) => ({
    title: { text: metric, fontSize: 12 },
    transform: [{ filter: { field: 'metric', equal: metric } }],
    width: 260,
    height: { step: 12 },
    mark: 'bar',
    encoding: {
      y: { field: 'call', type: 'nominal', title: null, sort: null },
      yOffset: { field: 'mode' },
      x: { field: 'value', type: 'quantitative', title: null },
      color: { field: 'mode', type: 'nominal', title: null, legend: { orient: 'bottom' } },
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'RT: one awaited call, nothing else in flight',
      subtitle: [`${COMMAND} (${report.date}); pinned: every thread on one CPU`],
      anchor: 'start',
    },
    data: { values },
    hconcat: [panel('µs per awaited call'), panel('context switches per call')],
    config: { axis: { labelFontSize: 10, titleFontSize: 10 }, concat: { spacing: 8 } },
  };
}

// ---------------------------------------------------------------------------

if (!haveTaskset()) {
  console.error('roundtrip: taskset (util-linux) is needed for the pinned runs');
  process.exit(1);
}
console.error(`RT, the awaited round trip: ${CONFIGS.length} configurations × ${ROUNDS} rounds`);
const bench = await startBenchmark({ label: 'roundtrip', maxLoad: Number(opts['max-load']), tmpName: 'rt' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'RT — the awaited round trip',
  command: COMMAND,
  ...bench.header,
  workload: { rows: ROWS, get: 'SELECT * FROM t WHERE id = ?', all: 'SELECT * FROM t WHERE id > ? ORDER BY id LIMIT 10', run: 'INSERT INTO log(n, note) VALUES (?, ?)', inFlight: IN_FLIGHT, runMs: RUN_MS, rounds: ROUNDS },
  configurations: [],
  goals: [],
};
try {
  const seed = path.join(dir, 'seed.db');
  buildSeed(seed);
  const results = new Map(CONFIGS.map((c) => [c.key, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = CONFIGS.map((_, i) => CONFIGS[(i + r) % CONFIGS.length]);
    for (const config of order) results.get(config.key).push(await runConfig(config, seed, dir, offloop));
  }
  report.configurations = CONFIGS.map((c) => summarize(c, results.get(c.key)));
  report.goals = [...goals(report.configurations, 'pinned'), ...goals(report.configurations, 'unpinned')];
} finally {
  bench.finish(report);
}

await publish('roundtrip', report, markdown(report), chartSpec(report), partial);
