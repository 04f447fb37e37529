// RUNTIMES — offloop in Node, Bun and Deno (docs/install.md#bun-and-deno),
// each against that runtime's own synchronous SQLite: better-sqlite3 in
// Node, bun:sqlite in Bun, node:sqlite in Deno.
//
// - W2's get() of one row and all() of 100 rows (bench/workloads/w2.mjs,
//   the table of bench/classic.mjs): the peer in a tight loop, offloop
//   awaited one at a time and with 64 calls in flight. Each runs in a fresh
//   child of its runtime on a fresh copy of the table, once per round;
//   rounds interleave every runtime and peer, and the tables show the
//   median of the rounds.
// - W3 (bench/workloads/w3-server.mjs, as bench/server.mjs runs it): the
//   node:http server in the runtime on offloop and on its own SQLite,
//   /read + /write loaded by autocannon from a Node process, /health probed
//   at a light rate.
//
// Bun and Deno are the ones scripts/test-tools.mjs installs into
// .tools/runtimes/ (scripts/runtimes.mjs pins their versions); a runtime
// that is not installed is left out with a message. Deno runs with
// --allow-env and --allow-net besides the flags offloop needs: the
// workloads read their options' defaults from the environment, and W3
// listens on loopback.
//
//   npm run bench -- runtimes [--rounds N] [--ms N] [--duration S] [--only <runtime>] [--max-load X]
//
// Writes bench/results/runtimes.{json,md} and runtimes.svg. The options
// other than --max-load make a quick partial run: it writes the same files
// with a .tmp suffix (ignored by git).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { RUNTIMES, runtimeExecutable, runtimesSupported } from '../scripts/runtimes.mjs';
import { runChild, startServerChild, stopServer } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { describeMachine, runUndisturbed } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';
import { runW2Round } from './lib/w2-round.mjs';
import { W2_ROWS, W3_READ, buildW2Seed } from './lib/w2-seed.mjs';

const COMMAND = 'npm run bench -- runtimes';
const SERVER = path.join(BENCH, 'workloads', 'w3-server.mjs');
const LOAD = path.join(BENCH, 'workloads', 'w3-load.mjs');
const RUN_TIMEOUT_MS = 300_000;
// As bench/classic.mjs: a round during which other processes used more
// than this share of the machine's CPU is run again, up to MAX_ATTEMPTS.
const OTHER_LOAD_PERCENT = 10;
const MAX_ATTEMPTS = 3;
const IN_FLIGHT = 64;
const ROWS = W2_ROWS;
// W3 as bench/server.mjs runs it: warm-up, the /health probe's rate and
// connections, 32 connections of load at nice 5 (it yields to the server).
const WARMUP_S = 2;
const PROBE_RATE = 100;
const PROBE_CONNECTIONS = 4;
const CONNECTIONS = 32;
const LOAD_NICE = 5;
const READ = W3_READ;

// The goals of issue 42: in each runtime, offloop's ratios to that
// runtime's own SQLite as high as its ratios to better-sqlite3 in Node
// (`sameRatioFactor`: at least this share of Node's ratio, for the noise
// of a shared machine), and W3's /health p99 at least `healthP99Factor`
// times lower than on that runtime's own SQLite.
const GOAL = { sameRatioFactor: 0.9, healthP99Factor: 10 };

const W2_CELLS = [
  { task: 'get', mode: 'awaited', text: '`get()`, awaited one at a time' },
  { task: 'get', mode: 'inflight', text: `\`get()\`, ${IN_FLIGHT} in flight` },
  { task: 'all', mode: 'awaited', text: '`all()` of 100 rows, awaited one at a time' },
  { task: 'all', mode: 'inflight', text: `\`all()\` of 100 rows, ${IN_FLIGHT} in flight` },
];
const CELLS = {
  sync: ['get:sync', 'all:sync'],
  offloop: W2_CELLS.map((c) => `${c.task}:${c.mode}`),
};

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string' },
    ms: { type: 'string' },
    duration: { type: 'string' },
    only: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.rounds || opts.ms || opts.duration || opts.only);
const ROUNDS = Number(opts.rounds ?? 3);
const CELL_MS = Number(opts.ms ?? 1000);
const DURATION_S = Number(opts.duration ?? 10);

/** `[{ name, label, bin, args, peer }]`: Node, and Bun and Deno where installed. */
function runtimes() {
  const { host } = nodes();
  const list = [{ name: 'node', label: 'Node', bin: host.bin, args: [], peer: 'better-sqlite3' }];
  const peers = { bun: 'bun:sqlite', deno: 'node:sqlite' };
  const extra = { bun: [], deno: ['--allow-env', '--allow-net'] };
  for (const runtime of RUNTIMES) {
    const bin = runtimesSupported() ? runtimeExecutable(runtime) : null;
    const label = runtime.name === 'bun' ? 'Bun' : 'Deno';
    if (bin === null) {
      console.error(`${label} ${runtime.version} is not installed (node scripts/test-tools.mjs): left out`);
      continue;
    }
    list.push({ name: runtime.name, label, bin, args: [...runtime.args, ...extra[runtime.name]], peer: peers[runtime.name] });
  }
  return opts.only ? list.filter((r) => r.name === opts.only) : list;
}

/** Each runtime twice: its own SQLite, and offloop. */
function configurations(list) {
  return list.flatMap((runtime) => [
    { id: `${runtime.peer.replace(':', '-')}-${runtime.name}`, runtime, peer: runtime.peer, kind: 'sync' },
    { id: `offloop-${runtime.name}`, runtime, peer: 'offloop', kind: 'offloop' },
  ]);
}

// ---------------------------------------------------------------------------
// W2

function w2Once(config, seed, dir, round) {
  const { bin, args: binArgs } = config.runtime;
  const cells = CELLS[config.kind];
  return runW2Round({ config, bin, binArgs, seed, dir, round, label: 'W2 ', cells, cellMs: CELL_MS, inFlight: IN_FLIGHT, offloopDir: offloop.dir, timeoutMs: RUN_TIMEOUT_MS });
}

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

/** The median over the undisturbed rounds (all rounds where none was) of each cell's ops/s. */
function summarizeW2(config, results) {
  const all = results.filter((r) => !r.error);
  const quiet = all.filter((r) => r.otherLoadPercent === null || r.otherLoadPercent <= OTHER_LOAD_PERCENT);
  const ok = quiet.length > 0 ? quiet : all;
  const cells = {};
  for (const spec of CELLS[config.kind]) {
    const [task, mode] = spec.split(':');
    const samples = ok.map((r) => r.cells.find((c) => c.task === task && c.mode === mode)).filter(Boolean);
    cells[spec] = {
      task,
      mode,
      opsPerSecond: round(median(samples.map((c) => (c.ops / c.wallMs) * 1000)), 1),
      jsCpuUsPerOp: round(median(samples.filter((c) => c.jsThreadCpuMs !== null).map((c) => (c.jsThreadCpuMs / c.ops) * 1000)), 2),
      rounds: all
        .map((r) => r.cells.find((c) => c.task === task && c.mode === mode))
        .filter(Boolean)
        .map((c) => round((c.ops / c.wallMs) * 1000, 1)),
    };
  }
  const first = ok[0];
  return {
    config: config.id,
    runtime: config.runtime.name,
    runtimeVersion: first?.runtime?.version ?? null,
    peer: config.peer,
    version: first?.version ?? null,
    sqliteVersion: first?.sqliteVersion ?? null,
    settings: first?.settings ?? null,
    errors: results.filter((r) => r.error).map((r) => r.error),
    otherLoadPercent: all.map((r) => r.otherLoadPercent ?? null),
    roundsUsed: ok.length,
    cells,
  };
}

// ---------------------------------------------------------------------------
// W3

function load(base, paths, { connections, duration, rate = 0 }) {
  const { host } = nodes();
  const args = [LOAD, '--url', base, '--paths', paths, '--connections', String(connections), '--duration', String(duration), '--rate', String(rate)];
  const [bin, argv] = rate > 0 ? [host.bin, args] : ['nice', ['-n', String(LOAD_NICE), host.bin, ...args]];
  return runChild(bin, argv, { timeoutMs: (duration + 60) * 1000 }).then((r) => r.result);
}

async function getJson(url) {
  const res = await fetch(url);
  return res.json();
}

async function w3Once(config, seed, dir) {
  const file = path.join(dir, `${config.id}-w3.db`);
  fs.copyFileSync(seed, file);
  process.stderr.write(`  W3: ${config.id} ... `);
  let server;
  try {
    const args = [...config.runtime.args, SERVER, '--peer', config.peer, '--file', file];
    if (config.peer === 'offloop') args.push('--offloop', offloop.dir);
    server = await startServerChild(config.runtime.bin, args);
    const base = `http://127.0.0.1:${server.port}`;
    await load(base, '/read,/write', { connections: CONNECTIONS, duration: WARMUP_S });
    await getJson(`${base}/stats?reset`);
    const [mixed, health] = await Promise.all([
      load(base, '/read,/write', { connections: CONNECTIONS, duration: DURATION_S }),
      load(base, '/health', { connections: PROBE_CONNECTIONS, duration: DURATION_S, rate: PROBE_RATE }),
    ]);
    const stats = await getJson(`${base}/stats`);
    const run = {
      config: config.id,
      runtime: config.runtime.name,
      peer: config.peer,
      version: stats.version,
      readWritePerSecond: round(((stats.counts.read + stats.counts.write) / stats.wallMs) * 1000, 1),
      healthMs: health.latencyMs,
      loadP99Ms: mixed.latencyMs.p99,
      errors: mixed.errors + mixed.non2xx + mixed.timeouts + health.errors + health.non2xx,
      processCores: round(stats.processCpuMs / stats.wallMs, 2),
      jsThreadCores: stats.jsThreadCpuMs === null ? null : round(stats.jsThreadCpuMs / stats.wallMs, 2),
      autocannon: mixed.version,
      loadAverage: round(os.loadavg()[0]),
    };
    process.stderr.write(`${Math.round(run.readWritePerSecond)} read+write/s, /health p99 ${run.healthMs.p99} ms, errors ${run.errors}\n`);
    return run;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { config: config.id, runtime: config.runtime.name, peer: config.peer, error: err.message };
  } finally {
    if (server) await stopServer(server.child);
    for (const f of fs.readdirSync(dir)) if (f.startsWith(`${config.id}-w3.db`)) fs.rmSync(path.join(dir, f));
  }
}

// ---------------------------------------------------------------------------
// Reporting

const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const fix = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const ratioOf = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const MODE_LABEL = { sync: 'synchronous', awaited: 'awaited one at a time', inflight: `${IN_FLIGHT} in flight` };

/** offloop's ops/s over its runtime's own SQLite's, per W2 cell, for every runtime measured. */
function w2Ratios(report) {
  const out = {};
  for (const lib of report.w2.filter((l) => l.peer === 'offloop')) {
    const peer = report.w2.find((l) => l.runtime === lib.runtime && l.peer !== 'offloop');
    if (!peer) continue;
    out[lib.runtime] = {};
    for (const c of W2_CELLS) {
      out[lib.runtime][`${c.task}:${c.mode}`] = ratioOf(lib.cells[`${c.task}:${c.mode}`]?.opsPerSecond, peer.cells[`${c.task}:sync`]?.opsPerSecond);
    }
  }
  return out;
}

function runtimeLabel(report, name) {
  const r = report.runtimes.find((x) => x.name === name);
  return r ? `${r.label} ${r.version}` : name;
}

function w2Table(report) {
  const columns = [
    { title: 'Runtime, library, mode', align: 'left' },
    { title: 'get one row', align: 'right' },
    { title: 'all() 100 rows', align: 'right' },
  ];
  const rows = [];
  for (const lib of report.w2) {
    const modes = [...new Set(Object.values(lib.cells).map((c) => c.mode))];
    for (const mode of modes) {
      rows.push([`${runtimeLabel(report, lib.runtime)}: ${lib.peer}, ${MODE_LABEL[mode]}`, int(lib.cells[`get:${mode}`]?.opsPerSecond), int(lib.cells[`all:${mode}`]?.opsPerSecond)]);
    }
  }
  return markdownTable(columns, rows);
}

function ratioTable(report) {
  const ratios = w2Ratios(report);
  const columns = [{ title: 'Runtime', align: 'left' }, { title: 'against', align: 'left' }, ...W2_CELLS.map((c) => ({ title: c.text, align: 'right' }))];
  const rows = Object.entries(ratios).map(([name, r]) => [
    runtimeLabel(report, name),
    report.runtimes.find((x) => x.name === name).peer,
    ...W2_CELLS.map((c) => `${fix(r[`${c.task}:${c.mode}`])}×`),
  ]);
  return markdownTable(columns, rows);
}

function w3Table(report) {
  const columns = [
    { title: 'Runtime, library', align: 'left' },
    { title: '/read + /write per s', align: 'right' },
    { title: '/health p50 ms', align: 'right' },
    { title: '/health p99 ms', align: 'right' },
    { title: '/health max ms', align: 'right' },
    { title: 'load p99 ms', align: 'right' },
    { title: 'errors', align: 'right' },
    { title: 'server CPU (cores)', align: 'right' },
    { title: 'JS thread CPU (cores)', align: 'right' },
  ];
  const rows = report.w3.map((r) => {
    const label = `${runtimeLabel(report, r.runtime)}: ${r.peer}`;
    if (r.error) return [label, `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', ''];
    return [label, int(r.readWritePerSecond), fix(r.healthMs.p50), fix(r.healthMs.p99), fix(r.healthMs.max, 1), fix(r.loadP99Ms, 1), String(r.errors), fix(r.processCores), fix(r.jsThreadCores)];
  });
  return markdownTable(columns, rows);
}

/** Each goal with its figure: `[{ runtime, text, value, met }]`. */
function goalResults(report) {
  const out = [];
  const ratios = w2Ratios(report);
  const node = ratios.node;
  for (const [name, r] of Object.entries(ratios)) {
    if (name === 'node' || !node) continue;
    for (const c of W2_CELLS) {
      const key = `${c.task}:${c.mode}`;
      const share = r[key] / node[key];
      out.push({ runtime: name, goal: 'w2', cell: key, text: c.text, ratio: r[key], nodeRatio: node[key], met: share >= GOAL.sameRatioFactor });
    }
  }
  for (const name of report.runtimes.map((x) => x.name)) {
    const mine = report.w3.find((x) => x.runtime === name && x.peer === 'offloop' && !x.error);
    const peer = report.w3.find((x) => x.runtime === name && x.peer !== 'offloop' && !x.error);
    if (!mine || !peer) continue;
    const factor = peer.healthMs.p99 / mine.healthMs.p99;
    out.push({ runtime: name, goal: 'w3', factor, throughput: mine.readWritePerSecond / peer.readWritePerSecond, met: factor >= GOAL.healthP99Factor });
  }
  return out;
}

function goalLines(report) {
  return goalResults(report)
    .map((g) => {
      const who = runtimeLabel(report, g.runtime);
      if (g.goal === 'w2') {
        return `- ${who}, ${g.text}: ${fix(g.ratio)}× its own SQLite, against ${fix(g.nodeRatio)}× in Node (goal ≥ ${GOAL.sameRatioFactor} of Node's: ${g.met ? 'met' : '**not met**'})`;
      }
      return `- ${who}, W3: /health p99 ${fix(g.factor, 1)}× lower than on its own SQLite (goal ≥ ${GOAL.healthP99Factor}×: ${g.met ? 'met' : '**not met**'}); /read + /write throughput ${fix(g.throughput)}×`;
    })
    .join('\n');
}

function versionsLine(report) {
  const libs = report.w2.filter((l) => l.version);
  return libs.map((l) => `${l.peer} ${l.version} in ${runtimeLabel(report, l.runtime)} (SQLite ${l.sqliteVersion})`).join(', ');
}

function markdown(report) {
  const { machine: m, offloop: o } = report;
  return [
    '## RUNTIMES — offloop in Node, Bun and Deno',
    '',
    `Command: \`${COMMAND}\` (${report.date}); W2: ${report.workload.rounds} rounds of ${report.workload.cellMs} ms per cell, the median of the rounds`,
    `no other work disturbed (over ${OTHER_LOAD_PERCENT}% of the machine's CPU; such a round was run again, up to ${MAX_ATTEMPTS} times). W3: ${report.workload.durationS} s per server.`,
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `Runtimes: ${report.runtimes.map((r) => `${r.label} ${r.version}`).join(', ')}. Libraries: ${versionsLine(report)}.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}, copied before the first run).`,
    '',
    `W2's table (${ROWS.toLocaleString('en-US')} rows, cache_size -16000, WAL, synchronous NORMAL; see W2 in docs/performance.md): each runtime's own`,
    `SQLite in a tight loop, offloop awaited one at a time or with ${IN_FLIGHT} calls in flight. W3: a \`node:http\` server in the runtime,`,
    `\`/read\` (${fix(report.workload.readQueryMs)} ms of SQLite in better-sqlite3 here) and \`/write\` loaded by autocannon under Node on ${CONNECTIONS} connections at nice`,
    `${LOAD_NICE}, \`/health\` probed at ${PROBE_RATE} requests/s; the same as \`npm run bench -- server\`.`,
    '',
    '### W2: operations per second',
    '',
    w2Table(report),
    '',
    '### W2: offloop against the runtime\'s own SQLite (ops/s ratio)',
    '',
    ratioTable(report),
    '',
    '### W3: a server',
    '',
    w3Table(report),
    '',
    '### Against the goals',
    '',
    goalLines(report),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = [];
  for (const [name, r] of Object.entries(w2Ratios(report))) {
    for (const c of W2_CELLS) {
      const v = r[`${c.task}:${c.mode}`];
      if (Number.isFinite(v)) values.push({ series: runtimeLabel(report, name), workload: c.text.replace(/`/g, ''), ratio: round(v, 3) });
    }
  }
  const series = [...new Set(values.map((v) => v.series))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: "RUNTIMES: offloop's ops/s against each runtime's own SQLite",
      subtitle: ['better-sqlite3 in Node, bun:sqlite in Bun, node:sqlite in Deno = 1; dashed: 1', `${COMMAND} (${report.date}), ${report.machine.cores} cores`],
      anchor: 'start',
    },
    data: { values },
    facet: { row: { field: 'workload', type: 'nominal', sort: W2_CELLS.map((c) => c.text.replace(/`/g, '')), header: { title: null, labelAngle: 0, labelAlign: 'left', labelAnchor: 'start' } } },
    spacing: 8,
    spec: {
      width: 360,
      height: { step: 14 },
      layer: [
        {
          mark: { type: 'bar', height: 10 },
          encoding: {
            y: { field: 'series', type: 'nominal', sort: series, axis: null },
            x: { field: 'ratio', type: 'quantitative', title: "× the runtime's own SQLite (ops/s)" },
            color: { field: 'series', type: 'nominal', sort: series, legend: { title: null, orient: 'right' } },
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 3, fontSize: 9 },
          encoding: {
            y: { field: 'series', type: 'nominal', sort: series },
            x: { field: 'ratio', type: 'quantitative' },
            text: { field: 'ratio', type: 'quantitative', format: '.2f' },
          },
        },
        { mark: { type: 'rule', strokeDash: [4, 3], color: '#888' }, encoding: { x: { datum: 1 } } },
      ],
    },
    resolve: { scale: { x: 'shared' } },
    config: { view: { stroke: null }, axis: { labelFontSize: 10, titleFontSize: 10 } },
  };
}

// ---------------------------------------------------------------------------

const list = runtimes();
const configs = configurations(list);
console.error(`RUNTIMES: ${list.map((r) => r.label).join(', ')}; W2 ${configs.length} configurations × ${ROUNDS} rounds, W3 ${configs.length} servers × ${DURATION_S} s`);
const bench = await startBenchmark({ label: 'runtimes', maxLoad: Number(opts['max-load']), tmpName: 'runtimes' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'RUNTIMES — offloop in Node, Bun and Deno',
  command: COMMAND,
  ...bench.header,
  runtimes: [],
  workload: { rows: ROWS, inFlight: IN_FLIGHT, cellMs: CELL_MS, rounds: ROUNDS, cells: CELLS, durationS: DURATION_S, connections: CONNECTIONS, probeRate: PROBE_RATE, readQueryMs: null },
  goal: GOAL,
  w2: [],
  w3: [],
};
try {
  const seed = path.join(dir, 'seed.db');
  report.workload.readQueryMs = round(buildW2Seed(seed, { timeRead: true }), 3);
  const results = new Map(configs.map((c) => [c.id, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round: no configuration always runs first or last.
    const order = configs.map((_, i) => configs[(i + round) % configs.length]);
    for (const config of order) {
      results.get(config.id).push(await runUndisturbed(() => w2Once(config, seed, dir, round), { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT }));
    }
  }
  report.w2 = configs.map((c) => summarizeW2(c, results.get(c.id)));
  for (const config of configs) report.w3.push(await w3Once(config, seed, dir));
  report.runtimes = list.map((r) => ({
    name: r.name,
    label: r.label,
    version: report.w2.find((l) => l.runtime === r.name && l.runtimeVersion)?.runtimeVersion ?? null,
    peer: r.peer,
    args: r.args,
  }));
  report.ratios = w2Ratios(report);
  report.goalResults = goalResults(report);
} finally {
  bench.finish(report);
}

await publish('runtimes', report, markdown(report), chartSpec(report), partial);
