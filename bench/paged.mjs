// PR — the paged restore (docs/performance.md, issue 15), in one run: for
// databases of 16 MiB, 64 MiB, 256 MiB and 1 GiB (bench/lib/orders.mjs),
// each replicated once to s3rver on loopback, and read back through a
// simulated link (20 ms per request, one shared 100 MB/s: bench/lib/link.mjs),
// a fresh one per measurement, each measurement in a fresh process:
//
//  - paged: `Database.open(out, { replica, restore: 'paged' })`, a random
//    order read as soon as it resolves (the first response), 20 more, then
//    `await db.filled` (bench/workloads/paged-open.mjs);
//  - `Database.open(out, { replica, restore: 'full' })` (the same child);
//  - `Database.restore(url, out)` (bench/workloads/replicate-restore.mjs);
//  - `litestream restore -o out <url>`;
//
// against the link's limit for the replica's bytes, with the link's
// counters sampled every millisecond to see what the open did and when.
//
//   npm run bench -- paged [--quick] [--max-load X]
//   npm run bench -- paged --render
//
// Writes bench/results/paged.{json,md,svg}. --quick (16 and 64 MiB, fewer
// rounds) writes them with a .tmp suffix (ignored by git). --render
// measures nothing: it redraws the Markdown and the chart from the saved
// JSON (with --quick, from the quick run's).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { runChild } from './lib/child.mjs';
import { startBenchmark } from './lib/harness.mjs';
import { startLink } from './lib/link.mjs';
import { bytesSeries, countersAt, idleStretches, recordLink, requestRounds } from './lib/link-timeline.mjs';
import { litestreamRestore, litestreamS3Url } from './lib/litestream.mjs';
import { runUndisturbed } from './lib/machine.mjs';
import { buildOrders, refundSome } from './lib/orders.mjs';
import { chartSpec, markdown } from './lib/paged-report.mjs';
import { BENCH, HOST_NODE, requireOffloop } from './lib/paths.mjs';
import { epochNow } from './lib/replica-watch.mjs';
import { publish, resultPath } from './lib/results.mjs';
import { S3_KEYS, S3_REGION, startS3rver } from './lib/s3-servers.mjs';
import { round } from './lib/stats.mjs';
import { processCpuSeconds, toolVersions } from './lib/tools.mjs';

const COMMAND = 'npm run bench -- paged';
const OPEN = path.join(BENCH, 'workloads', 'paged-open.mjs');
const RESTORE = path.join(BENCH, 'workloads', 'replicate-restore.mjs');
const BUCKET = 'bench';
const MiB = 1 << 20;
const LINK = { latencyMs: 20, bytesPerSecond: 100e6 };
/** Commits after the snapshot, each one L0 file, and the orders each refunds. */
const LATER_COMMITS = 3;
const ROWS_PER_COMMIT = 100;
/** Reads after the first response, one at a time, while the fill runs. */
const MORE_READS = 20;
// A measurement during which other processes used more than this share
// of the machine's CPU is run again, once.
const OTHER_LOAD_PERCENT = 15;
const MAX_ATTEMPTS = 2;
/** The goals, and the seed's figures they were set against. */
const GOAL = { firstResponseMs: 300, openFlatRatio: 1.2, filledOverLinkLimit: 1.2 };
const ANCHOR = { firstResponseMs: { 16: 335, 1024: 528 }, fullRestoreSeconds: { 16: 1.3, 1024: 64 } };

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'max-load': { type: 'string', default: '1.0' },
    render: { type: 'boolean', default: false },
  },
});
// Rounds per size: paged opens; full restores (offloop's and Litestream's);
// opens with restore: 'full'.
const PLAN = opts.quick
  ? { sizesMiB: [16, 64], paged: [3, 3], full: [1, 1], openFull: [1, 1] }
  : { sizesMiB: [16, 64, 256, 1024], paged: [5, 5, 3, 2], full: [3, 3, 2, 1], openFull: [1, 1, 1, 1] };

function scratch(parent, name) {
  return fs.mkdtempSync(path.join(parent, `${name}-`));
}

function sha256(file) {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** A small seeded generator (mulberry32): the same orders are read in every run of the benchmark. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------
// The replica

const LTX_KEY = /\/([0-9a-f]{4})\/([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/;

/** The replica's LTX files, listed straight from the S3 server. */
async function listReplica(endpoint, prefix) {
  const files = [];
  let token = null;
  do {
    const query = new URLSearchParams({ 'list-type': '2', prefix: `${prefix}/` });
    if (token) query.set('continuation-token', token);
    const res = await fetch(`${endpoint}/${BUCKET}?${query}`);
    const xml = await res.text();
    if (!res.ok) throw new Error(`listing ${prefix}: ${res.status} ${xml.slice(0, 200)}`);
    for (const entry of xml.split('<Contents>').slice(1)) {
      const m = LTX_KEY.exec(/<Key>([^<]*)<\/Key>/.exec(entry)?.[1] ?? '');
      if (!m) continue;
      const size = Number(/<Size>(\d+)<\/Size>/.exec(entry)[1]);
      files.push({ level: Number.parseInt(m[1], 16), minTxid: Number.parseInt(m[2], 16), maxTxid: Number.parseInt(m[3], 16), size });
    }
    token = /<IsTruncated>true<\/IsTruncated>/.test(xml) ? /<NextContinuationToken>([^<]*)</.exec(xml)[1] : null;
  } while (token);
  return files.sort((a, b) => a.level - b.level || a.minTxid - b.minTxid);
}

/**
 * What a restore of the latest state reads, for a replica this benchmark
 * made (one snapshot, then L0 files that each follow the one before): the
 * newest snapshot and the L0 files after it.
 */
function restorePlan(files) {
  const snapshot = files.filter((f) => f.level === 9).sort((a, b) => b.maxTxid - a.maxTxid)[0];
  if (!snapshot) throw new Error('the replica holds no snapshot');
  const plan = [snapshot];
  for (const f of files.filter((x) => x.level === 0 && x.minTxid > snapshot.maxTxid).sort((a, b) => a.minTxid - b.minTxid)) {
    if (f.minTxid !== plan[plan.length - 1].maxTxid + 1) throw new Error(`L0 file ${f.minTxid} does not follow TXID ${plan[plan.length - 1].maxTxid}`);
    plan.push(f);
  }
  return plan;
}

/**
 * Builds the database of about `mib` MiB and replicates it to `server`:
 * the first upload is one snapshot (L9, with the same image at L0), then
 * LATER_COMMITS commits, each synced on its own, add one L0 file each.
 */
async function makeSource(ctx, server, mib) {
  const dir = scratch(ctx.dir, `source-${mib}`);
  const file = path.join(dir, 'source.db');
  const t0 = performance.now();
  const built = await buildOrders(ctx.Database, file, mib * MiB);
  const buildSeconds = (performance.now() - t0) / 1000;
  const prefix = `orders-${mib}`;
  const t1 = performance.now();
  const replica = { url: `s3://${BUCKET}/${prefix}`, endpoint: server.endpoint, region: S3_REGION, ...S3_KEYS, compactionIntervals: [3_600_000] };
  const db = await ctx.Database.open(file, { replica });
  await db.syncReplica();
  for (let i = 0; i < LATER_COMMITS; i++) {
    await refundSome(db, built.rows, ROWS_PER_COMMIT);
    await db.syncReplica();
  }
  await db.close();
  const uploadSeconds = (performance.now() - t1) / 1000;
  fs.rmSync(`${file}-replica`, { recursive: true, force: true });
  const files = await listReplica(server.endpoint, prefix);
  const plan = restorePlan(files);
  return {
    mib,
    dir,
    file,
    prefix,
    rows: built.rows,
    bytes: fs.statSync(file).size,
    pageSize: built.pageSize,
    // After the close: opening it for replication made it a WAL database.
    sha: await sha256(file),
    buildSeconds: round(buildSeconds, 1),
    uploadSeconds: round(uploadSeconds, 1),
    files,
    plan,
    planBytes: plan.reduce((n, f) => n + f.size, 0),
  };
}

// ---------------------------------------------------------------------------
// One measurement

/** The link's limit for `bytes`: their transfer at the link's rate, plus one request's latency. */
const linkLimitSeconds = (bytes) => bytes / LINK.bytesPerSecond + LINK.latencyMs / 1000;

/**
 * Runs `body(link)` with a fresh link in front of `server`, its counters
 * sampled throughout, and the CPU of the S3 server and of this process
 * (the link) counted. Resolves to `{ run, points, counters, serverCpuSeconds, linkCpuSeconds }`.
 */
async function throughLink(server, body) {
  const link = await startLink({ target: server.endpoint, ...LINK });
  const server0 = processCpuSeconds(server.pid);
  const self0 = process.cpuUsage();
  const recorder = recordLink(link);
  try {
    const run = await body(link);
    const points = recorder.stop();
    const self = process.cpuUsage(self0);
    return {
      run,
      points,
      counters: link.counters(),
      serverCpuSeconds: processCpuSeconds(server.pid) - server0,
      linkCpuSeconds: (self.user + self.system) / 1e6,
    };
  } finally {
    recorder.stop();
    await link.close();
  }
}

function removeDatabase(out) {
  for (const f of [out, `${out}-wal`, `${out}-shm`, `${out}-paged`, `${out}.tmp`]) fs.rmSync(f, { force: true });
  fs.rmSync(`${out}-replica`, { recursive: true, force: true });
}

/** Checks the output against the source, then removes it. */
async function checkAndRemove(out, source) {
  try {
    return (await sha256(out)) === source.sha;
  } finally {
    removeDatabase(out);
  }
}

const ms = (x) => round(x, 1);

async function pagedOnce(ctx, server, source, { mode, ids }) {
  const out = path.join(source.dir, `${mode}.db`);
  // What a failed run before this one may have left.
  removeDatabase(out);
  const args = (link) => [OPEN, '--mode', mode, '--out', out, '--url', `s3://${BUCKET}/${source.prefix}`, '--endpoint', link.url, '--ids', ids.join(','), '--offloop', ctx.offloop.dir];
  const { run, points, counters, serverCpuSeconds, linkCpuSeconds } = await throughLink(server, async (link) => (await runChild(HOST_NODE, args(link), { timeoutMs: 600_000 })).result);
  const identical = await checkAndRemove(out, source);
  const at = (offsetMs) => run.startedAt + offsetMs;
  const limit = linkLimitSeconds(source.planBytes);
  // Every request made before the open resolved had its answer before it,
  // and an answer starts a latency after its request: half a latency
  // before the open, every such request has reached the link and no later
  // one has; half a latency after it, no later request's bytes have come.
  const beforeOpen = {
    requests: countersAt(points, at(run.openMs - LINK.latencyMs / 2)).requests,
    bytes: countersAt(points, at(run.openMs + LINK.latencyMs / 2)).bytes,
  };
  const firstByteAfterOpen = points.find((p) => p[0] > at(run.openMs) && p[2] > beforeOpen.bytes)?.[0] ?? NaN;
  // Paged: until every page is local; 'full': until the open resolved.
  const wholeMs = mode === 'paged' ? run.filledMs : run.openMs;
  const result = {
    kind: mode === 'paged' ? 'paged' : 'open-full',
    openMs: ms(run.openMs),
    firstResponseMs: ms(run.firstResponseMs),
    firstResponseAfterOpenMs: ms(run.firstResponseMs - run.openMs),
    readsMs: run.readsMs.map(ms),
    filledMs: ms(run.filledMs),
    closedMs: ms(run.closedMs),
    seconds: round(wholeMs / 1000, 3),
    linkLimitSeconds: round(limit, 3),
    overLinkLimit: round(wholeMs / 1000 / limit, 2),
    link: {
      atOpen: beforeOpen,
      atFirstResponse: countersAt(points, at(run.firstResponseMs)),
      atFilled: countersAt(points, at(run.filledMs)),
      total: { requests: counters.requests, bytes: counters.responseBytes, byMethod: counters.byMethod, errors: counters.errors },
      roundsBeforeOpen: requestRounds(points, run.startedAt, at(run.openMs)),
      roundsToFirstResponse: requestRounds(points, at(run.openMs), at(run.firstResponseMs)),
      firstRequestMs: ms(counters.firstRequestAt - run.startedAt),
      firstByteAfterOpenMs: ms(firstByteAfterOpen - at(run.openMs)),
      lastByteMs: ms(counters.lastByteAt - run.startedAt),
      idleDuringFill: Number.isFinite(firstByteAfterOpen) ? idleStretches(points, firstByteAfterOpen, counters.lastByteAt, 25) : null,
      bytesEvery100Ms: bytesSeries(points, run.startedAt, at(run.filledMs), 100),
    },
    restore: run.restore,
    offloopCpuSeconds: run.cpuSeconds,
    threadCpuMs: Object.fromEntries(Object.entries(run.threadCpuMs).map(([k, v]) => [k, Math.round(v)])),
    progress: run.progress,
    serverCpuSeconds: round(serverCpuSeconds, 2),
    linkCpuSeconds: round(linkCpuSeconds, 2),
    identicalToSource: identical,
    ids,
  };
  // The measured processes' CPU (measureOnce adds this one's).
  result.cpuSeconds = run.processCpuSeconds + serverCpuSeconds;
  return result;
}

async function restoreOnce(ctx, server, source, restorer) {
  const out = path.join(source.dir, `restored-${restorer}.db`);
  removeDatabase(out);
  const { run, points, counters, serverCpuSeconds, linkCpuSeconds } = await throughLink(server, async (link) => {
    if (restorer === 'offloop') {
      const args = [RESTORE, '--url', `s3://${BUCKET}/${source.prefix}`, '--endpoint', link.url, '--out', out, '--offloop', ctx.offloop.dir];
      return (await runChild(HOST_NODE, args, { timeoutMs: 600_000 })).result;
    }
    const startedAt = epochNow();
    const r = await litestreamRestore({ url: litestreamS3Url({ endpoint: link.url, bucket: BUCKET, prefix: source.prefix }), out, timeoutMs: 600_000 });
    return { ...r, startedAt };
  });
  const identical = await checkAndRemove(out, source);
  const limit = linkLimitSeconds(source.planBytes);
  return {
    kind: restorer === 'offloop' ? 'restore' : 'litestream',
    seconds: round(run.wallMs / 1000, 3),
    linkLimitSeconds: round(limit, 3),
    overLinkLimit: round(run.wallMs / 1000 / limit, 2),
    link: {
      total: { requests: counters.requests, bytes: counters.responseBytes, byMethod: counters.byMethod, errors: counters.errors },
      firstRequestMs: ms(counters.firstRequestAt - run.startedAt),
      afterLastByteMs: ms(run.startedAt + run.wallMs - counters.lastByteAt),
      idle: idleStretches(points, counters.firstRequestAt, counters.lastByteAt, 25),
    },
    restorerCpuSeconds: run.cpuSeconds === null ? null : round(run.cpuSeconds, 2),
    serverCpuSeconds: round(serverCpuSeconds, 2),
    linkCpuSeconds: round(linkCpuSeconds, 2),
    identicalToSource: identical,
    cpuSeconds: (run.cpuSeconds ?? 0) + serverCpuSeconds,
  };
}

/** Runs one measurement (again if other load disturbed it); a failure is recorded, not thrown. */
async function measureOnce(label, kind, once) {
  process.stderr.write(`    ${label} ... `);
  const result = await runUndisturbed(
    async () => {
      const self0 = process.cpuUsage();
      try {
        const result = await once();
        // runUndisturbed counts as other load whatever CPU the measured
        // processes did not use: this one (the link, the checksums) is theirs.
        const self = process.cpuUsage(self0);
        result.cpuSeconds += (self.user + self.system) / 1e6;
        return result;
      } catch (err) {
        return { kind, error: err.message };
      }
    },
    { attempts: MAX_ATTEMPTS, maxOtherLoad: OTHER_LOAD_PERCENT },
  );
  if (result.error) process.stderr.write(`FAILED: ${result.error}\n`);
  else if (result.kind === 'paged') process.stderr.write(`open ${result.openMs} ms, first response ${result.firstResponseMs} ms, every page local ${result.filledMs} ms (${result.overLinkLimit}× the link's limit)${result.identicalToSource ? '' : ', DIFFERENT'}\n`);
  else process.stderr.write(`${result.seconds} s (${result.overLinkLimit}× the link's limit)${result.identicalToSource ? '' : ', DIFFERENT'}\n`);
  return result;
}

// ---------------------------------------------------------------------------
// One size

async function measureSize(ctx, index) {
  const mib = PLAN.sizesMiB[index];
  console.error(`${mib} MiB`);
  const server = await startS3rver({ dir: scratch(ctx.dir, 's3rver'), buckets: [BUCKET] });
  let source = null;
  try {
    process.stderr.write('    building and replicating ... ');
    source = await makeSource(ctx, server, mib);
    process.stderr.write(`${source.rows} orders, ${(source.bytes / MiB).toFixed(1)} MiB, replica ${(source.planBytes / MiB).toFixed(1)} MiB in ${source.plan.length} files (built in ${source.buildSeconds} s, uploaded in ${source.uploadSeconds} s)\n`);
    const random = seeded(mib);
    const pickIds = () => Array.from({ length: 1 + MORE_READS }, () => 1 + Math.floor(random() * source.rows));
    const runs = [];
    const rounds = Math.max(PLAN.paged[index], PLAN.full[index], PLAN.openFull[index]);
    for (let r = 0; r < rounds; r++) {
      const note = (result) => runs.push({ round: r, ...result });
      if (r < PLAN.paged[index]) note(await measureOnce('paged open', 'paged', () => pagedOnce(ctx, server, source, { mode: 'paged', ids: pickIds() })));
      if (r < PLAN.full[index]) {
        const order = r % 2 === 0 ? ['offloop', 'litestream'] : ['litestream', 'offloop'];
        for (const restorer of order) {
          const label = restorer === 'offloop' ? 'Database.restore' : 'litestream restore';
          note(await measureOnce(label, restorer === 'offloop' ? 'restore' : 'litestream', () => restoreOnce(ctx, server, source, restorer)));
        }
      }
      if (r < PLAN.openFull[index]) note(await measureOnce("open with restore: 'full'", 'open-full', () => pagedOnce(ctx, server, source, { mode: 'full', ids: pickIds() })));
    }
    // Nothing was written through the restored databases: the replica
    // must be as it was.
    const after = await listReplica(server.endpoint, source.prefix);
    const { dir, file, sha, ...described } = source;
    return { ...described, linkLimitSeconds: round(linkLimitSeconds(source.planBytes), 3), replicaUnchanged: JSON.stringify(after) === JSON.stringify(source.files), runs };
  } finally {
    await server.stop();
    if (source) fs.rmSync(source.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------

async function measure() {
  const bench = await startBenchmark({ label: 'paged', maxLoad: Number(opts['max-load']), tmpName: 'paged' });
  const report = {
    benchmark: 'PR — paged restore',
    command: COMMAND,
    ...bench.header,
    tools: toolVersions(),
    s3rver: JSON.parse(fs.readFileSync(path.join(BENCH, 'node_modules', 's3rver', 'package.json'), 'utf8')).version,
    plan: { ...PLAN, quick: opts.quick, laterCommits: LATER_COMMITS, rowsPerCommit: ROWS_PER_COMMIT, moreReads: MORE_READS },
    link: LINK,
    goal: GOAL,
    anchor: ANCHOR,
    sizes: [],
  };
  const started = performance.now();
  const ctx = { offloop: bench.offloop, dir: bench.dir, Database: requireOffloop(bench.offloop.dir).Database };
  try {
    for (let i = 0; i < PLAN.sizesMiB.length; i++) report.sizes.push(await measureSize(ctx, i));
  } finally {
    report.minutes = round((performance.now() - started) / 60_000, 1);
    bench.finish(report);
  }
  return report;
}

const saved = resultPath(`paged.json${opts.quick ? '.tmp' : ''}`);
const report = opts.render ? JSON.parse(fs.readFileSync(saved, 'utf8')) : await measure();
await publish('paged', report, markdown(report), chartSpec(report), opts.quick);
