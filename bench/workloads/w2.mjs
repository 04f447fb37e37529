// W2, the classic five: one child process, one peer, on a copy of the
// database bench/classic.mjs built.
//
//   node bench/workloads/w2.mjs --peer <name> --file <db> --cells <list> [--ms 1000]
//                               [--in-flight 64] [--offloop <package dir>]
//
// `cells` is a comma-separated list of `task:mode` (see TASKS and MODES
// below; e.g. `get:awaited,all:inflight`). Each cell runs for `ms` after a
// short warm-up and reports operations, rows returned, the JS thread's
// busy time (`performance.eventLoopUtilization()`) and the process's CPU
// time (every thread). Prints one JSON line.
//
// Libraries: better-sqlite3, libsql (its better-sqlite3-compatible API),
// node:sqlite (Node ≥ 22.5, and Deno), bun:sqlite (Bun): synchronous, run
// in a tight loop; sqlite3 (callbacks on libuv's pool) and offloop:
// asynchronous, either awaited one at a time or with IN_FLIGHT calls
// outstanding. It runs in Node, and in Bun and Deno for bench/runtimes.mjs
// (where event-loop utilisation reads 0: both answer it with a stub).

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';


const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    offloop: { type: 'string', default: ROOT },
    cells: { type: 'string' },
    ms: { type: 'string', default: '1000' },
    'warmup-ms': { type: 'string', default: '200' },
    'in-flight': { type: 'string', default: '64' },
  },
});
const CELL_MS = Number(opts.ms);
const WARMUP_MS = Number(opts['warmup-ms']);
const IN_FLIGHT = Number(opts['in-flight']);

// The seed table bench/classic.mjs builds: 10,000 rows, ids 1..10,000.
const ROWS = 10_000;
const PAGE = 100;
const CACHE_SIZE = -16000;

const GET = 'SELECT * FROM t WHERE rowid = ?';
const ALL = `SELECT * FROM t WHERE rowid >= ? LIMIT ${PAGE}`;
const INSERT = 'INSERT INTO w(nul, integer, real, text, blob) VALUES (?, ?, ?, ?, ?)';

// Arguments cycle through the table in a fixed stride, the same for every
// peer: a different row each call, all of them in the page cache.
let cursor = 0;
const nextId = () => 1 + ((cursor = (cursor + 7919) % ROWS));
const nextPage = () => 1 + ((cursor = (cursor + 7919) % (ROWS - PAGE)));
const ROW = [null, 123456789, 3.14159, 'The quick brown fox jumps over the lazy dog', new Uint8Array(16).fill(7)];
const ROWS_100 = Array.from({ length: PAGE }, () => ROW);

/** A package's version (some do not export their package.json). */
function packageVersion(name) {
  let dir = path.dirname(benchRequire.resolve(name));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
}

// Each adapter returns `{ version, sqliteVersion, settings, tasks, close }`.
// A task takes no argument and returns the number of rows it returned (a
// promise for the asynchronous peers); `tasks[name]` may be missing
// where a peer has no such call.
/**
 * The W2 tasks every synchronous driver runs alike, given its prepared
 * statements (better-sqlite3's, libsql's, node:sqlite's and bun:sqlite's
 * have the same get/all/iterate/run): get one row, all() and iterate 100,
 * insert one. Each returns the rows it read.
 */
function readAndInsertTasks(get, all, insert) {
  return {
    get: () => (get.get(nextId()) ? 1 : 0),
    all: () => all.all(nextPage()).length,
    iterate: () => {
      let n = 0;
      for (const row of all.iterate(nextPage())) if (row) n += 1;
      return n;
    },
    insert: () => (insert.run(...ROW), 0),
  };
}

const adapters = {
  'better-sqlite3': () => betterSqlite3Like(benchRequire('better-sqlite3'), packageVersion('better-sqlite3')),
  libsql: () => betterSqlite3Like(benchRequire('libsql'), packageVersion('libsql')),

  async 'node:sqlite'() {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(opts.file);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = ${CACHE_SIZE}`);
    const get = db.prepare(GET);
    const all = db.prepare(ALL);
    const insert = db.prepare(INSERT);
    const pragma = (p) => Object.values(db.prepare(`PRAGMA ${p}`).get())[0];
    return {
      version: runtime().version,
      sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
      settings: { journal_mode: pragma('journal_mode'), synchronous: pragma('synchronous'), cache_size: pragma('cache_size') },
      sync: true,
      tasks: {
        ...readAndInsertTasks(get, all, insert),
        'insert100-transaction': () => {
          db.exec('BEGIN');
          try {
            for (const r of ROWS_100) insert.run(...r);
            db.exec('COMMIT');
          } catch (err) {
            db.exec('ROLLBACK');
            throw err;
          }
          return 0;
        },
      },
      close: () => db.close(),
    };
  },

  async 'bun:sqlite'() {
    const { Database } = await import('bun:sqlite');
    const db = new Database(opts.file);
    for (const p of ['journal_mode = WAL', 'synchronous = NORMAL', `cache_size = ${CACHE_SIZE}`]) db.exec(`PRAGMA ${p}`);
    const get = db.prepare(GET);
    const all = db.prepare(ALL);
    const insert = db.prepare(INSERT);
    const insert100 = db.transaction((rows) => {
      for (const r of rows) insert.run(...r);
    });
    const pragma = (p) => Object.values(db.prepare(`PRAGMA ${p}`).get())[0];
    return {
      version: process.versions.bun,
      sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
      settings: { journal_mode: pragma('journal_mode'), synchronous: pragma('synchronous'), cache_size: pragma('cache_size') },
      sync: true,
      tasks: { ...readAndInsertTasks(get, all, insert), 'insert100-transaction': () => (insert100(ROWS_100), 0) },
      close: () => db.close(),
    };
  },

  async sqlite3() {
    const sqlite3 = benchRequire('sqlite3');
    const db = await new Promise((resolve, reject) => {
      const d = new sqlite3.Database(opts.file, (err) => (err ? reject(err) : resolve(d)));
    });
    const p =
      (fn) =>
      (...args) =>
        new Promise((resolve, reject) => fn(...args, (err, v) => (err ? reject(err) : resolve(v))));
    const exec = p(db.exec.bind(db));
    await exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = ${CACHE_SIZE}`);
    const dbGet = p(db.get.bind(db));
    const pragma = async (name) => Object.values(await dbGet(`PRAGMA ${name}`))[0];
    const get = db.prepare(GET);
    const all = db.prepare(ALL);
    const insert = db.prepare(INSERT);
    const getP = p(get.get.bind(get));
    const allP = p(all.all.bind(all));
    const runP = p(insert.run.bind(insert));
    return {
      version: packageVersion('sqlite3'),
      sqliteVersion: (await dbGet('SELECT sqlite_version() AS v')).v,
      settings: { journal_mode: await pragma('journal_mode'), synchronous: await pragma('synchronous'), cache_size: await pragma('cache_size') },
      sync: false,
      tasks: {
        get: async () => ((await getP(nextId())) ? 1 : 0),
        all: async () => (await allP(nextPage())).length,
        // each() calls back once per row, then once at the end.
        iterate: () =>
          new Promise((resolve, reject) => {
            let n = 0;
            all.each(
              nextPage(),
              (err, row) => {
                if (!err && row) n += 1;
              },
              (err) => (err ? reject(err) : resolve(n)),
            );
          }),
        insert: async () => (await runP(...ROW), 0),
        // Queued in order on the one connection; only the COMMIT is awaited.
        'insert100-transaction': () =>
          new Promise((resolve, reject) => {
            db.serialize(() => {
              db.run('BEGIN');
              for (const r of ROWS_100) insert.run(...r);
              db.run('COMMIT', (err) => (err ? reject(err) : resolve(0)));
            });
          }),
      },
      close: () => new Promise((resolve) => get.finalize(() => all.finalize(() => insert.finalize(() => db.close(resolve))))),
    };
  },

  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { cacheSize: CACHE_SIZE, strictSettings: true });
    const s = await db.settings();
    const get = db.prepare(GET);
    const all = db.prepare(ALL);
    const insert = db.prepare(INSERT);
    const batch = ROWS_100.map((r) => [insert, r]);
    return {
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      sqliteVersion: Database.sqliteVersion,
      settings: {
        journal_mode: s.writer.journalMode,
        synchronous: s.writer.synchronous,
        cache_size: s.readers[0]?.cacheSize ?? s.writer.cacheSize,
        readers: s.readers.length,
      },
      sync: false,
      tasks: {
        get: async () => ((await get.get(nextId())) ? 1 : 0),
        all: async () => (await all.all(nextPage())).length,
        iterate: async () => {
          let n = 0;
          for await (const row of all.iterate(nextPage())) if (row) n += 1;
          return n;
        },
        insert: async () => (await insert.run(...ROW), 0),
        // 100 rows three ways: one awaited call each (100 autocommits);
        // one db.batch() (one message, one transaction); a
        // db.transaction() whose callback awaits 100 tx calls.
        'insert100-calls': async () => {
          for (const r of ROWS_100) await insert.run(...r);
          return 0;
        },
        'insert100-batch': async () => (await db.batch(batch), 0),
        'insert100-transaction': async () => {
          await db.transaction(async (tx) => {
            const ins = tx.prepare(INSERT);
            for (const r of ROWS_100) await ins.run(...r);
          });
          return 0;
        },
      },
      close: () => db.close(),
    };
  },
};

async function betterSqlite3Like(Database, version) {
  const db = new Database(opts.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`cache_size = ${CACHE_SIZE}`);
  const get = db.prepare(GET);
  const all = db.prepare(ALL);
  const insert = db.prepare(INSERT);
  const insert100 = db.transaction((rows) => {
    for (const r of rows) insert.run(...r);
  });
  const pragma = (p) => db.pragma(p, { simple: true });
  return {
    version,
    sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
    settings: { journal_mode: pragma('journal_mode'), synchronous: pragma('synchronous'), cache_size: pragma('cache_size') },
    sync: true,
    tasks: { ...readAndInsertTasks(get, all, insert), 'insert100-transaction': () => (insert100(ROWS_100), 0) },
    close: () => db.close(),
  };
}

// ---------------------------------------------------------------------------
// Running one cell

const cpuMs = (u) => (u.user + u.system) / 1000;

// The JS thread's own CPU time (the main thread's id is the process id),
// in ms; null where /proc has no schedstat. Unlike event-loop utilisation,
// it does not count the time the thread was runnable but waiting for a
// core, which on a busy 2-core machine is much of it.
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
function jsThreadCpuMs() {
  try {
    return Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** A synchronous task in a tight loop until `ms` passed. */
function loopSync(task, ms) {
  const end = performance.now() + ms;
  let ops = 0;
  let rows = 0;
  do {
    for (let i = 0; i < 16; i++) rows += task();
    ops += 16;
  } while (performance.now() < end);
  return Promise.resolve({ ops, rows });
}

/** An asynchronous task, `inFlight` callers each awaiting one call at a time. */
async function loopAsync(task, ms, inFlight) {
  const end = performance.now() + ms;
  let ops = 0;
  let rows = 0;
  const caller = async () => {
    while (performance.now() < end) {
      const n = await task();
      rows += n;
      ops += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, caller));
  return { ops, rows };
}

const MODES = {
  sync: (task, ms) => loopSync(task, ms),
  awaited: (task, ms) => loopAsync(task, ms, 1),
  inflight: (task, ms) => loopAsync(task, ms, IN_FLIGHT),
};

async function runCell(db, name, mode) {
  const task = db.tasks[name];
  if (!task) throw new Error(`${opts.peer} has no task ${name}`);
  const loop = MODES[mode];
  await loop(task, WARMUP_MS);
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const js0 = jsThreadCpuMs();
  const t0 = performance.now();
  const { ops, rows } = await loop(task, CELL_MS);
  const wallMs = performance.now() - t0;
  const js1 = jsThreadCpuMs();
  const cpu = cpuMs(process.cpuUsage(cpu0));
  const elu = performance.eventLoopUtilization(elu0);
  // Let the event loop settle between cells (timers, deferred frees).
  await new Promise((resolve) => setTimeout(resolve, 20));
  return {
    task: name,
    mode,
    ops,
    rows,
    wallMs,
    // A synchronous loop that never yields keeps the event loop busy for
    // the whole cell (ELU cannot see into a loop iteration that never ends).
    jsBusyMs: mode === 'sync' ? wallMs : elu.active,
    eventLoopUtilization: elu.utilization,
    jsThreadCpuMs: js0 === null || js1 === null ? null : js1 - js0,
    processCpuMs: cpu,
  };
}

/** The runtime this runs in and its version (Bun and Deno also set `process.version`, to the Node they stand in for). */
function runtime() {
  if (process.versions.bun) return { name: 'bun', version: process.versions.bun };
  if (process.versions.deno) return { name: 'deno', version: process.versions.deno };
  return { name: 'node', version: process.versions.node };
}

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();
const cells = [];
for (const spec of opts.cells.split(',')) {
  const [name, mode] = spec.split(':');
  cells.push(await runCell(db, name, mode));
}
await db.close();

console.log(
  JSON.stringify({
    pid: process.pid,
    node: process.version,
    runtime: runtime(),
    peer: opts.peer,
    version: db.version,
    sqliteVersion: db.sqliteVersion,
    settings: db.settings,
    inFlight: IN_FLIGHT,
    cellMs: CELL_MS,
    // Everything this process used, start-up included: the parent tells
    // other work on the machine from it.
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage()),
    cells,
  }),
);
