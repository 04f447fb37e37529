// W1, the checkpoint stall: one child process, one peer, one pattern.
//
//   node bench/workloads/w1.mjs --peer <name> --pattern constant|bursts --dir <dir>
//                               [--checkpoint on|off] [--inserts 20000] [--offloop <package dir>]
//
// Libraries: node:sqlite (Node ≥ 22.5), better-sqlite3, offloop, and none
// (the same loop without a database: the event loop's own noise floor).
// Every peer runs WAL, synchronous=NORMAL, journal_size_limit 4 MiB and
// inserts a 2 KiB blob per statement into `t(id INTEGER PRIMARY KEY, b BLOB)`.
// Synchronous peers yield to the event loop after every statement, so
// the event-loop delay measures each statement's own blocking; offloop
// awaits each call. Prints one JSON line: the raw measurements.

import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';


const JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024;
const BLOB_BYTES = 2048;
const BURST = 200;
const PAUSE_MS = 150;
const LAG_INTERVAL_MS = 10;

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    pattern: { type: 'string', default: 'constant' },
    dir: { type: 'string' },
    checkpoint: { type: 'string', default: 'on' },
    inserts: { type: 'string', default: '20000' },
    offloop: { type: 'string', default: ROOT },
  },
});
const INSERTS = Number(opts.inserts);
const file = path.join(opts.dir, 'w1.db');

const PRAGMAS = ['journal_mode', 'synchronous', 'journal_size_limit', 'wal_autocheckpoint'];

// Each adapter opens the database with the W1 settings and creates the
// table. `insert(blob)` runs one statement (sync adapters return its
// result, offloop a promise); `settings()` reads back the pragmas on the
// connection that writes.
const adapters = {
  async 'node:sqlite'() {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const stmt = db.prepare('INSERT INTO t(b) VALUES (?)');
    return {
      sync: true,
      version: process.versions.node,
      sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
      insert: (blob) => stmt.run(blob),
      settings: () => Object.fromEntries(PRAGMAS.map((p) => [p, Object.values(db.prepare(`PRAGMA ${p}`).get())[0]])),
      count: () => db.prepare('SELECT count(*) AS n FROM t').get().n,
      close: () => db.close(),
    };
  },
  async 'better-sqlite3'() {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const stmt = db.prepare('INSERT INTO t(b) VALUES (?)');
    return {
      sync: true,
      version: benchRequire('better-sqlite3/package.json').version,
      sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
      insert: (blob) => stmt.run(blob),
      settings: () => Object.fromEntries(PRAGMAS.map((p) => [p, db.pragma(p, { simple: true })])),
      count: () => db.prepare('SELECT count(*) AS n FROM t').get().n,
      close: () => db.close(),
    };
  },
  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(file, {
      journalSizeLimit: JOURNAL_SIZE_LIMIT,
      checkpoint: opts.checkpoint !== 'off',
    });
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const stmt = db.prepare('INSERT INTO t(b) VALUES (?)');
    const settings = {};
    for (const p of PRAGMAS) settings[p] = Object.values(await db.prepare(`PRAGMA ${p}`).get())[0];
    return {
      sync: false,
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      sqliteVersion: Database.sqliteVersion,
      insert: (blob) => stmt.run(blob),
      settings: () => settings,
      count: async () => {
        const row = await db.prepare('SELECT count(*) AS n FROM t').get();
        // Anything but a row with a count is an offloop bug: show what came back.
        return typeof row?.n === 'number' ? row.n : `unexpected result ${describe(row)}`;
      },
      stats: () => db.stats(),
      close: () => db.close(),
    };
  },
  async none() {
    return {
      sync: true,
      version: null,
      sqliteVersion: null,
      insert: () => undefined,
      settings: () => ({}),
      count: () => INSERTS,
      close: () => undefined,
    };
  },
};

function describe(value) {
  try {
    return `${Object.prototype.toString.call(value)} ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`;
  } catch {
    return String(value);
  }
}

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();
const settings = await db.settings();
const blob = Buffer.alloc(BLOB_BYTES, 0xa5);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Event-loop lag over time: how late each 10 ms tick fires.
const lag = [];
const started = performance.now();
let lastTick = started;
const ticker = setInterval(() => {
  const now = performance.now();
  lag.push([Math.round(now - started), Math.max(0, now - lastTick - LAG_INTERVAL_MS)]);
  lastTick = now;
}, LAG_INTERVAL_MS);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();

const latency = new Float64Array(INSERTS);
for (let i = 0; i < INSERTS; i++) {
  const t0 = performance.now();
  if (db.sync) db.insert(blob);
  else await db.insert(blob);
  latency[i] = performance.now() - t0;
  if (db.sync) await new Promise(setImmediate);
  // Bursts of 200 with a 150 ms pause between them (none after the last).
  if (opts.pattern === 'bursts' && i % BURST === BURST - 1 && i !== INSERTS - 1) await sleep(PAUSE_MS);
}
const elapsedMs = performance.now() - started;
delay.disable();
clearInterval(ticker);

// The WAL right after the last write, before anything else may shrink it.
const walBytes = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
const checkpoint = db.stats ? db.stats().checkpoint : null;
const rows = await db.count();
const closeStarted = performance.now();
await db.close();
const closeMs = performance.now() - closeStarted;

const ms = (ns) => ns / 1e6;
console.log(
  JSON.stringify({
    pid: process.pid,
    node: process.version,
    peer: opts.peer,
    pattern: opts.pattern,
    checkpointer: opts.peer === 'offloop' ? opts.checkpoint : null,
    version: db.version,
    sqliteVersion: db.sqliteVersion,
    settings,
    inserts: INSERTS,
    rows,
    elapsedMs,
    closeMs,
    cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    walBytes,
    checkpoint,
    eventLoopDelay: {
      min: ms(delay.min),
      mean: ms(delay.mean),
      p99: ms(delay.percentile(99)),
      max: ms(delay.max),
      count: delay.count,
    },
    latency: Array.from(latency, (x) => Math.round(x * 1000) / 1000),
    lag: lag.map(([t, l]) => [t, Math.round(l * 1000) / 1000]),
  }),
);
