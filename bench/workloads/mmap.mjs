// mmap: one child process, one peer, one mmap_size, on a database that
// bench/mmap.mjs built.
//
//   node bench/workloads/mmap.mjs --peer offloop|better-sqlite3 --file <db>
//                                 --mmap <bytes> [--runs 7] [--lookups 20000]
//                                 [--in-flight 32] [--offloop <package dir>]
//
// Times, after one warm-up round, `runs` rounds of:
// - scan: one full scan of t (`SELECT count(*), sum(length(v)) FROM t`);
// - lookups: `lookups` indexed point lookups (`SELECT v FROM t WHERE k = ?`)
//   one after another (offloop awaits each);
// - offloop only: the same lookups with `in-flight` calls outstanding, so
//   the readers work in parallel.
// The keys are the same for every peer and run (a seeded generator).
// Prints one JSON line: the raw timings and the settings read back.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';


const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    mmap: { type: 'string', default: '0' },
    runs: { type: 'string', default: '7' },
    lookups: { type: 'string', default: '20000' },
    'in-flight': { type: 'string', default: '32' },
    offloop: { type: 'string', default: ROOT },
  },
});
const MMAP = Number(opts.mmap);
const RUNS = Number(opts.runs);
const LOOKUPS = Number(opts.lookups);
const IN_FLIGHT = Number(opts['in-flight']);

const SCAN = 'SELECT count(*) AS n, sum(length(v)) AS bytes FROM t';
const LOOKUP = 'SELECT v FROM t WHERE k = ?';

/** mulberry32: the same keys for every peer and run. */
function keys(rows, n, seed = 42) {
  let a = seed >>> 0;
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    const id = 1 + Math.floor(r * rows);
    // bench/mmap.mjs stores k = id * 2654435761 mod 2^32.
    out[i] = Number((BigInt(id) * 2654435761n) % 4294967296n);
  }
  return out;
}

const adapters = {
  async 'better-sqlite3'() {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(opts.file);
    db.pragma(`mmap_size = ${MMAP}`);
    const scan = db.prepare(SCAN);
    const lookup = db.prepare(LOOKUP);
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      sqliteVersion: db.prepare('SELECT sqlite_version() AS v').get().v,
      mmapInForce: { connection: db.pragma('mmap_size', { simple: true }) },
      scan: () => scan.get(),
      lookups: (ks) => {
        let found = 0;
        for (const k of ks) if (lookup.get(k) !== undefined) found += 1;
        return found;
      },
      close: () => db.close(),
    };
  },
  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { mmapSize: MMAP, strictSettings: true });
    const s = await db.settings();
    const scan = db.prepare(SCAN);
    const lookup = db.prepare(LOOKUP);
    return {
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      sqliteVersion: Database.sqliteVersion,
      mmapInForce: { writer: s.writer.mmapSize, readers: s.readers.map((r) => r.mmapSize) },
      scan: () => scan.get(),
      lookups: async (ks) => {
        let found = 0;
        for (const k of ks) if ((await lookup.get(k)) !== undefined) found += 1;
        return found;
      },
      lookupsInFlight: async (ks) => {
        let found = 0;
        let next = 0;
        const worker = async () => {
          while (next < ks.length) {
            const k = ks[next++];
            if ((await lookup.get(k)) !== undefined) found += 1;
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
        return found;
      },
      close: () => db.close(),
    };
  },
};

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();

async function timed(fn) {
  const t0 = performance.now();
  const result = await fn();
  return [performance.now() - t0, result];
}

const rows = (await db.scan()).n;
const ks = keys(rows, LOOKUPS);
// Warm-up: the OS page cache, SQLite's caches, offloop's learnt routes.
await db.scan();
await db.lookups(ks.slice(0, 1000));
if (db.lookupsInFlight) await db.lookupsInFlight(ks.slice(0, 1000));

const scanMs = [];
const lookupMs = [];
const lookupInFlightMs = [];
let found = 0;
for (let r = 0; r < RUNS; r++) {
  scanMs.push((await timed(() => db.scan()))[0]);
  const [ms, n] = await timed(() => db.lookups(ks));
  lookupMs.push(ms);
  found = n;
  if (db.lookupsInFlight) lookupInFlightMs.push((await timed(() => db.lookupsInFlight(ks)))[0]);
}
await db.close();

const round = (x) => Math.round(x * 1000) / 1000;
console.log(
  JSON.stringify({
    node: process.version,
    peer: opts.peer,
    version: db.version,
    sqliteVersion: db.sqliteVersion,
    mmapRequested: MMAP,
    mmapInForce: db.mmapInForce,
    rows,
    lookups: LOOKUPS,
    found,
    inFlight: db.lookupsInFlight ? IN_FLIGHT : null,
    scanMs: scanMs.map(round),
    lookupMs: lookupMs.map(round),
    lookupInFlightMs: lookupInFlightMs.map(round),
  }),
);
