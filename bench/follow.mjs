// PR — following a replica (docs/performance.md, issue 21), in one run, an
// offloop follower (`follow`) beside `litestream restore -f` as the peer,
// both following the same replica at the same time, which an offloop
// primary in this process writes:
//
//  - lag: each commit's time from its acknowledgement on the primary to its
//    row being visible on each follower, at 1,000 commits/s, with
//    syncInterval and pollInterval (Litestream's -follow-interval) each
//    1000 ms and 100 ms; S3 (s3rver) through the simulated link (20 ms a
//    request, 100 MB/s: bench/lib/link.mjs), one link per follower, and a
//    local folder;
//  - requests per minute per follower, LIST and GET, busy (during the lag
//    run) and idle (after it), counted by each follower's link;
//  - the time from asking (`catchUp`) to a 1,000-page TXID applied, against
//    a 1-page one, from a folder;
//  - reader p99 on the offloop follower while it applies, against none
//    (not on the peer's file: see bench/workloads/follow-peer-watch.mjs);
//  - the first query of a paged follower (`restore: 'paged'`) at 16 MiB to
//    1 GiB (each size where the disk has room for it) through the link,
//    against the peer's, which must restore whole first.
//
//   npm run bench -- follow [--quick] [--max-load X]
//
// Writes bench/results/follow.{json,md,svg} (--quick: .tmp files, shorter
// runs, paged at 16 MiB only).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

import { startBenchmark } from './lib/harness.mjs';
import { startLink } from './lib/link.mjs';
import { litestreamEnv, litestreamS3Url } from './lib/litestream.mjs';
import { buildOrders, ORDER_BY_ID } from './lib/orders.mjs';
import { BENCH, benchRequire, requireOffloop } from './lib/paths.mjs';
import { epochNow } from './lib/replica-watch.mjs';
import { markdownTable, publish } from './lib/results.mjs';
import { S3_KEYS, S3_REGION, startS3rver } from './lib/s3-servers.mjs';
import { percentile, round, sorted } from './lib/stats.mjs';
import { findTool, toolVersions } from './lib/tools.mjs';

const COMMAND = 'npm run bench -- follow';
const PEER_WATCH = path.join(BENCH, 'workloads', 'follow-peer-watch.mjs');
const BetterSqlite3 = benchRequire('better-sqlite3');
const BUCKET = 'bench';
const MiB = 1 << 20;
const LINK = { latencyMs: 20, bytesPerSecond: 100e6 };
const COMMITS_PER_SECOND = 1000;
const GOAL = { lagSlackMs: 250, idleListsPerMinute: 0, readerP99Ratio: 2, firstQueryMs: 300 };

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'max-load': { type: 'string', default: '1.0' },
  },
});
// A size needs about 2.5× its bytes of free disk (the database, and its
// replica's snapshot and first L0 file in s3rver's folder): each size is
// measured only where the disk has twice that free (the report names a
// size left out).
const freeBytes = () => {
  const f = fs.statfsSync(os.tmpdir());
  return f.bavail * f.bsize;
};
const PAGED_MIB = [16, 64, 256, 1024];
const roomFor = (mib) => freeBytes() > 2 * 2.5 * mib * MiB;
const PLAN = opts.quick
  ? { busyMs: 4000, idleMs: 10_000, applyRounds: 3, readerMs: 3000, pagedMiB: [16], pagedRounds: 2, peerPagedMiB: [16] }
  : { busyMs: 10_000, idleMs: 30_000, applyRounds: 5, readerMs: 5000, pagedMiB: PAGED_MIB, pagedRounds: 3, peerPagedMiB: [16, 64] };

const summary = (samples, digits = 1) => {
  const s = sorted(samples);
  return { n: s.length, p50: round(percentile(s, 0.5), digits), p99: round(percentile(s, 0.99), digits), max: round(s[s.length - 1] ?? NaN, digits) };
};

// ---------------------------------------------------------------------------
// Replicas and followers

/** Where a replica lives: an S3 prefix (reached through a link) or a folder. */
function replicaAt(ctx, kind, name) {
  if (kind === 'folder') {
    const dir = path.join(ctx.dir, `${name}-replica`);
    return { kind, url: pathToFileURL(dir).href, s3: {} };
  }
  return { kind, url: `s3://${BUCKET}/${name}`, s3: { endpoint: ctx.s3.endpoint, region: S3_REGION, ...S3_KEYS, forcePathStyle: true } };
}

/** A fresh link in front of the S3 server (null for a folder). */
const linkFor = (ctx, replica) => (replica.kind === 'folder' ? null : startLink({ target: ctx.s3.endpoint, ...LINK }));

/** Whether the file `out` answers a read on a connection of its own (better-sqlite3, opened and closed). */
function answers(out, sql = 'SELECT count(*) FROM sqlite_schema') {
  let db = null;
  try {
    db = new BetterSqlite3(out, { readonly: true, fileMustExist: true, timeout: 0 });
    db.prepare(sql).get();
    return true;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

/**
 * `litestream restore -f` into `out`; resolves once `out` answers a read,
 * to `{ watch(seen), stop() }`. Its file is read by opening it for each
 * read (bench/workloads/follow-peer-watch.mjs says why).
 */
async function startPeer(replica, link, out, intervalMs) {
  const url = replica.kind === 'folder' ? replica.url : litestreamS3Url({ endpoint: link.url, bucket: BUCKET, prefix: replica.url.split('/').slice(3).join('/') });
  const child = spawn(findTool('litestream'), ['restore', '-f', '-follow-interval', `${intervalMs}ms`, '-o', out, url], {
    env: litestreamEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const deadline = Date.now() + 600_000;
  while (!answers(out)) {
    if (child.exitCode !== null) throw new Error(`litestream restore -f exited: ${log}`);
    if (Date.now() > deadline) throw new Error(`litestream restore -f did not restore ${out}: ${log}`);
    await sleep(2);
  }
  /** Records when each id first showed in the file (`seen[id]`); returns `{ last(), stop() }`. */
  const watch = (seen) => {
    const worker = new Worker(PEER_WATCH, { workerData: { file: out } });
    let last = 0;
    worker.on('message', ({ maxId, at }) => {
      for (let id = last + 1; id <= maxId; id++) seen[id] = at;
      last = Math.max(last, maxId);
    });
    return {
      last: () => last,
      stop: async () => {
        const gone = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage('stop');
        await gone;
      },
    };
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
  };
  return { watch, stop, log: () => log };
}

/** An offloop follower of `replica` (through `link` for S3). */
function openFollower(ctx, replica, link, file, pollInterval, extra = {}) {
  const s3 = link === null ? {} : { ...replica.s3, endpoint: link.url };
  return ctx.Database.open(file, { follow: { url: replica.url, pollInterval, ...s3 }, ...extra });
}

/** Polls the offloop follower `db` every ms; records when each id first showed (`seen[id]`). */
function watch(db, seen) {
  let last = 0;
  let running = true;
  const read = db.prepare('SELECT coalesce(max(id), 0) AS m FROM events');
  const done = (async () => {
    while (running) {
      const { m } = await read.get();
      const now = epochNow();
      for (let id = last + 1; id <= m; id++) seen[id] = now;
      last = Math.max(last, m);
      await sleep(1);
    }
  })();
  return {
    last: () => last,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Commits one row at a time at COMMITS_PER_SECOND for `ms`; resolves to the ack times by id. */
async function commitAtRate(db, firstId, ms, ack) {
  const insert = db.prepare('INSERT INTO events(id, at, pad) VALUES (?, ?, randomblob(100))');
  const start = performance.now();
  let id = firstId;
  while (performance.now() - start < ms) {
    const due = start + ((id - firstId) * 1000) / COMMITS_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    await insert.run(id, Date.now());
    ack[id] = epochNow();
    id += 1;
  }
  return id - 1;
}

async function until(what, check, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
}

const perMinute = (n, ms) => round((n * 60_000) / ms, 1);

// ---------------------------------------------------------------------------
// Lag and requests

async function lagRun(ctx, kind, intervalMs) {
  const name = `lag-${kind}-${intervalMs}`;
  const replica = replicaAt(ctx, kind, name);
  const dir = fs.mkdtempSync(path.join(ctx.dir, `${name}-`));
  const primary = await ctx.Database.open(path.join(dir, 'primary.db'), {
    replica: { url: replica.url, ...replica.s3, syncInterval: intervalMs },
  });
  await primary.exec('CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER, pad BLOB)');
  await primary.syncReplica();
  const ours = await linkFor(ctx, replica);
  const theirs = await linkFor(ctx, replica);
  const follower = await openFollower(ctx, replica, ours, path.join(dir, 'follower.db'), intervalMs);
  const peer = await startPeer(replica, theirs, path.join(dir, 'peer.db'), intervalMs);
  const ack = [];
  const seen = { ours: [], theirs: [] };
  const watchers = { ours: watch(follower, seen.ours), theirs: peer.watch(seen.theirs) };
  ours?.reset();
  theirs?.reset();
  const statsBefore = follower.stats().follow.requests;
  const t0 = performance.now();
  const last = await commitAtRate(primary, 1, PLAN.busyMs, ack);
  await until('both followers hold every commit', () => watchers.ours.last() >= last && watchers.theirs.last() >= last);
  const busyMs = performance.now() - t0;
  const busy = { ours: ours?.counters() ?? null, theirs: theirs?.counters() ?? null, oursStats: diff(follower.stats().follow.requests, statsBefore) };
  await watchers.ours.stop();
  await watchers.theirs.stop();
  // Idle: nothing committed; only the followers' polling.
  ours?.reset();
  theirs?.reset();
  const idleBefore = follower.stats().follow.requests;
  await sleep(PLAN.idleMs);
  const idle = { ours: ours?.counters() ?? null, theirs: theirs?.counters() ?? null, oursStats: diff(follower.stats().follow.requests, idleBefore) };
  await peer.stop();
  await follower.close();
  await primary.close();
  await ours?.close();
  await theirs?.close();
  const lagOf = (s) => summary(ack.slice(1, last + 1).map((a, i) => s[i + 1] - a));
  const requests = (c, stats, ms) =>
    c === null
      ? stats && { list: perMinute(stats.list, ms), get: perMinute(stats.get, ms), counted: 'stats().follow' }
      : { list: perMinute(c.lists, ms), get: perMinute((c.byMethod.GET ?? 0) - c.lists, ms), other: perMinute(c.requests - (c.byMethod.GET ?? 0), ms), counted: 'link' };
  return {
    kind,
    intervalMs,
    commits: last,
    commitsPerSecond: round(last / (PLAN.busyMs / 1000), 0),
    lagMs: { offloop: lagOf(seen.ours), litestream: lagOf(seen.theirs) },
    lagGoalMs: 2 * intervalMs + GOAL.lagSlackMs,
    requestsPerMinute: {
      busy: { offloop: requests(busy.ours, busy.oursStats, busyMs), litestream: requests(busy.theirs, null, busyMs) },
      idle: { offloop: requests(idle.ours, idle.oursStats, PLAN.idleMs), litestream: requests(idle.theirs, null, PLAN.idleMs) },
    },
  };
}

const diff = (a, b) => ({ list: a.list - b.list, get: a.get - b.get });

// ---------------------------------------------------------------------------
// Applies and readers (folder replica: no link)

async function applyRun(ctx) {
  const replica = replicaAt(ctx, 'folder', 'apply');
  const dir = fs.mkdtempSync(path.join(ctx.dir, 'apply-'));
  const primary = await ctx.Database.open(path.join(dir, 'primary.db'), { replica: { url: replica.url, syncInterval: 60_000 } });
  // One row of 3,000 bytes a page: an update of every row rewrites about 1,000 pages.
  await primary.exec('CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER, pad BLOB)');
  await primary.exec('CREATE TABLE wide(id INTEGER PRIMARY KEY, v BLOB)');
  await primary.exec('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO wide SELECT i, randomblob(3000) FROM n');
  await primary.syncReplica();
  const follower = await openFollower(ctx, replica, null, path.join(dir, 'follower.db'), 60_000);
  const pages = [];
  follower.on('applied', (e) => pages.push(e.pages));
  const timed = async (sql) => {
    await primary.exec(sql);
    const { txid } = await primary.syncReplica();
    const t = performance.now();
    await follower.catchUp({ txid });
    const took = performance.now() - t;
    // The 'applied' event of that file comes on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    return took;
  };
  const out = { large: [], small: [], largePages: [], smallPages: [] };
  for (let i = 0; i < PLAN.applyRounds; i++) {
    out.large.push(await timed('UPDATE wide SET v = randomblob(3000)'));
    out.largePages.push(pages.at(-1));
    out.small.push(await timed(`UPDATE wide SET v = randomblob(3000) WHERE id = ${i + 1}`));
    out.smallPages.push(pages.at(-1));
  }
  await follower.close();
  await primary.close();
  return {
    largeMs: summary(out.large),
    smallMs: summary(out.small),
    largePages: Math.min(...out.largePages),
    smallPages: Math.max(...out.smallPages),
  };
}

/** One point query after another on `db` for `ms`: each one's latency. */
async function readLoop(db, ms, rows) {
  const read = db.prepare('SELECT * FROM wide WHERE id = ?');
  const out = [];
  const end = performance.now() + ms;
  let i = 0;
  while (performance.now() < end) {
    const t = performance.now();
    for (;;) {
      try {
        await read.get((i++ % rows) + 1);
        break;
      } catch (err) {
        if (!/SQLITE_BUSY|locked/.test(`${err.code} ${err.message}`)) throw err;
      }
    }
    out.push(performance.now() - t);
  }
  return out;
}

async function readerRun(ctx) {
  const replica = replicaAt(ctx, 'folder', 'readers');
  const quiet = replicaAt(ctx, 'folder', 'readers-unfollowed');
  const dir = fs.mkdtempSync(path.join(ctx.dir, 'readers-'));
  const open = (name, r) => ctx.Database.open(path.join(dir, name), { replica: { url: r.url, syncInterval: 100 } });
  // Two primaries with the same load: the followed one writes during the
  // applies, the other one (that nobody follows) during the baseline.
  const primaries = { followed: await open('primary.db', replica), other: await open('other.db', quiet) };
  for (const db of Object.values(primaries)) {
    await db.exec('CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER, pad BLOB)');
    await db.exec('CREATE TABLE wide(id INTEGER PRIMARY KEY, v BLOB)');
    await db.exec('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO wide SELECT i, randomblob(3000) FROM n');
    await db.syncReplica();
  }
  const follower = await openFollower(ctx, replica, null, path.join(dir, 'follower.db'), 100);
  let applied = 0;
  follower.on('applied', () => (applied += 1));
  const phase = async (writer) => {
    const ack = [];
    const first = (await writer.prepare('SELECT coalesce(max(id), 0) AS m FROM events').get()).m + 1;
    const writing = commitAtRate(writer, first, PLAN.readerMs, ack);
    const latencies = await readLoop(follower, PLAN.readerMs, 1000);
    await writing;
    return latencies;
  };
  const none = await phase(primaries.other);
  const before = applied;
  const during = await phase(primaries.followed);
  const appliesDuring = applied - before;
  await follower.close();
  for (const db of Object.values(primaries)) await db.close();
  return { appliesDuring, offloop: { noneMs: summary(none, 3), duringMs: summary(during, 3) } };
}

// ---------------------------------------------------------------------------
// The first query of a paged follower

async function pagedRun(ctx, mib) {
  const dir = fs.mkdtempSync(path.join(ctx.dir, `paged-${mib}-`));
  const source = path.join(dir, 'source.db');
  const built = await buildOrders(ctx.Database, source, mib * MiB);
  const replica = replicaAt(ctx, 's3', `paged-${mib}`);
  const db = await ctx.Database.open(source, { replica: { url: replica.url, ...replica.s3, compactionIntervals: [3_600_000] } });
  await db.syncReplica();
  await db.close();
  const ours = [];
  for (let i = 0; i < PLAN.pagedRounds; i++) {
    const link = await linkFor(ctx, replica);
    const file = path.join(dir, `follower-${i}.db`);
    const t = performance.now();
    const follower = await openFollower(ctx, replica, link, file, 1000, { restore: 'paged' });
    await follower.prepare(ORDER_BY_ID).get(1 + ((i * 7919) % built.rows));
    ours.push(performance.now() - t);
    await follower.close();
    await link.close();
  }
  let theirs = null;
  if (PLAN.peerPagedMiB.includes(mib)) {
    const link = await linkFor(ctx, replica);
    const t = performance.now();
    // Its first query can be answered once the whole file is restored.
    const peer = await startPeer(replica, link, path.join(dir, 'peer.db'), 1000);
    theirs = round(performance.now() - t, 0);
    await peer.stop();
    await link.close();
  }
  // Removed at the end of the run: a closed follower's fill thread syncs
  // the file and records its map as it ends, after close() resolved.
  fs.rmSync(source, { force: true });
  return { mib, bytes: built.bytes, offloopMs: summary(ours), litestreamMs: theirs };
}

// ---------------------------------------------------------------------------
// The report

const ms = (x) => (x === null || x === undefined || Number.isNaN(x) ? '–' : `${Math.round(x)}`);
const rpm = (r) => (r ? `${r.list} / ${r.get}` : 'not counted');

function report(r) {
  const lagRows = r.lag.map((l) => {
    const ok = l.lagMs.offloop.p99 <= l.lagGoalMs ? 'met' : 'missed';
    return [
      l.kind === 's3' ? 'S3 via link' : 'folder',
      `${l.intervalMs} / ${l.intervalMs}`,
      `${l.commitsPerSecond}`,
      `${ms(l.lagMs.offloop.p50)} / ${ms(l.lagMs.offloop.p99)}`,
      `${ms(l.lagMs.litestream.p50)} / ${ms(l.lagMs.litestream.p99)}`,
      `≤ ${l.lagGoalMs}: ${ok}`,
    ];
  });
  const reqRows = r.lag.map((l) => [
    l.kind === 's3' ? 'S3 via link' : 'folder',
    `${l.intervalMs}`,
    rpm(l.requestsPerMinute.busy.offloop),
    rpm(l.requestsPerMinute.busy.litestream),
    rpm(l.requestsPerMinute.idle.offloop),
    rpm(l.requestsPerMinute.idle.litestream),
    l.requestsPerMinute.idle.offloop && l.requestsPerMinute.idle.offloop.list === 0 && l.requestsPerMinute.idle.offloop.get <= 60_000 / l.intervalMs + 1 ? 'met' : 'missed',
  ]);
  const rd = r.readers;
  const ratio = (x) => round(x.duringMs.p99 / x.noneMs.p99, 2);
  const pagedRows = r.paged.map((p) => [
    `${p.mib} MiB`,
    `${ms(p.offloopMs.p50)} (max ${ms(p.offloopMs.max)})`,
    p.litestreamMs === null ? 'not run' : `${ms(p.litestreamMs)}`,
    p.offloopMs.max < GOAL.firstQueryMs ? 'met' : 'missed',
  ]);
  return [
    `# Following a replica: offloop \`follow\` beside \`litestream restore -f\``,
    '',
    `${r.date}, ${r.machine.cores} × ${r.machine.cpu}, Node ${r.machine.nodes.host}, offloop ${r.offloop.commit ?? ''}, Litestream ${r.tools.litestream}. ` +
      `A shared machine: other builds and tests ran beside this benchmark (CPU ${r.machine.cpuBusyPercentBeforeStart}% busy before it started, load average ${r.machine.loadAverageAtEnd?.[0]} at the end), so the figures are noisy; the peers ran side by side, following the same replica at the same time with the same intervals. ` +
      `S3 is s3rver on loopback, each follower behind its own link (${LINK.latencyMs} ms a request, ${LINK.bytesPerSecond / 1e6} MB/s); the folder is local. ` +
      'The primary (offloop, writing one row per commit) uploads straight to the server, not through a link.',
    '',
    `## Lag, commit to visible, at ${COMMITS_PER_SECOND} commits/s (ms, p50 / p99)`,
    '',
    markdownTable(
      [{ title: 'replica' }, { title: 'sync / poll ms' }, { title: 'commits/s' }, { title: 'offloop', align: 'right' }, { title: 'litestream -f', align: 'right' }, { title: 'goal (offloop p99)' }],
      lagRows,
    ),
    '',
    '## Requests per minute per follower (LIST / GET)',
    '',
    markdownTable(
      [{ title: 'replica' }, { title: 'poll ms' }, { title: 'offloop busy' }, { title: 'litestream busy' }, { title: 'offloop idle' }, { title: 'litestream idle' }, { title: 'goal: idle, no LIST, ≤ 1 per poll' }],
      reqRows,
    ),
    '',
    'On a folder a LIST is a directory read and a GET a file read: offloop counts its own (`stats().follow.requests`); Litestream\'s are not counted there.',
    '',
    '## Applying, and reading meanwhile (folder)',
    '',
    `- \`catchUp\` to a TXID that changed ${r.apply.largePages} pages (one GET of its L0 file, the apply, one GET that finds nothing newer): p50 ${ms(r.apply.largeMs.p50)} ms, max ${ms(r.apply.largeMs.max)} ms; to a TXID of at most ${r.apply.smallPages} pages: p50 ${round(r.apply.smallMs.p50, 1)} ms (${r.apply.largeMs.n} rounds each). Litestream's apply time is not measured (it reports none).`,
    `- Reader p99, one point query after another on the follower for ${PLAN.readerMs / 1000} s, while ${rd.appliesDuring} files were applied (its primary committing ${COMMITS_PER_SECOND}/s, syncInterval and pollInterval 100 ms) against none (another primary, that nobody follows, committing at the same rate): ${rd.offloop.duringMs.p99} ms against ${rd.offloop.noneMs.p99} ms (${ratio(rd.offloop)}×, goal ≤ ${GOAL.readerP99Ratio}×: ${ratio(rd.offloop) <= GOAL.readerP99Ratio ? 'met' : 'missed'}). Not measured on Litestream's file: a connection kept open on it stops Litestream from applying anything, so its readers open the file for each read.`,
    '',
    '## First query of a paged follower, through the link (ms from `Database.open` to the first row)',
    '',
    markdownTable([{ title: 'size' }, { title: 'offloop paged', align: 'right' }, { title: 'litestream -f (restores whole first)', align: 'right' }, { title: `goal < ${GOAL.firstQueryMs} ms` }], pagedRows),
    '',
    `Median (and max) of ${PLAN.pagedRounds} opens, each through a fresh link, in this process.` +
      r.pagedLeftOut.map((p) => ` ${p.mib} MiB was left out: the disk had ${p.freeMiB} MiB free.`).join(''),
    '',
    `Reproduce: \`${COMMAND}\`.`,
  ].join('\n');
}

function chartSpec(r) {
  const values = [];
  for (const l of r.lag) {
    for (const who of ['offloop', 'litestream']) {
      values.push({ setup: `${l.kind} ${l.intervalMs} ms`, follower: who, p99: l.lagMs[who].p99 });
    }
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Follower lag p99 at 1,000 commits/s (ms)',
    data: { values },
    mark: 'bar',
    encoding: {
      x: { field: 'setup', type: 'nominal', title: null },
      xOffset: { field: 'follower' },
      y: { field: 'p99', type: 'quantitative', title: 'ms' },
      color: { field: 'follower', type: 'nominal' },
    },
  };
}

// ---------------------------------------------------------------------------

const ctx0 = await startBenchmark({ label: 'follow', maxLoad: Number(opts['max-load']), tmpName: 'follow' });
const Database = requireOffloop(ctx0.offloop.dir).Database;
const s3 = await startS3rver({ dir: path.join(ctx0.dir, 's3rver'), buckets: [BUCKET] });
const ctx = { ...ctx0, Database, s3 };
const result = { ...ctx0.header, tools: await toolVersions(), plan: PLAN, link: LINK, lag: [], apply: null, readers: null, paged: [], pagedLeftOut: [] };
try {
  for (const kind of ['s3', 'folder']) {
    for (const interval of [1000, 100]) {
      console.error(`lag: ${kind}, ${interval} ms`);
      result.lag.push(await lagRun(ctx, kind, interval));
    }
  }
  console.error('apply');
  result.apply = await applyRun(ctx);
  console.error('readers');
  result.readers = await readerRun(ctx);
  for (const mib of PLAN.pagedMiB) {
    if (!roomFor(mib)) {
      console.error(`paged first query: ${mib} MiB left out, ${Math.round(freeBytes() / MiB)} MiB of disk free`);
      result.pagedLeftOut.push({ mib, freeMiB: Math.round(freeBytes() / MiB) });
      continue;
    }
    console.error(`paged first query: ${mib} MiB`);
    result.paged.push(await pagedRun(ctx, mib));
  }
} finally {
  await s3.stop();
}
// The last fills' final syncs end before the scratch folder goes.
await sleep(10_000);
ctx0.finish(result);
await publish('follow', result, report(result), chartSpec(result), opts.quick);
