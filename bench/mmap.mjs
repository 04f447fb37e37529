// mmap — what memory-mapped reads buy. A ~50 MB database (t with an
// INTEGER PRIMARY KEY, an indexed key k and a 200-byte text v), read with
// mmap_size off, covering part of the file, and covering all of it: a full
// scan and indexed point lookups, through better-sqlite3 and offloop with
// the same setting. Each cell runs in several fresh child processes
// (bench/workloads/mmap.mjs), interleaved with the other cells so that
// background load drifting over time hits every cell alike; the table shows
// the median of every round of every child.
//
//   npm run bench -- mmap [--rows N] [--runs N] [--children N] [--lookups N] [--max-load X]
//
// Writes bench/results/mmap.{json,md}. The options other than --max-load
// make a quick partial run for development; it writes the same files with a
// .tmp suffix (ignored by git).

import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { snapshotOffloop } from './lib/build.mjs';
import { runChild } from './lib/child.mjs';
import { cpuBusyPercent, describeMachine, machine } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { waitForQuiet } from './lib/quiet.mjs';
import { markdownTable, writeJson, writeMarkdown } from './lib/results.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- mmap';
const WORKLOAD = path.join(BENCH, 'workloads', 'mmap.mjs');
const RUN_TIMEOUT_MS = 300_000;
const MiB = 2 ** 20;
const IN_FLIGHT = 32;

const { values: opts } = parseArgs({
  options: {
    rows: { type: 'string' },
    runs: { type: 'string' },
    children: { type: 'string' },
    lookups: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
  },
});
const partial = Boolean(opts.rows || opts.runs || opts.children || opts.lookups);
const ROWS = Number(opts.rows ?? 220_000);
// Rounds per child, and children per cell.
const RUNS = Number(opts.runs ?? 5);
const CHILDREN = Number(opts.children ?? 5);
const LOOKUPS = Number(opts.lookups ?? 20_000);

const LIBRARIES = ['better-sqlite3', 'offloop'];

/** Builds the database with better-sqlite3, in WAL mode with an empty WAL. */
function build(file) {
  const Database = createRequire(path.join(BENCH, 'package.json'))('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${ROWS})
    INSERT INTO t(id, k, v) SELECT i, (i * 2654435761) % 4294967296, hex(randomblob(100)) FROM c;
    CREATE INDEX t_k ON t(k);
  `);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return fs.statSync(file).size;
}

const median = (xs) => percentile(sorted(xs), 0.5);

/** The median and the interquartile range of every round. */
function spread(xs) {
  const s = sorted(xs);
  return { median: round(percentile(s, 0.5), 1), p25: round(percentile(s, 0.25), 1), p75: round(percentile(s, 0.75), 1) };
}

async function measure(peer, file, mmap, offloopDir) {
  const { host } = nodes();
  const args = [WORKLOAD, '--peer', peer, '--file', file, '--mmap', String(mmap), '--offloop', offloopDir];
  args.push('--runs', String(RUNS), '--lookups', String(LOOKUPS), '--in-flight', String(IN_FLIGHT));
  process.stderr.write(`  ${peer}, mmap_size ${mmap} ... `);
  try {
    const { result } = await runChild(host.bin, args, { timeoutMs: RUN_TIMEOUT_MS });
    process.stderr.write(`scan ${round(median(result.scanMs))} ms, lookups ${round(median(result.lookupMs))} ms\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  }
}

/** One cell: every child's rounds together. */
function summarize(peer, mmap, children) {
  const ok = children.filter((c) => !c.error);
  if (ok.length === 0) return { peer, mmapRequested: mmap, error: children[0].error };
  const all = (key) => ok.flatMap((c) => c[key]);
  const first = ok[0];
  return {
    peer,
    node: first.node,
    version: first.version,
    sqliteVersion: first.sqliteVersion,
    mmapRequested: mmap,
    mmapInForce: first.mmapInForce,
    rows: first.rows,
    found: first.found,
    children: ok.length,
    failedChildren: children.length - ok.length,
    scanMs: spread(all('scanMs')),
    lookupMs: spread(all('lookupMs')),
    lookupInFlightMs: all('lookupInFlightMs').length ? spread(all('lookupInFlightMs')) : null,
    raw: ok.map((c) => ({ scanMs: c.scanMs, lookupMs: c.lookupMs, lookupInFlightMs: c.lookupInFlightMs })),
  };
}

const fmtBytes = (b) => (b === 0 ? '0 (off)' : b >= 2 ** 30 ? `${b / 2 ** 30} GiB` : `${b / MiB} MiB`);
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
const cell = (s) => (s ? `${fmt(s.median)} (${fmt(s.p25, 0)}–${fmt(s.p75, 0)})` : '—');

function inForce(run) {
  if (!run || run.error) return '?';
  const f = run.mmapInForce;
  const values = 'connection' in f ? [f.connection] : [f.writer, ...f.readers];
  const distinct = [...new Set(values)];
  return distinct.length === 1 ? fmtBytes(distinct[0]) : distinct.map(fmtBytes).join(' / ');
}

function table(report) {
  const columns = [
    { title: 'mmap_size', align: 'left' },
    { title: 'In force (b-s3 / offloop, every connection)', align: 'left' },
    { title: 'Full scan, better-sqlite3 ms', align: 'right' },
    { title: 'Full scan, offloop ms', align: 'right' },
    { title: `${LOOKUPS.toLocaleString('en-US')} lookups, better-sqlite3 ms`, align: 'right' },
    { title: 'Lookups, offloop 1 in flight ms', align: 'right' },
    { title: `Lookups, offloop ${IN_FLIGHT} in flight ms`, align: 'right' },
  ];
  const rows = report.settings.map(({ label, bytes }) => {
    const b = report.runs.find((r) => r.peer === 'better-sqlite3' && r.mmapRequested === bytes);
    const o = report.runs.find((r) => r.peer === 'offloop' && r.mmapRequested === bytes);
    const ok = (r) => r && !r.error;
    return [
      `${label}: ${fmtBytes(bytes)}`,
      `${inForce(b)} / ${inForce(o)}`,
      ok(b) ? cell(b.scanMs) : 'failed',
      ok(o) ? cell(o.scanMs) : 'failed',
      ok(b) ? cell(b.lookupMs) : 'failed',
      ok(o) ? cell(o.lookupMs) : 'failed',
      ok(o) ? cell(o.lookupInFlightMs) : 'failed',
    ];
  });
  return markdownTable(columns, rows);
}

function versions(runs) {
  const seen = new Set();
  for (const r of runs) if (!r.error) seen.add(`${r.peer} ${r.version} (SQLite ${r.sqliteVersion})`);
  return [...seen].join(', ');
}

function markdown(report) {
  const { machine: m, offloop: o } = report;
  return [
    '## mmap — memory-mapped reads',
    '',
    `Command: \`${COMMAND}\` (${report.date}).`,
    `Machine: ${describeMachine(m)}; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `Node ${report.runs.find((r) => !r.error)?.node ?? '?'}. Libraries: ${versions(report.runs)}.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}).`,
    '',
    `Database: ${report.workload.rows.toLocaleString('en-US')} rows of \`t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT)\` with an index on k, v 200 bytes;`,
    `${(report.workload.fileBytes / MiB).toFixed(1)} MiB, WAL mode, read with SQLite's default page cache (cache_size -2000, about 2 MB) and the file in the OS page cache.`,
    `Full scan: \`SELECT count(*), sum(length(v)) FROM t\`. Lookups: ${LOOKUPS.toLocaleString('en-US')} \`SELECT v FROM t WHERE k = ?\` with random existing keys`,
    `(the same keys everywhere). Each cell: the median of ${report.workload.children} child processes × ${report.workload.runs} rounds (after a warm-up round`,
    `in each), children of all cells interleaved. offloop with its default 4 readers; "1 in flight" awaits each call,`,
    `"${IN_FLIGHT} in flight" keeps ${IN_FLIGHT} calls outstanding.`,
    '',
    table(report),
    '',
    'Times in ms: the median of every round, and in brackets the middle half of them (25th to 75th percentile).',
    '"In force" is what `PRAGMA mmap_size` reads back: on better-sqlite3\'s one connection, and on every offloop connection that runs queries (`db.settings()`).',
  ].join('\n');
}

// ---------------------------------------------------------------------------

const quiet = await waitForQuiet({ maxLoad: Number(opts['max-load']), label: 'mmap' });
const busyBefore = await cpuBusyPercent();
// Every run measures the same build, even if the tree is rebuilt meanwhile.
const offloop = snapshotOffloop();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-bench-mmap-'));
try {
  const file = path.join(dir, 'mmap.db');
  console.error(`building a database of ${ROWS.toLocaleString('en-US')} rows ...`);
  const fileBytes = build(file);
  console.error(`  ${(fileBytes / MiB).toFixed(1)} MiB`);
  // Off; about a third of the file; more than the whole file.
  const settings = [
    { label: 'off', bytes: 0 },
    { label: 'partial', bytes: Math.max(1, Math.round(fileBytes / 3 / MiB)) * MiB },
    { label: 'covering', bytes: 256 * MiB },
  ];
  const report = {
    benchmark: 'mmap — memory-mapped reads',
    command: COMMAND,
    date: new Date().toISOString().slice(0, 10),
    machine: { ...machine(), cpuBusyPercentBeforeStart: busyBefore, quietAtStart: quiet },
    offloop: offloop.build,
    workload: { rows: ROWS, fileBytes, runs: RUNS, children: CHILDREN, lookups: LOOKUPS, inFlight: IN_FLIGHT },
    settings,
    runs: [],
  };
  const cells = settings.flatMap(({ bytes }) => LIBRARIES.map((peer) => ({ peer, bytes, children: [] })));
  for (let c = 0; c < CHILDREN; c++) {
    // Forward, then backward: no cell always runs first or last.
    const order = c % 2 === 0 ? cells : [...cells].reverse();
    for (const cell of order) cell.children.push(await measure(cell.peer, file, cell.bytes, offloop.dir));
  }
  report.runs = cells.map((cell) => summarize(cell.peer, cell.bytes, cell.children));
  report.machine.loadAverageAtEnd = os.loadavg().map((x) => round(x));
  const text = markdown(report);
  console.log(text);
  const suffix = partial ? '.tmp' : '';
  const written = [writeJson(`mmap.json${suffix}`, report), writeMarkdown(`mmap.md${suffix}`, text)];
  console.error(`wrote ${written.join(', ')}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  offloop.cleanup();
}
