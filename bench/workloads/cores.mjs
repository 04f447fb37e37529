// The many-cores side by side (bench/cores.mjs): one child process, one
// peer, one query, one size of pool, on a copy of the database the parent
// built.
//
//   node bench/workloads/cores.mjs --peer better-sqlite3|b3-pool|offloop
//        --file <db> --query get|all|scan [--threads N] [--in-flight 64]
//        [--arrays] [--ms 2000] [--offloop <package dir>]
//
// `threads` is offloop's reader count or the pool's worker count. Runs the
// query for `ms` after a warm-up: better-sqlite3 in a loop on the JS
// thread; the pool and offloop with `in-flight` calls outstanding. Reports
// calls, rows, wall time, the JS thread's CPU and every thread's
// (schedstat), and the event loop's delay p99 while the calls ran (none
// for better-sqlite3, which holds the loop the whole time). One JSON line.

import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';
import { threadCpu, threadCpuSince } from '../lib/threads.mjs';

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    query: { type: 'string', default: 'get' },
    threads: { type: 'string', default: '4' },
    'in-flight': { type: 'string', default: '64' },
    arrays: { type: 'boolean', default: false },
    ms: { type: 'string', default: '2000' },
    'warmup-ms': { type: 'string', default: '500' },
    offloop: { type: 'string', default: ROOT },
  },
});
const THREADS = Number(opts.threads);
const IN_FLIGHT = Number(opts['in-flight']);

/** The three queries: `rows` is how many rows each call returns. */
const QUERIES = {
  get: { sql: 'SELECT nul, integer, real, text FROM small WHERE rowid = ?', method: 'get', rows: 1 },
  all: { sql: 'SELECT nul, integer, real, text FROM small WHERE rowid >= ? LIMIT 100', method: 'all', rows: 100 },
  scan: { sql: 'SELECT count(*) AS n, avg(real) AS a FROM small WHERE integer % 97 = ?', method: 'get', rows: 1 },
};
const query = QUERIES[opts.query];
if (!query) throw new Error(`unknown query ${opts.query}`);
const TABLE_ROWS = 100_000;
let seq = 0;
const nextArg = () => (opts.query === 'scan' ? seq++ % 97 : (seq++ % (TABLE_ROWS - 1000)) + 1);

// A pool of worker threads, each with its own better-sqlite3 connection:
// what a team that wants more than one core builds instead.
const POOL_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.file, { readonly: true });
const stmt = db.prepare(workerData.sql);
parentPort.on('message', ([id, arg]) => parentPort.postMessage([id, stmt[workerData.method](arg)]));
`;

const adapters = {
  async 'better-sqlite3'() {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(opts.file, { readonly: true });
    const stmt = db.prepare(query.sql);
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      blocksLoop: true,
      async run(ms) {
        const end = performance.now() + ms;
        let n = 0;
        while (performance.now() < end) {
          for (let k = 0; k < 16; k++) stmt[query.method](nextArg());
          n += 16;
        }
        return n;
      },
      close: () => db.close(),
    };
  },
  async 'b3-pool'() {
    const workerData = { betterSqlite3: benchRequire.resolve('better-sqlite3'), file: opts.file, sql: query.sql, method: query.method };
    const workers = Array.from({ length: THREADS }, () => new Worker(POOL_WORKER, { eval: true, workerData }));
    const pending = new Map();
    let nextId = 0;
    let turn = 0;
    for (const w of workers) {
      w.on('message', ([id, result]) => {
        pending.get(id)(result);
        pending.delete(id);
      });
    }
    const call = (arg) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        workers[turn++ % THREADS].postMessage([id, arg]);
      });
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      run: (ms) => inFlight(ms, call),
      close: () => Promise.all(workers.map((w) => w.terminate())),
    };
  },
  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { readers: THREADS, readOnly: true });
    const stmt = db.prepare(query.sql);
    if (opts.arrays) stmt.setReturnArrays(true);
    const method = stmt[query.method].bind(stmt);
    return {
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      run: (ms) => inFlight(ms, method),
      close: () => db.close(),
    };
  },
};

/** Keeps IN_FLIGHT calls outstanding for `ms`; the number of calls made. */
async function inFlight(ms, call) {
  const end = performance.now() + ms;
  let n = 0;
  const lane = async () => {
    while (performance.now() < end) {
      await call(nextArg());
      n += 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return n;
}

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();
await db.run(Number(opts['warmup-ms']));
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const threads0 = threadCpu();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const calls = await db.run(Number(opts.ms));
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const perThread = threadCpuSince(threads0);
delay.disable();
await db.close();

console.log(
  JSON.stringify({
    node: process.version,
    peer: opts.peer,
    version: db.version,
    query: opts.query,
    threads: opts.peer === 'better-sqlite3' ? 1 : THREADS,
    inFlight: opts.peer === 'better-sqlite3' ? 1 : IN_FLIGHT,
    arrays: opts.arrays,
    calls,
    rows: calls * query.rows,
    wallMs,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    jsCpuMs: perThread.js ?? null,
    threadCpuMs: perThread,
    loopDelayP99Ms: db.blocksLoop ? null : delay.percentile(99) / 1e6,
  }),
);
