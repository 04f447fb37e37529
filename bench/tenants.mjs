// TENANTS — many databases (docs: bench/README.md): what a database per
// tenant costs one Node process, offloop against Litestream 0.5's directory
// mode replicating the same databases, in one run. For each number of
// tenants, each a copy of the same small database (one table of 10 rows):
//
//  - offloop: every tenant opened with its own replica (a folder; S3 through
//    moto for the S3 size) and kept open, in a child process whose
//    open-files limit is 1,024 (soft and hard: Node raises its soft limit to
//    the hard one at start). A run that runs out of file descriptors there
//    is run again with the limit this benchmark was given (raised);
//  - Litestream: `litestream replicate` with `dbs: - dir:` over the tenants'
//    folder (started here, one scan at its start), and beside it the app, a
//    child process on better-sqlite3 that keeps its 100 most recently used
//    handles open. Its figures are Litestream's process and the app's
//    together.
//
// Each configuration runs in a child of its own (bench/workloads/tenants-app.mjs),
// one after the other, on fresh copies of the databases: threads, file
// descriptors and resident memory, per tenant over the app's own baseline;
// open time; reads of a random tenant, 64 in flight, cold (untouched since
// it was opened) and warm (read just before); CPU while every tenant sits
// idle; and, for S3, the requests a minute per idle tenant, counted by a
// proxy in front of moto (bench/lib/s3-proxy.mjs). A run that stops short
// (out of file descriptors, a guard on threads or memory tripped, a crash)
// records how many tenants it reached and why, and the rest goes on.
//
//   npm run bench -- tenants [--quick] [--tenants N] [--sizes 10000,100000] [--s3-tenants 1000]
//        [--only offloop,litestream] [--fd-limit 1024] [--no-raise] [--max-threads 4096]
//        [--max-load X] [--json FILE]
//   npm run bench -- tenants --render
//
// Writes bench/results/tenants.{json,md,svg}; --quick does too, with 200
// tenants, 50 on S3 and short idle windows, in about two minutes. Sizes,
// peers or windows chosen by hand (--tenants, --sizes, --s3-tenants, --only,
// --idle-s, --settle-s, --reads) make a partial run, written with a .tmp
// suffix (ignored by git). --json writes the report to that file alone (the
// benchmark's test). --render measures nothing: it redraws the Markdown and
// the chart from the saved JSON.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { runChildEvents } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { startLitestreamDirectory } from './lib/litestream.mjs';
import { BENCH, HOST_NODE, ROOT, benchRequire } from './lib/paths.mjs';
import { openFilesLimit, processFigures } from './lib/proc.mjs';
import { publish, resultPath } from './lib/results.mjs';
import { countingProxy } from './lib/s3-proxy.mjs';
import { startMoto } from './lib/s3-servers.mjs';
import { round } from './lib/stats.mjs';
import { GOAL, goalResults } from './lib/tenants-goals.mjs';
import { chartSpec, markdown } from './lib/tenants-report.mjs';
import { toolVersions } from './lib/tools.mjs';

const COMMAND = 'npm run bench -- tenants';
const APP = path.join(BENCH, 'workloads', 'tenants-app.mjs');
const BUCKET = 'tenants';
/** Rows in each tenant's table (tenants-app.mjs reads one of them by id, told by --rows). */
const ROWS = 10;
/** The open-files limit of a default Linux login: the goal says it must do. */
const DEFAULT_FD_LIMIT = 1024;
/** The handles the better-sqlite3 app keeps open (libSQL's server keeps 100 namespaces active). */
const PEER_CACHE = 100;

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    tenants: { type: 'string' },
    sizes: { type: 'string' },
    's3-tenants': { type: 'string' },
    only: { type: 'string' },
    'fd-limit': { type: 'string', default: String(DEFAULT_FD_LIMIT) },
    'no-raise': { type: 'boolean', default: false },
    'max-threads': { type: 'string', default: '4096' },
    'max-sidecar-rss-mib': { type: 'string', default: String(Math.round(os.totalmem() / 6 / 2 ** 20)) },
    'idle-s': { type: 'string' },
    'settle-s': { type: 'string' },
    reads: { type: 'string' },
    'max-load': { type: 'string', default: '1.0' },
    json: { type: 'string' },
    render: { type: 'boolean', default: false },
  },
});
// --quick is a whole run, only smaller (its JSON may stand until a full run
// replaces it); choosing sizes, peers or windows by hand is a partial one.
const partial = ['tenants', 'sizes', 's3-tenants', 'only', 'idle-s', 'settle-s', 'reads'].some((k) => opts[k] !== undefined);
const sizes = (opts.sizes ?? opts.tenants ?? (opts.quick ? '200' : '10000,100000')).split(',').filter(Boolean).map(Number);
// --quick's S3 size fits today's offloop in 1,024 descriptors: one run, not two, for the longest windows.
const s3Tenants = Number(opts['s3-tenants'] ?? (opts.tenants ? Math.min(Number(opts.tenants), 1000) : opts.quick ? 50 : 1000));
const libraries = new Set((opts.only ?? 'offloop,litestream').split(','));
/**
 * Idle windows: a folder replica's idle CPU over `idleS` from `settleS`
 * after every tenant's first upload; an S3 replica's
 * requests from `s3SettleS` after every tenant's first upload (offloop
 * compacts a first write 30 s after it, Litestream lists every 15 s: that
 * is work on something new, not idle cost) for `s3IdleS`.
 */
const PLAN = {
  quick: opts.quick,
  sizes,
  s3Tenants,
  libraries: [...libraries],
  fdLimit: opts['fd-limit'] === 'inherit' ? null : Number(opts['fd-limit']),
  raise: !opts['no-raise'],
  maxThreads: Number(opts['max-threads']),
  maxSidecarRssMiB: Number(opts['max-sidecar-rss-mib']),
  peerCache: PEER_CACHE,
  inFlight: 64,
  reads: Number(opts.reads ?? (opts.quick ? 500 : 2000)),
  // Past offloop's idleTimeout (30 s): an idle tenant is one at rest, not
  // one winding down from its open (a checkpoint, its WAL removed, the
  // clean-close record), which is a one-time cost of its work.
  settleS: Number(opts['settle-s'] ?? (opts.quick ? 2 : 40)),
  idleS: Number(opts['idle-s'] ?? (opts.quick ? 5 : 30)),
  s3SettleS: Number(opts['settle-s'] ?? (opts.quick ? 5 : 40)),
  s3IdleS: Number(opts['idle-s'] ?? (opts.quick ? 15 : 60)),
  /** How long Litestream may go without replicating one more tenant before it is taken as stuck. */
  sidecarStallS: opts.quick ? 20 : 60,
};

// ---------------------------------------------------------------------------
// The tenants' files

/** One small database in WAL mode, checkpointed (no -wal file), copied for every tenant. */
function seedTemplate(file) {
  const Database = benchRequire('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t(id, v) VALUES (?, ?)');
  db.transaction(() => {
    for (let id = 1; id <= ROWS; id++) insert.run(id, `tenant row ${id} `.padEnd(100, '.'));
  })();
  db.close();
}

function seedTenants(template, dir, n) {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) fs.copyFileSync(template, path.join(dir, `t${i}.db`));
}

// ---------------------------------------------------------------------------
// S3: moto behind a proxy that counts requests by kind and notes which
// tenants' files arrived (Litestream's replica is watched that way).

async function startS3() {
  const moto = await startMoto({ buckets: [BUCKET] });
  let watch = null;
  const proxy = await countingProxy(moto.port, (req, url) => {
    if (watch && req.method === 'PUT') {
      const m = watch.pattern.exec(decodeURIComponent(url.pathname));
      if (m) watch.seen.add(m[1]);
    }
  });
  return {
    endpoint: proxy.endpoint,
    /** The counts since the last take(). */
    take: proxy.take,
    /** Notes the tenants (t<i>) whose files are PUT under `prefix`; returns the set. */
    watchPrefix(prefix) {
      watch = { pattern: new RegExp(`^/${BUCKET}/${prefix}/(t\\d+)(?:\\.db)?/`), seen: new Set() };
      return watch.seen;
    },
    async stop() {
      await proxy.stop();
      await moto.stop();
    },
  };
}

// ---------------------------------------------------------------------------
// One configuration

/** `node` under `sh -c 'ulimit -n L'` when a limit is asked, with --expose-gc for clean RSS readings. */
function appCommand(fdLimit, args) {
  const node = [HOST_NODE, '--expose-gc', APP, ...args];
  if (fdLimit === null) return [node[0], node.slice(1)];
  return ['sh', ['-c', 'ulimit -n "$1" || exit 97; shift; exec "$@"', 'sh', String(fdLimit), ...node]];
}

function appArgs(run, dirs, extra) {
  const s3 = run.store === 's3';
  return [
    '--driver', run.driver,
    '--dir', dirs.db,
    '--tenants', String(run.tenants),
    '--settle-s', String(s3 ? PLAN.s3SettleS : PLAN.settleS),
    '--idle-s', String(s3 ? PLAN.s3IdleS : PLAN.idleS),
    '--reads', String(PLAN.reads),
    '--in-flight', String(PLAN.inFlight),
    '--max-threads', String(PLAN.maxThreads),
    '--cache', String(PLAN.peerCache),
    '--rows', String(ROWS),
    ...extra,
  ];
}

/**
 * Runs the app child, reading it (and the sidecar, `sidecarPid`) from /proc
 * at each phase it asks for: `figures[phase]` = `{ self, sidecar }`. The S3
 * requests between its idle-start and idle-end come back as `idleRequests`.
 */
async function runApp(ctx, run, fdLimit, args, sidecarPid = null) {
  const [bin, argv] = appCommand(fdLimit, args);
  const figures = {};
  let limits = null;
  let idleRequests = null;
  const timeoutMs = 120_000 + run.tenants * 40 + (PLAN.settleS + PLAN.s3SettleS + PLAN.s3IdleS + PLAN.idleS) * 1000;
  const out = await runChildEvents(bin, argv, {
    timeoutMs,
    onEvent(event, child) {
      if (event.event === 'opened' && event.tenants % 1000 === 0) process.stderr.write(`${event.tenants} `);
      if (event.event !== 'measure') return;
      figures[event.phase] = { self: processFigures(child.pid), sidecar: sidecarPid ? processFigures(sidecarPid) : null };
      if (event.phase === 'baseline') limits = openFilesLimit(child.pid);
      if (ctx.s3 && event.phase === 'idle-start') ctx.s3.take();
      if (ctx.s3 && event.phase === 'idle-end') idleRequests = ctx.s3.take();
      child.reply('go');
    },
  });
  return { ...out, figures, limits, idleRequests };
}

function childFailure(out) {
  if (out.result) return null;
  const opened = out.events.filter((e) => e.event === 'opened').pop()?.tenants ?? 0;
  const how = out.timedOut ? 'timed out' : out.exit.code === 97 ? `could not set ulimit -n` : `exited with ${out.exit.code ?? out.exit.signal}`;
  return { reason: 'crash', at: opened, message: `the app ${how} after opening ${opened} tenants: ${out.stderrTail}` };
}

async function offloopRun(ctx, run, fdLimit) {
  const dirs = { db: path.join(run.dir, 'db'), replica: path.join(run.dir, 'replica') };
  seedTenants(ctx.template, dirs.db, run.tenants);
  const prefix = `offloop-${run.index}`;
  const replica = run.store === 'folder' ? ['--replica-dir', dirs.replica] : ['--endpoint', ctx.s3.endpoint, '--bucket', BUCKET, '--prefix', prefix];
  const out = await runApp(ctx, run, fdLimit, appArgs(run, dirs, [...replica, '--offloop', ctx.offloop.dir]));
  return { out, sidecar: null };
}

/** Starts Litestream on the tenants' folder and waits until its replica holds every tenant, or it stalls, dies or outgrows the guard. */
async function startSidecar(ctx, run, dirs) {
  const prefix = `litestream-${run.index}`;
  const replica = run.store === 'folder' ? { type: 'file', path: dirs.replica } : { type: 's3', endpoint: ctx.s3.endpoint, bucket: BUCKET, prefix };
  const seen = run.store === 's3' ? ctx.s3.watchPrefix(prefix) : new Set();
  const pending = new Set(Array.from({ length: run.tenants }, (_, i) => `t${i}`));
  const t0 = performance.now();
  const sidecar = await startLitestreamDirectory({ dbDir: dirs.db, replica, configDir: path.join(run.dir, 'litestream') });
  let lastProgress = t0;
  let guard = null;
  while (pending.size > 0 && !sidecar.exit()) {
    await sleep(500);
    // A folder replica: only the tenants whose folder is there yet are looked into.
    const started = run.store === 's3' ? null : new Set(listing(dirs.replica));
    for (const name of pending) {
      const done = run.store === 's3' ? seen.has(name) : started.has(`${name}.db`) && listing(path.join(dirs.replica, `${name}.db`, 'ltx', '0')).length > 0;
      if (done) {
        pending.delete(name);
        lastProgress = performance.now();
      }
    }
    const rss = processFigures(sidecar.pid).rssKiB;
    if (rss !== null && rss / 1024 > PLAN.maxSidecarRssMiB) {
      guard = `${Math.round(rss / 1024)} MiB resident, over the benchmark's guard of ${PLAN.maxSidecarRssMiB} MiB`;
      break;
    }
    if (performance.now() - lastProgress > PLAN.sidecarStallS * 1000) break;
  }
  const replicated = run.tenants - pending.size;
  const state = { replicated, ms: round(performance.now() - t0, 0), guard, limits: openFilesLimit(sidecar.pid) };
  return { sidecar, state };
}

function listing(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

async function litestreamRun(ctx, run, fdLimit) {
  const dirs = { db: path.join(run.dir, 'db'), replica: path.join(run.dir, 'replica') };
  seedTenants(ctx.template, dirs.db, run.tenants);
  const { sidecar, state } = await startSidecar(ctx, run, dirs);
  let out = null;
  if (!sidecar.exit() && !state.guard) {
    out = await runApp(ctx, run, fdLimit, appArgs(run, dirs, []), sidecar.pid);
  }
  // How it ended before this benchmark stopped it: null while it ran.
  const exit = sidecar.exit();
  await sidecar.stop();
  return { out, sidecar: { ...state, exit, errors: sidecar.errors(), logTail: sidecar.log().slice(-1500) } };
}

/** What a Litestream log line says (its msg and error), without the time and the fields around them. */
function logMessage(line) {
  const m = /msg="([^"]*)".*?error="([^"]*)"/.exec(line);
  return m ? `${m[1]}: ${m[2]}` : line;
}

/** A phase's figure for the app and its sidecar together; null when the phase was not reached. */
function total(out, phase, key) {
  const f = out?.figures[phase];
  if (!f || f.self?.[key] == null) return null;
  return f.self[key] + (f.sidecar?.[key] ?? 0);
}

/** What a configuration's child and sidecar gave, as the report keeps it. */
function summarizeRun(run, fdLimit, { out, sidecar }) {
  const r = out?.result ?? null;
  let stop = r?.stop ?? (out ? childFailure(out) : null);
  // "unable to open database file" says nothing of why: a process at its limit ran out of descriptors.
  const fdsAtOpen = out?.figures.open?.self?.fds;
  if (stop?.reason === 'error' && out?.limits?.soft && fdsAtOpen >= out.limits.soft - 64) stop = { ...stop, reason: 'fds' };
  // The tenants the processes hold: the app's open ones (Litestream scanned
  // and watches every one of them, replicated or not).
  const held = r?.tenantsReached ?? 0;
  let reached = held;
  if (sidecar) {
    const why = sidecar.guard ?? (sidecar.exit ? `Litestream exited with ${sidecar.exit.code ?? sidecar.exit.signal}` : null);
    if (sidecar.replicated < run.tenants || why) {
      const errors = sidecar.errors.count ? `; ${sidecar.errors.count} ERROR lines, the first: ${logMessage(sidecar.errors.first[0])}` : '';
      const outOfFds = sidecar.errors.first.some((line) => /too many open files/i.test(line));
      stop = {
        reason: sidecar.guard ? 'guard' : outOfFds ? 'fds' : 'sidecar',
        at: sidecar.replicated,
        message: `Litestream's replica held ${sidecar.replicated} of ${run.tenants} tenants after ${round(sidecar.ms / 1000, 1)} s${why ? ` (${why})` : ''}${errors}`,
      };
    }
    reached = Math.min(reached, sidecar.replicated);
  }
  const base = out?.figures.baseline?.self;
  const phase = (p) => (total(out, p, 'threads') === null ? null : { threads: total(out, p, 'threads'), fds: total(out, p, 'fds'), rssKiB: total(out, p, 'rssKiB') });
  const perTenant = (p, key) => (base && held && total(out, p, key) !== null ? round((total(out, p, key) - base[key]) / held, 2) : null);
  const idleCpu = r && total(out, 'idle-end', 'cpuSeconds') !== null ? total(out, 'idle-end', 'cpuSeconds') - total(out, 'idle-start', 'cpuSeconds') : null;
  const requests = out?.idleRequests ?? null;
  const requestCount = requests ? Object.values(requests).reduce((a, b) => a + b, 0) : null;
  const closed = out?.figures.closed?.self;
  const measured = r && phase('idle-end') !== null;
  return {
    id: `${run.replicator}-${run.store}-${run.tenants}${run.replicator === 'offloop' ? `-fd${fdLimit ?? 'raised'}` : ''}`,
    replicator: run.replicator,
    driver: run.driver,
    store: run.store,
    tenantsAsked: run.tenants,
    tenantsReached: reached,
    tenantsHeld: held,
    stop,
    fdLimitAsked: fdLimit,
    limits: out?.limits ?? null,
    sidecarLimits: sidecar?.limits ?? null,
    baseline: base ?? null,
    totals: measured ? { open: phase('open'), idle: phase('idle-end'), read: phase('read') } : null,
    perTenant: measured
      ? { threads: perTenant('idle-end', 'threads'), fds: perTenant('idle-end', 'fds'), rssKiB: perTenant('idle-end', 'rssKiB'), rssKiBAfterReads: perTenant('read', 'rssKiB') }
      : null,
    openMs: r?.openMs ?? null,
    firstSync: r?.firstSync ?? null,
    reads: r?.reads ?? null,
    idleCpuPercent: idleCpu === null ? null : round((100 * idleCpu) / r.idleSeconds, 2),
    s3: requests && r ? { idleSeconds: r.idleSeconds, requests, perMinutePerTenant: held ? round((requestCount / held / r.idleSeconds) * 60, 3) : null } : null,
    close: r && closed && base ? { ms: r.close.ms, errors: r.close.errors, threadsLeft: closed.threads - base.threads, fdsLeft: closed.fds - base.fds } : null,
    engineStats: r?.engineStats ?? null,
    sidecar,
    child: out ? { exit: out.exit, timedOut: out.timedOut, seconds: round(out.ms / 1000, 1), stderrTail: r ? null : out.stderrTail } : null,
  };
}

/** `row` with the scratch folders and the checkout named by role, not by where they are on this machine. */
function scrubbed(ctx, row) {
  let text = JSON.stringify(row);
  for (const [dir, name] of [[ctx.dir, '<scratch>'], [ctx.offloop.dir, '<offloop>'], [ROOT, '<repo>'], [os.tmpdir(), '<tmp>']]) {
    text = text.split(dir).join(name);
  }
  return JSON.parse(text);
}

async function runConfiguration(ctx, run, fdLimit) {
  run.dir = fs.mkdtempSync(path.join(ctx.dir, `${run.replicator}-${run.store}-`));
  const limit = fdLimit === null ? `raised to ${ctx.raisedFdLimit?.toLocaleString('en-US') ?? '?'}` : fdLimit.toLocaleString('en-US');
  const who = run.replicator === 'offloop' ? `offloop, ulimit -n ${limit}` : 'Litestream + better-sqlite3';
  const label = `${who}, ${run.store === 's3' ? 'S3' : 'folder'}, ${run.tenants.toLocaleString('en-US')} tenants`;
  process.stderr.write(`  ${label} ... `);
  try {
    const measured = run.replicator === 'offloop' ? await offloopRun(ctx, run, fdLimit) : await litestreamRun(ctx, run, fdLimit);
    const row = scrubbed(ctx, { label, ...summarizeRun(run, fdLimit, measured) });
    const stopped = row.stop ? `stopped at ${row.tenantsReached} (${row.stop.reason}: ${row.stop.message.slice(0, 160)})` : 'all open';
    process.stderr.write(`${stopped}; ${row.totals?.idle.threads ?? '?'} threads, ${row.totals?.idle.fds ?? '?'} fds\n`);
    return row;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { label, replicator: run.replicator, store: run.store, tenantsAsked: run.tenants, tenantsReached: 0, error: err.message };
  } finally {
    fs.rmSync(run.dir, { recursive: true, force: true });
  }
}

async function measure() {
  const bench = await startBenchmark({ label: 'tenants', maxLoad: Number(opts['max-load']), tmpName: 'tenants' });
  const ownLimit = openFilesLimit();
  const report = {
    command: COMMAND,
    ...bench.header,
    tools: { ...toolVersions(), betterSqlite3: benchRequire('better-sqlite3/package.json').version },
    plan: { ...PLAN, raisedFdLimit: ownLimit?.hard ?? null },
    goal: GOAL,
    runs: [],
  };
  const started = performance.now();
  const ctx = { offloop: bench.offloop, dir: bench.dir, template: path.join(bench.dir, 'template.db'), s3: null, raisedFdLimit: ownLimit?.hard ?? null };
  seedTemplate(ctx.template);
  const stores = [...sizes.map((n) => ({ store: 'folder', tenants: n })), ...(s3Tenants > 0 ? [{ store: 's3', tenants: s3Tenants }] : [])];
  let index = 0;
  try {
    for (const { store, tenants } of stores) {
      if (store === 's3' && !ctx.s3) ctx.s3 = await startS3();
      console.error(`${store}, ${tenants.toLocaleString('en-US')} tenants:`);
      if (libraries.has('offloop')) {
        const base = { replicator: 'offloop', driver: 'offloop', store, tenants };
        const first = await runConfiguration(ctx, { ...base, index: index++ }, PLAN.fdLimit);
        report.runs.push(first);
        if (PLAN.raise && PLAN.fdLimit !== null && first.stop?.reason === 'fds') {
          report.runs.push(await runConfiguration(ctx, { ...base, index: index++ }, null));
        }
      }
      if (libraries.has('litestream')) {
        const run = { replicator: 'litestream', driver: 'better-sqlite3', store, tenants, index: index++ };
        report.runs.push(await runConfiguration(ctx, run, PLAN.fdLimit));
      }
    }
  } finally {
    await ctx.s3?.stop();
    report.minutes = round((performance.now() - started) / 60_000, 1);
    bench.finish(report);
  }
  report.goals = goalResults(report);
  return report;
}

const saved = resultPath(`tenants.json${partial ? '.tmp' : ''}`);
const report = opts.render ? JSON.parse(fs.readFileSync(saved, 'utf8')) : await measure();
if (opts.render) report.goals = goalResults(report);
if (opts.json) {
  fs.writeFileSync(opts.json, `${JSON.stringify(report, null, 1)}\n`);
  console.log(markdown(report));
} else {
  await publish('tenants', report, markdown(report), chartSpec(report), partial);
}
