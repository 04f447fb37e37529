// SQLITE3 — the drop-in (docs/performance.md). Four measurements, each peer
// beside the others in one run on the same machine:
//
// 1. W3 (bench/workloads/w3-server.mjs) through Knex and through Sequelize,
//    on the sqlite3 package and on offloop/sqlite3: /read + /write per
//    second under 32 connections, and the /health p99 of a light probe.
// 2. The libuv-pool starvation (bench/workloads/sqlite3-starvation.mjs):
//    fs.readFile p99 with four slow queries in flight, on sqlite3, on
//    offloop/sqlite3 and with no queries.
// 3. Open, one get, close (bench/workloads/sqlite3-open.mjs), one database
//    at a time, on sqlite3 and on offloop/sqlite3: each phase's median and
//    p99.
// 4. node-sqlite3's fixture (bench/workloads/sqlite3-fixture.mjs): N
//    stmt.run() calls queued in one serialize() loop, then COMMIT: the
//    time to the close and the peak RSS, on sqlite3 and on offloop/sqlite3.
//
// The peers take turns, round after round (--rounds, 3 by default), so that
// what else runs on the machine falls on each of them alike; the tables
// give each figure's median over the rounds, and every round's own.
//
//   npm run bench -- sqlite3 [--duration S] [--connections N] [--only <text>] [--rounds N] [--max-load X] [--fixture-calls N]
//
// `--only open` runs the open, get and close measurement alone.
//
// Writes bench/results/sqlite3.{json,md,svg}; --duration, --connections,
// --only, --fixture-calls and a --rounds below 3 make a quick partial run
// (.tmp files, ignored by git).

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { labelledBars } from './lib/chart.mjs';
import { runChild, startServerChild, stopServer } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { describeMachine } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- sqlite3';
const SERVER = path.join(BENCH, 'workloads', 'w3-server.mjs');
const LOAD = path.join(BENCH, 'workloads', 'w3-load.mjs');
const STARVATION = path.join(BENCH, 'workloads', 'sqlite3-starvation.mjs');
const OPEN = path.join(BENCH, 'workloads', 'sqlite3-open.mjs');
// Opens measured per peer and round (after the workload's own warm-up).
const OPEN_COUNT = 1000;
const FIXTURE = path.join(BENCH, 'workloads', 'sqlite3-fixture.mjs');
const ROWS = 10_000;
const WARMUP_S = 2;
// As bench/server.mjs: a light /health probe, and the load at nice 5 so
// that it yields to the server and the probe on 2 cores.
const PROBE_RATE = 100;
const PROBE_CONNECTIONS = 4;
const LOAD_NICE = 5;
const GOAL = {
  healthP99Factor: 5,
  throughputFactor: 1.0,
  fileReadP99FactorOfNone: 2,
  openP50FactorOfSqlite3: 2,
  fixtureTimeFactor: 1.2,
  fixturePeakRssFactor: 1.0,
};

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    'max-load': { type: 'string', default: '1.0' },
    // node-sqlite3's own fixture queues 1,000,000; this size finishes in
    // well under a minute per peer on a shared 2-core machine.
    'fixture-calls': { type: 'string' },
  },
});
const FIXTURE_CALLS = Number(opts['fixture-calls'] ?? 200_000);
const ROUNDS = Number(opts.rounds);
const partial = Boolean(opts.duration || opts.connections || opts.only || opts['fixture-calls'] || ROUNDS < 3);
const DURATION_S = Number(opts.duration ?? 10);
const CONNECTIONS = Number(opts.connections ?? 32);
// Each ORM on sqlite3, on offloop/sqlite3, and on offloop/sqlite3 with its
// SQLite threads at nice 10 (`threadNice`), so that the event loop gets a
// core first.
const PEERS = [
  ['knex+sqlite3', 0],
  ['knex+offloop', 0],
  ['knex+offloop', 10],
  ['sequelize+sqlite3', 0],
  ['sequelize+offloop', 0],
  ['sequelize+offloop', 10],
].filter(([p]) => !opts.only || p.includes(opts.only));
const OPEN_ONLY = opts.only === 'open';
const OPENED = ['sqlite3', 'offloop'];
// offloop twice: with its defaults, and with its SQLite threads at nice 10.
const STARVED = [
  ['none', 0],
  ['sqlite3', 0],
  ['offloop', 0],
  ['offloop', 10],
];

const FIXTURE_PEERS = ['sqlite3', 'offloop'];

/** The W3 tables (bench/server.mjs's seed): t with 10,000 rows, w empty. */
function buildSeed(file) {
  const Database = createRequire(path.join(BENCH, 'package.json'))('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(nul, integer INTEGER, real REAL, text TEXT, blob BLOB); CREATE TABLE w(nul, integer INTEGER, real REAL, text TEXT, blob BLOB)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      insert.run(null, (i * 1000003) % 2147483647, i * 0.3333, `The quick brown fox jumps over the lazy dog ${i}`, Buffer.alloc(16, i & 0xff));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** A file in WAL mode with one row to read, as an application's database is when a second connection opens it. */
function buildOpenSeed(file) {
  const Database = createRequire(path.join(BENCH, 'package.json'))('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one')");
  db.close();
}

function startServer(peer, threadNice, file, offloopDir) {
  const args = [SERVER, '--peer', peer, '--file', file, '--offloop', offloopDir, '--thread-nice', String(threadNice)];
  return startServerChild(nodes().host.bin, args);
}

function load(base, paths, { connections, duration, rate = 0 }) {
  const { host } = nodes();
  const args = [LOAD, '--url', base, '--paths', paths, '--connections', String(connections), '--duration', String(duration), '--rate', String(rate)];
  const [bin, argv] = rate > 0 ? [host.bin, args] : ['nice', ['-n', String(LOAD_NICE), host.bin, ...args]];
  return runChild(bin, argv, { timeoutMs: (duration + 60) * 1000 }).then((r) => r.result);
}

async function runServer([peer, threadNice], seed, dir, offloopDir) {
  const file = path.join(dir, `${peer.replace('+', '-')}-${threadNice}.db`);
  fs.copyFileSync(seed, file);
  process.stderr.write(`  W3 ${peer}${threadNice ? ` threadNice ${threadNice}` : ''} ... `);
  let server;
  try {
    server = await startServer(peer, threadNice, file, offloopDir);
    const base = `http://127.0.0.1:${server.port}`;
    await load(base, '/read,/write', { connections: CONNECTIONS, duration: WARMUP_S });
    await (await fetch(`${base}/stats?reset`)).json();
    const [mixed, health] = await Promise.all([
      load(base, '/read,/write', { connections: CONNECTIONS, duration: DURATION_S }),
      load(base, '/health', { connections: PROBE_CONNECTIONS, duration: DURATION_S, rate: PROBE_RATE }),
    ]);
    const stats = await (await fetch(`${base}/stats`)).json();
    const run = {
      peer,
      threadNice,
      version: stats.version,
      node: stats.node,
      readWritePerSecond: round(((stats.counts.read + stats.counts.write) / stats.wallMs) * 1000, 1),
      errors: mixed.errors + mixed.non2xx + mixed.timeouts + health.errors + health.non2xx + stats.counts.errors,
      health: health.latencyMs,
      load: mixed.latencyMs,
      processCores: round(stats.processCpuMs / stats.wallMs, 2),
      jsThreadCores: stats.jsThreadCpuMs === null ? null : round(stats.jsThreadCpuMs / stats.wallMs, 2),
    };
    // CPU per request: the server process's (every thread) and its JS thread's.
    const requests = stats.counts.read + stats.counts.write;
    run.processCpuUsPerRequest = round((stats.processCpuMs * 1000) / requests, 0);
    run.jsThreadCpuUsPerRequest = stats.jsThreadCpuMs === null ? null : round((stats.jsThreadCpuMs * 1000) / requests, 0);
    process.stderr.write(`${Math.round(run.readWritePerSecond)} read+write/s, /health p99 ${run.health.p99} ms, errors ${run.errors}\n`);
    return run;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { peer, threadNice, error: err.message };
  } finally {
    if (server) await stopServer(server.child);
    for (const f of fs.readdirSync(dir)) if (f.startsWith(path.basename(file))) fs.rmSync(path.join(dir, f));
  }
}

async function runStarvation([peer, threadNice], dir, offloopDir) {
  const { host } = nodes();
  const file = path.join(dir, 'starvation.db');
  process.stderr.write(`  starvation ${peer}${threadNice ? ` threadNice ${threadNice}` : ''} ... `);
  try {
    const args = [STARVATION, '--peer', peer, '--file', file, '--duration', String(DURATION_S), '--offloop', offloopDir, '--thread-nice', String(threadNice)];
    const { result } = await runChild(host.bin, args, { timeoutMs: 120_000 });
    process.stderr.write(`fs.readFile p99 ${result.readMs.p99} ms over ${result.reads} reads, ${result.queries} queries\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { peer, threadNice, error: err.message };
  } finally {
    for (const f of fs.readdirSync(dir)) if (f.startsWith('starvation.db')) fs.rmSync(path.join(dir, f));
  }
}

async function runOpen(peer, file, offloopDir) {
  const { host } = nodes();
  process.stderr.write(`  open, get, close on ${peer} ... `);
  try {
    const args = [OPEN, '--peer', peer, '--file', file, '--count', String(OPEN_COUNT), '--offloop', offloopDir];
    const { result } = await runChild(host.bin, args, { timeoutMs: 300_000 });
    process.stderr.write(`open p50 ${result.openMs.p50} ms, all three p50 ${result.totalMs.p50} ms\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { peer, error: err.message };
  }
}

async function runFixture(peer, dir, offloopDir) {
  const { host } = nodes();
  const file = path.join(dir, 'fixture.db');
  process.stderr.write(`  fixture ${peer}, ${FIXTURE_CALLS.toLocaleString('en-US')} queued runs ... `);
  try {
    const args = [FIXTURE, '--peer', peer, '--file', file, '--calls', String(FIXTURE_CALLS), '--offloop', offloopDir];
    const { result } = await runChild(host.bin, args, { timeoutMs: 600_000 });
    process.stderr.write(`${result.seconds} s, peak RSS ${result.peakRssMB} MB\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { peer, error: err.message };
  } finally {
    for (const f of fs.readdirSync(dir)) if (f.startsWith('fixture.db')) fs.rmSync(path.join(dir, f));
  }
}

/** The middle value (the mean of the two middle ones for an even count). */
function median(xs) {
  const a = sorted(xs.filter(Number.isFinite));
  if (a.length === 0) return NaN;
  const mid = a.length >> 1;
  return a.length % 2 === 1 ? a[mid] : (a[mid - 1] + a[mid]) / 2;
}

/** One peer's runs as one: each figure's median over the rounds that did not fail. */
function summarise(runs, figures) {
  const ok = runs.filter((r) => !r.error);
  if (ok.length === 0) return runs[0];
  const out = { ...ok[0], rounds: ok.length, failedRounds: runs.length - ok.length };
  if ('errors' in out) out.errors = ok.reduce((sum, r) => sum + r.errors, 0);
  for (const figure of figures) {
    const [key, sub] = figure.split('.');
    const value = median(ok.map((r) => (sub ? r[key]?.[sub] : r[key])));
    if (sub) out[key] = { ...out[key], [sub]: value };
    else out[key] = value;
  }
  return out;
}

const SERVER_FIGURES = ['readWritePerSecond', 'health.p50', 'health.p99', 'load.p99', 'processCores', 'jsThreadCores', 'processCpuUsPerRequest', 'jsThreadCpuUsPerRequest'];
const STARVATION_FIGURES = ['reads', 'readMs.p50', 'readMs.p99', 'readMs.max', 'queries'];
const OPEN_FIGURES = ['openMs.p50', 'openMs.p99', 'getMs.p50', 'getMs.p99', 'closeMs.p50', 'closeMs.p99', 'totalMs.p50', 'totalMs.p99'];
const FIXTURE_FIGURES = ['seconds', 'loopSeconds', 'peakRssMB'];

const fix = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');

function goals(report) {
  const out = [];
  for (const orm of ['knex', 'sequelize']) {
    const base = report.servers.find((r) => r.peer === `${orm}+sqlite3` && !r.error);
    if (!base) continue;
    for (const ours of report.servers.filter((r) => r.peer === `${orm}+offloop` && !r.error)) {
      const tput = ours.readWritePerSecond / base.readWritePerSecond;
      const health = base.health.p99 / ours.health.p99;
      out.push(
        `- ${orm} on offloop/sqlite3${ours.threadNice ? ` (\`threadNice: ${ours.threadNice}\`)` : ''}: throughput ${fix(tput, 2)}× sqlite3's (goal ≥ ${GOAL.throughputFactor}×: ${tput >= GOAL.throughputFactor ? 'met' : '**not met**'}); ` +
          `/health p99 ${fix(health)}× lower (goal ≥ ${GOAL.healthP99Factor}×: ${health >= GOAL.healthP99Factor ? 'met' : '**not met**'})`,
      );
    }
  }
  const none = report.starvation.find((r) => r.peer === 'none' && !r.error);
  for (const r of report.starvation.filter((x) => x.peer !== 'none' && !x.error)) {
    if (!none) break;
    const factor = r.readMs.p99 / none.readMs.p99;
    const line = `- fs.readFile p99 with four slow queries on ${starvedLabel(r)}: ${fix(factor)}× the p99 with none`;
    out.push(r.peer === 'offloop' ? `${line} (goal ≤ ${GOAL.fileReadP99FactorOfNone}×: ${factor <= GOAL.fileReadP99FactorOfNone ? 'met' : '**not met**'})` : line);
  }
  const [peerOpen, ourOpen] = OPENED.map((p) => report.open?.find((r) => r.peer === p && !r.error));
  if (peerOpen && ourOpen) {
    const factor = ourOpen.openMs.p50 / peerOpen.openMs.p50;
    out.push(`- open on offloop/sqlite3: median ${fix(factor)}× sqlite3's (goal ≤ ${GOAL.openP50FactorOfSqlite3}×: ${factor <= GOAL.openP50FactorOfSqlite3 ? 'met' : '**not met**'})`);
  }
  const theirs = report.fixture?.find((r) => r.peer === 'sqlite3' && !r.error);
  const ours = report.fixture?.find((r) => r.peer === 'offloop' && !r.error);
  if (theirs && ours) {
    const time = ours.seconds / theirs.seconds;
    const rss = ours.peakRssMB / theirs.peakRssMB;
    out.push(
      `- node-sqlite3's fixture on offloop/sqlite3: ${fix(time, 2)}× sqlite3's time (goal ≤ ${GOAL.fixtureTimeFactor}×: ${time <= GOAL.fixtureTimeFactor ? 'met' : '**not met**'}); ` +
        `${fix(rss, 2)}× its peak RSS (goal ≤ ${GOAL.fixturePeakRssFactor}×: ${rss <= GOAL.fixturePeakRssFactor ? 'met' : '**not met**'})`,
    );
  }
  return out.join('\n');
}

function starvedLabel(r) {
  if (r.peer === 'none') return 'none';
  if (r.peer === 'sqlite3') return 'sqlite3';
  return r.threadNice ? `offloop/sqlite3, \`threadNice: ${r.threadNice}\`` : 'offloop/sqlite3';
}

function markdown(report) {
  const { machine: m, offloop: o } = report;
  const serverTable = markdownTable(
    [
      { title: 'Library', align: 'left' },
      { title: 'driver', align: 'left' },
      { title: '/read + /write per s', align: 'right' },
      { title: '/health p50 ms', align: 'right' },
      { title: '/health p99 ms', align: 'right' },
      { title: 'load p99 ms', align: 'right' },
      { title: 'errors', align: 'right' },
      { title: 'server CPU (cores)', align: 'right' },
      { title: 'JS thread CPU (cores)', align: 'right' },
      { title: 'server CPU µs per request', align: 'right' },
      { title: 'JS thread CPU µs per request', align: 'right' },
    ],
    report.servers.map((r) => {
      const [orm, driver] = r.peer.split('+');
      const label = driver === 'offloop' ? `offloop/sqlite3${r.threadNice ? `, \`threadNice: ${r.threadNice}\`` : ''}` : `sqlite3 ${report.sqlite3Version}`;
      if (r.error) return [orm, label, `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', '', ''];
      return [
        r.version,
        label,
        int(r.readWritePerSecond),
        fix(r.health.p50, 2),
        fix(r.health.p99, 2),
        fix(r.load.p99),
        String(r.errors),
        fix(r.processCores, 2),
        fix(r.jsThreadCores, 2),
        int(r.processCpuUsPerRequest),
        int(r.jsThreadCpuUsPerRequest),
      ];
    }),
  );
  const starvationTable = markdownTable(
    [
      { title: 'slow queries in flight', align: 'left' },
      { title: 'fs.readFile calls', align: 'right' },
      { title: 'p50 ms', align: 'right' },
      { title: 'p99 ms', align: 'right' },
      { title: 'max ms', align: 'right' },
      { title: 'queries done', align: 'right' },
    ],
    report.starvation.map((r) => {
      const label = r.peer === 'none' ? 'none' : `4 on ${starvedLabel(r)}`;
      if (r.error) return [label, `failed: ${r.error.split('\n')[0]}`, '', '', '', ''];
      return [label, int(r.reads), fix(r.readMs.p50, 3), fix(r.readMs.p99, 3), fix(r.readMs.max), int(r.queries)];
    }),
  );
  const openTable = markdownTable(
    [
      { title: 'driver', align: 'left' },
      { title: 'open p50 ms', align: 'right' },
      { title: 'open p99 ms', align: 'right' },
      { title: 'get p50 ms', align: 'right' },
      { title: 'get p99 ms', align: 'right' },
      { title: 'close p50 ms', align: 'right' },
      { title: 'close p99 ms', align: 'right' },
      { title: 'all three p50 ms', align: 'right' },
      { title: 'all three p99 ms', align: 'right' },
    ],
    (report.open ?? []).map((r) => {
      const label = r.peer === 'sqlite3' ? `sqlite3 ${report.sqlite3Version}` : 'offloop/sqlite3';
      if (r.error) return [label, `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', ''];
      return [label, ...['openMs', 'getMs', 'closeMs', 'totalMs'].flatMap((k) => [fix(r[k].p50, 3), fix(r[k].p99, 3)])];
    }),
  );
  const fixtureTable = markdownTable(
    [
      { title: 'driver', align: 'left' },
      { title: 'queued stmt.run() calls', align: 'right' },
      { title: 'open to close, s', align: 'right' },
      { title: 'of which the queueing loop, s', align: 'right' },
      { title: 'peak RSS, MB', align: 'right' },
      { title: 'each round: s, MB', align: 'left' },
    ],
    (report.fixture ?? []).map((r) => {
      const label = r.peer === 'sqlite3' ? `sqlite3 ${report.sqlite3Version}` : 'offloop/sqlite3';
      if (r.error) return [label, `failed: ${r.error.split('\n')[0]}`, '', '', '', ''];
      const rounds = report.fixtureRuns.filter((x) => x.peer === r.peer).map((x) => (x.error ? 'failed' : `${fix(x.seconds, 2)}, ${int(x.peakRssMB)}`));
      return [label, int(r.calls), fix(r.seconds, 2), fix(r.loopSeconds, 2), int(r.peakRssMB), rounds.join('; ')];
    }),
  );
  const roundsTable = markdownTable(
    [{ title: 'peer', align: 'left' }, ...Array.from({ length: report.rounds }, (_, i) => ({ title: `round ${i + 1}: req/s, /health p99 ms`, align: 'right' }))],
    [...new Set(report.serverRuns.map((r) => `${r.peer}:${r.threadNice}`))].map((key) => {
      const runs = report.serverRuns.filter((r) => `${r.peer}:${r.threadNice}` === key);
      const [peer, nice] = key.split(':');
      return [`${peer}${nice !== '0' ? `, threadNice ${nice}` : ''}`, ...runs.map((r) => (r.error ? 'failed' : `${int(r.readWritePerSecond)}, ${fix(r.health.p99, 2)}`))];
    }),
  );
  return [
    '## SQLITE3 — the drop-in',
    '',
    `Command: \`${COMMAND}\` (${report.date}). Measured on a shared machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''}; ${report.servers.find((r) => r.node)?.node ?? ''}.`,
    '',
    `W3 (\`bench/workloads/w3-server.mjs\`) through Knex and Sequelize: ${CONNECTIONS} connections send \`/read\` (a LIKE over ${ROWS.toLocaleString('en-US')} rows) and \`/write\` (one insert)`,
    `in turn for ${DURATION_S} s after ${WARMUP_S} s of warm-up, while \`/health\` is probed at ${PROBE_RATE}/s. sqlite3 runs with WAL, synchronous NORMAL and the`,
    'same cache size offloop is given. Knex uses its sqlite3 pool (one connection) on both drivers.',
    `The peers take turns for ${report.rounds} rounds; each figure is its median over the rounds (errors: their sum).`,
    '',
    serverTable,
    '',
    'Each round:',
    '',
    roundsTable,
    '',
    'The libuv-pool starvation (`bench/workloads/sqlite3-starvation.mjs`): four slow queries (a recursive count of 300,000 rows) kept in',
    `flight for ${DURATION_S} s while \`fs.readFile\` of a 512-byte file runs in a loop, one read at a time, with libuv's default pool of 4 threads.`,
    '',
    starvationTable,
    '',
    `Medians of ${report.rounds} rounds, the peers in turn.`,
    '',
    `Open, one get, close (\`bench/workloads/sqlite3-open.mjs\`): a file in WAL mode with one row is opened, read once (\`db.get\` of a row by its key)`,
    `and closed, one database at a time, ${OPEN_COUNT.toLocaleString('en-US')} times per round after a warm-up; each phase from its call to its callback.`,
    '',
    openTable,
    '',
    `Per phase, the median over ${report.rounds} rounds of each round's median and p99.`,
    '',
    "node-sqlite3's own fixture (`bench/workloads/sqlite3-fixture.mjs`, after its `test/support/createdb.js`): inside one `db.serialize()`, CREATE TABLE,",
    `BEGIN, one prepared INSERT run ${FIXTURE_CALLS.toLocaleString('en-US')} times from one synchronous loop (an integer and a random 0-100 character text built one`,
    "character at a time), finalize, COMMIT, close; every call is queued before the first runs. Time from the open to the close's callback; peak RSS",
    "is the process's `maxRSS`. One process per peer per round, the peers in turn; medians of the rounds.",
    '',
    fixtureTable,
    '',
    '### Against the goals',
    '',
    goals(report),
    '',
  ].join('\n');
}

function chartSpec(report) {
  const values = [];
  for (const r of report.servers) {
    if (r.error) continue;
    const label = `${r.peer.replace('+offloop', ' + offloop/sqlite3').replace('+sqlite3', ' + sqlite3')}${r.threadNice ? `, threadNice ${r.threadNice}` : ''}`;
    values.push({ label, metric: '/read + /write per second', value: r.readWritePerSecond });
    values.push({ label, metric: '/health p99 latency, ms', value: r.health.p99 });
  }
  for (const r of report.starvation) {
    if (r.error) continue;
    values.push({ label: `fs.readFile beside ${r.peer === 'none' ? 'no queries' : starvedLabel(r).replaceAll('`', '')}`, metric: 'fs.readFile p99, ms', value: r.readMs.p99 });
  }
  for (const r of report.fixture ?? []) {
    if (r.error) continue;
    const label = `fixture on ${r.peer === 'sqlite3' ? 'sqlite3' : 'offloop/sqlite3'}`;
    values.push({ label, metric: 'fixture: open to close, s', value: r.seconds });
    values.push({ label, metric: 'fixture: peak RSS, MB', value: r.peakRssMB });
  }
  const labels = [...new Set(values.map((v) => v.label))];
  const panel = (metric, format) => labelledBars(metric, format, labels);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'sqlite3 against offloop/sqlite3', subtitle: [`${COMMAND} (${report.date}), shared 2-core machine`], anchor: 'start' },
    data: { values },
    vconcat: [
      panel('/read + /write per second', ',.0f'),
      panel('/health p99 latency, ms', '.1f'),
      panel('fs.readFile p99, ms', '.2f'),
      panel('fixture: open to close, s', '.1f'),
      panel('fixture: peak RSS, MB', ',.0f'),
    ],
    config: { view: { stroke: null }, axis: { labelFontSize: 10, titleFontSize: 10 } },
  };
}

console.error(`SQLITE3: ${ROUNDS} rounds of ${PEERS.length} servers × ${DURATION_S} s, the starvation on ${STARVED.length} peers and the fixture on ${FIXTURE_PEERS.length}`);
const bench = await startBenchmark({ label: 'sqlite3', maxLoad: Number(opts['max-load']), tmpName: 'sqlite3' });
const { offloop, dir } = bench;
const report = {
  benchmark: 'SQLITE3 — the drop-in',
  command: COMMAND,
  ...bench.header,
  sqlite3Version: JSON.parse(fs.readFileSync(createRequire(path.join(BENCH, 'package.json')).resolve('sqlite3/package.json'), 'utf8')).version,
  workload: { rows: ROWS, connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S, probeRate: PROBE_RATE, fixtureCalls: FIXTURE_CALLS },
  goal: GOAL,
  rounds: ROUNDS,
  servers: [],
  starvation: [],
  serverRuns: [],
  starvationRuns: [],
  open: [],
  openRuns: [],
  fixture: [],
  fixtureRuns: [],
};
try {
  const seed = path.join(dir, 'seed.db');
  buildSeed(seed);
  const openSeed = path.join(dir, 'open.db');
  buildOpenSeed(openSeed);
  for (let round = 1; round <= ROUNDS; round++) {
    console.error(`round ${round} of ${ROUNDS}`);
    if (!OPEN_ONLY) {
      for (const peer of PEERS) report.serverRuns.push({ round, ...(await runServer(peer, seed, dir, offloop.dir)) });
      for (const peer of STARVED) report.starvationRuns.push({ round, ...(await runStarvation(peer, dir, offloop.dir)) });
      for (const peer of FIXTURE_PEERS) report.fixtureRuns.push({ round, ...(await runFixture(peer, dir, offloop.dir)) });
    }
    for (const peer of OPENED) report.openRuns.push({ round, ...(await runOpen(peer, openSeed, offloop.dir)) });
  }
  const same = ([peer, nice]) => (r) => r.peer === peer && r.threadNice === nice;
  report.servers = PEERS.map((p) => summarise(report.serverRuns.filter(same(p)), SERVER_FIGURES));
  report.starvation = OPEN_ONLY ? [] : STARVED.map((p) => summarise(report.starvationRuns.filter(same(p)), STARVATION_FIGURES));
  report.fixture = OPEN_ONLY ? [] : FIXTURE_PEERS.map((p) => summarise(report.fixtureRuns.filter((r) => r.peer === p), FIXTURE_FIGURES));
  report.open = OPENED.map((p) => summarise(report.openRuns.filter((r) => r.peer === p), OPEN_FIGURES));
} finally {
  bench.finish(report);
}

await publish('sqlite3', report, markdown(report), chartSpec(report), partial);
