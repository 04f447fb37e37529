// TENANTS: one configuration of bench/tenants.mjs, in a child process of
// its own so that the threads, files, memory and CPU it counts are its
// own. The app of a server with a database per tenant: the files
// t0.db … t<N-1>.db of one folder (the parent seeded them), opened and read.
//
//  - offloop: every tenant opened with `Database.open` and its own replica
//    (a folder or S3, offloop's defaults otherwise), all kept open;
//  - better-sqlite3: the app beside a Litestream sidecar that the parent
//    started (and counts with this process). A synchronous
//    app cannot keep thousands of handles open, so it keeps the `--cache`
//    most recently used ones and opens the others on demand.
//
//   node bench/workloads/tenants-app.mjs --driver offloop|better-sqlite3 --dir D --tenants N
//        [--replica-dir R | --endpoint E --bucket B --prefix P]
//        [--settle-s 2] [--idle-s 10] [--reads 2000] [--in-flight 64] [--hot 64]
//        [--max-threads 4096] [--cache 100] [--rows 10] [--offloop DIR]
//
// Prints JSON lines: `{ event: 'opened', tenants }` while it opens, then
// `{ event: 'measure', phase }` at each point where the parent is to read
// this process (and the sidecar) from /proc: it waits for a line on stdin
// before it goes on. A process out of file descriptors cannot list its own
// /proc/self/fd; the parent can. The phases: baseline (before the first
// open), open (all open and replicated, settled), idle-start and idle-end
// (nothing asked in between: idle CPU, and the S3 requests the parent
// counts), read (after the reads), closed (a second after every close).
// Last comes `{ result }`. Opening stops at the first failure (too many
// open files, as a rule) or once the process holds more than
// `--max-threads` threads, a guard for the shared machine; every figure
// after that is of the tenants it reached, and the result says why it
// stopped.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';
import { processFigures } from '../lib/proc.mjs';
import { S3_KEYS, S3_REGION } from '../lib/s3-servers.mjs';
import { percentile, round, sorted } from '../lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    driver: { type: 'string' },
    dir: { type: 'string' },
    tenants: { type: 'string' },
    'replica-dir': { type: 'string' },
    endpoint: { type: 'string' },
    bucket: { type: 'string' },
    prefix: { type: 'string' },
    'settle-s': { type: 'string', default: '2' },
    'idle-s': { type: 'string', default: '10' },
    reads: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '64' },
    hot: { type: 'string', default: '64' },
    'max-threads': { type: 'string', default: '4096' },
    cache: { type: 'string', default: '100' },
    rows: { type: 'string', default: '10' },
    offloop: { type: 'string', default: ROOT },
  },
});
const DRIVER = opts.driver;
if (DRIVER !== 'offloop' && DRIVER !== 'better-sqlite3') throw new Error(`unknown --driver ${DRIVER}`);
const N = Number(opts.tenants);
const IN_FLIGHT = Number(opts['in-flight']);
const MAX_THREADS = Number(opts['max-threads']);
const READS = Number(opts.reads);
/**
 * Descriptors held back while opening and given back once it stops: a
 * process that ran out of them still needs a few to measure itself.
 */
const RESERVE_FDS = 32;
/** Rows in each tenant's table t, ids 1 to ROWS (the parent seeded them). */
const ROWS = Number(opts.rows);
const SQL = 'SELECT v FROM t WHERE id = ?';

const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const file = (i) => path.join(opts.dir, `t${i}.db`);
const randomRow = () => 1 + Math.floor(Math.random() * ROWS);

const answers = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** Has the parent read this process at `phase`, after a collection: garbage is not cost. */
async function measured(phase) {
  global.gc?.();
  await sleep(100);
  emit({ event: 'measure', phase });
  await answers.next();
}

function shuffled(n) {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Runs `readOne(tenant)` over `targets`, `IN_FLIGHT` at a time; latency from each call's start to its answer. */
async function readAll(targets, readOne) {
  const latencies = [];
  let errors = 0;
  let firstError = null;
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const tenant = targets[next++];
      const t0 = performance.now();
      try {
        await readOne(tenant);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors += 1;
        firstError ??= err.message;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { count: latencies.length, ...quantiles(latencies), errors, firstError };
}

function quantiles(ms) {
  const s = sorted(ms);
  return { p50: round(percentile(s, 0.5), 3), p99: round(percentile(s, 0.99), 3), max: round(s[s.length - 1] ?? NaN, 3) };
}

// ---------------------------------------------------------------------------
// The two apps: open(i) opens tenant i for the open phase, read(i) reads a
// row of it (opening it again if the app needs to), closeAll() closes all.

function offloopApp() {
  const { Database } = requireOffloop(opts.offloop);
  const dbs = [];
  const statements = new Map();
  const replica = (i) =>
    opts['replica-dir']
      ? { url: pathToFileURL(path.join(opts['replica-dir'], `t${i}`)).href }
      : { url: `s3://${opts.bucket}/${opts.prefix}/t${i}`, endpoint: opts.endpoint, region: S3_REGION, ...S3_KEYS, forcePathStyle: true };
  return {
    version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
    async open(i) {
      dbs.push(await Database.open(file(i), { replica: replica(i) }));
    },
    /** Waits for every replica to hold its database: idle means nothing left to upload. */
    async syncAll() {
      let errors = 0;
      let firstError = null;
      await readAll(
        dbs.map((_, i) => i),
        (i) =>
          dbs[i].syncReplica().catch((err) => {
            errors += 1;
            firstError ??= err.message;
          }),
      );
      return { errors, firstError };
    },
    async read(i) {
      let stmt = statements.get(i);
      if (!stmt) statements.set(i, (stmt = dbs[i].prepare(SQL)));
      return stmt.get(randomRow());
    },
    async closeAll() {
      const closed = await Promise.allSettled(dbs.map((db) => db.close()));
      return closed.filter((c) => c.status === 'rejected').length;
    },
    engineStats: () => (typeof Database.stats === 'function' ? Database.stats() : null),
  };
}

function betterSqlite3App() {
  const Database = benchRequire('better-sqlite3');
  const capacity = Number(opts.cache);
  // Insertion order is use order: the first entry is the least recently used.
  const open = new Map();
  let opens = 0;
  const handle = (i) => {
    let h = open.get(i);
    if (h) {
      open.delete(i);
    } else {
      const db = new Database(file(i));
      opens += 1;
      h = { db, stmt: null };
      if (open.size >= capacity) {
        const [lru, evicted] = open.entries().next().value;
        open.delete(lru);
        evicted.db.close();
      }
    }
    open.set(i, h);
    return h;
  };
  return {
    version: benchRequire('better-sqlite3/package.json').version,
    async open(i) {
      handle(i);
    },
    async syncAll() {
      return { errors: 0, firstError: null };
    },
    // A synchronous call answers when the event loop comes to it: a request
    // waits behind those that arrived first, as in a server.
    async read(i) {
      await yieldToLoop();
      const h = handle(i);
      h.stmt ??= h.db.prepare(SQL);
      return h.stmt.get(randomRow());
    },
    async closeAll() {
      for (const h of open.values()) h.db.close();
      open.clear();
      return 0;
    },
    engineStats: () => ({ cacheCapacity: capacity, handlesOpen: open.size, opens }),
  };
}

// ---------------------------------------------------------------------------

const app = DRIVER === 'offloop' ? offloopApp() : betterSqlite3App();
await measured('baseline');
const reserve = Array.from({ length: RESERVE_FDS }, () => fs.openSync('/dev/null', 'r'));

/** Opens tenants in turn until all are open, one fails, or the thread guard trips. */
async function openAll() {
  const openMs = [];
  let stop = null;
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    try {
      await app.open(i);
    } catch (err) {
      const outOfFds = /EMFILE|too many open files|os error 24/i.test(err.message);
      stop = { reason: outOfFds ? 'fds' : 'error', at: i, code: err.code ?? null, message: err.message };
      break;
    }
    openMs.push(performance.now() - t0);
    if (i % 16 === 15) {
      const { threads } = processFigures();
      if (threads !== null && threads > MAX_THREADS) {
        stop = { reason: 'guard', at: i + 1, threads, message: `${threads} threads, over the benchmark's guard of ${MAX_THREADS}` };
        break;
      }
    }
    if ((i + 1) % 100 === 0) emit({ event: 'opened', tenants: i + 1 });
  }
  return { openMs, stop, reached: openMs.length };
}

const opening = await openAll();
for (const fd of reserve) fs.closeSync(fd);
const { reached } = opening;
emit({ event: 'opened', tenants: reached, done: true });

const sync0 = performance.now();
const sync = reached ? await app.syncAll() : { errors: 0, firstError: null };
const firstSyncMs = performance.now() - sync0;

await sleep(Number(opts['settle-s']) * 1000);
await measured('open');

await measured('idle-start');
const idle0 = performance.now();
await sleep(Number(opts['idle-s']) * 1000);
const idleSeconds = (performance.now() - idle0) / 1000;
await measured('idle-end');

// Cold: tenants untouched since they were opened, each read once.
const cold = await readAll(shuffled(reached).slice(0, Math.min(READS, reached)), (i) => app.read(i));
// Warm: a few tenants read just before, then read over and over.
const hot = shuffled(reached).slice(0, Math.min(Number(opts.hot), reached));
await readAll(hot, (i) => app.read(i));
const warm = await readAll(
  Array.from({ length: reached ? READS : 0 }, () => hot[Math.floor(Math.random() * hot.length)]),
  (i) => app.read(i),
);
await measured('read');
const engineStats = app.engineStats();

const close0 = performance.now();
const closeErrors = await app.closeAll();
const closeMs = performance.now() - close0;
await sleep(1000);
await measured('closed');

emit({
  result: {
    driver: DRIVER,
    version: app.version,
    node: process.version,
    tenantsAsked: N,
    tenantsReached: reached,
    stop: opening.stop,
    openMs: { count: opening.openMs.length, ...quantiles(opening.openMs) },
    firstSync: { ms: round(firstSyncMs, 0), ...sync },
    idleSeconds: round(idleSeconds, 2),
    reads: { inFlight: IN_FLIGHT, hotTenants: hot.length, cold, warm },
    engineStats,
    close: { ms: round(closeMs, 0), errors: closeErrors },
  },
});
process.exit(0);
