// W4, reader scaling: one child process, one peer, one reader count, on
// a copy of the database bench/readers.mjs built.
//
//   node bench/workloads/w4.mjs --peer offloop|better-sqlite3 --file <db>
//                               [--readers 4] [--ms 3000] [--in-flight 8]
//                               [--offloop <package dir>]
//
// Runs a CPU-heavy read (a LIKE over every row of a 100,000-row table) for
// `ms` after a warm-up: better-sqlite3 in a loop, offloop with `in-flight`
// calls outstanding so every reader has work. Reports queries, wall time,
// and CPU time: the whole process's, and each thread's from
// /proc/self/task/*/schedstat, grouped by thread name. Prints one JSON line.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';
import { threadCpu, threadCpuSince } from '../lib/threads.mjs';


const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    readers: { type: 'string', default: '4' },
    ms: { type: 'string', default: '3000' },
    'warmup-ms': { type: 'string', default: '500' },
    'in-flight': { type: 'string', default: '8' },
    offloop: { type: 'string', default: ROOT },
  },
});
const READERS = Number(opts.readers);
const IN_FLIGHT = Number(opts['in-flight']);

// Large enough for the whole table (about 9 MB) on every connection, as in W2.
const CACHE_SIZE = -16000;
const QUERY = 'SELECT count(*) AS n, sum(length(text)) AS bytes FROM t WHERE text LIKE ?';
let seq = 0;
const nextPattern = () => `%dog ${seq++ % 10}%`;

const adapters = {
  async 'better-sqlite3'() {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(opts.file, { readonly: true });
    db.pragma(`cache_size = ${CACHE_SIZE}`);
    const q = db.prepare(QUERY);
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      readers: 1,
      run: async (ms) => {
        const end = performance.now() + ms;
        let n = 0;
        while (performance.now() < end) {
          q.get(nextPattern());
          n += 1;
        }
        return n;
      },
      close: () => db.close(),
    };
  },
  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { readers: READERS, cacheSize: CACHE_SIZE });
    const q = db.prepare(QUERY);
    return {
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      readers: (await db.settings()).readers.length,
      run: async (ms) => {
        const end = performance.now() + ms;
        let n = 0;
        const caller = async () => {
          while (performance.now() < end) {
            await q.get(nextPattern());
            n += 1;
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, caller));
        return n;
      },
      close: () => db.close(),
    };
  },
};

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();
await db.run(Number(opts['warmup-ms']));
const cpu0 = process.cpuUsage();
const threads0 = threadCpu();
const t0 = performance.now();
const queries = await db.run(Number(opts.ms));
const wallMs = performance.now() - t0;
const threads1 = threadCpu();
const cpu = process.cpuUsage(cpu0);
await db.close();

const perThread = threadCpuSince(threads0, threads1);
console.log(
  JSON.stringify({
    node: process.version,
    peer: opts.peer,
    version: db.version,
    readers: db.readers,
    inFlight: opts.peer === 'offloop' ? IN_FLIGHT : 1,
    queries,
    wallMs,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    // Everything this process used, start-up included: the parent tells
    // other work on the machine from it.
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage()),
    threadCpuMs: perThread,
  }),
);
