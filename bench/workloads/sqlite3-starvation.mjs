// The libuv thread-pool starvation the sqlite3 package causes, measured in
// one process: four slow queries kept in flight (each one issued again as
// soon as it ends) while `fs.readFile` of a small file runs in a loop, one
// read at a time; the reads' latencies are recorded.
//
//   node bench/workloads/sqlite3-starvation.mjs --peer none|sqlite3|offloop --file <db>
//                                             [--duration S] [--offloop <package dir>] [--thread-nice N]
//
// `none` runs the reads alone. sqlite3 runs each query on libuv's pool
// (4 threads by default), the pool fs.readFile needs too; offloop/sqlite3
// runs them on offloop's own threads (at nice N with --thread-nice, so that
// the event loop gets a core first). Prints one JSON line.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ROOT, benchRequire } from '../lib/paths.mjs';
import { percentile, round, sorted } from '../lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    duration: { type: 'string', default: '5' },
    offloop: { type: 'string', default: ROOT },
    'thread-nice': { type: 'string', default: '0' },
  },
});

const IN_FLIGHT = 4;
// A recursive count that takes SQLite a good fraction of a second.
const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c';
const SLOW_ROWS = 300_000;

function open() {
  if (opts.peer === 'none') return null;
  const sqlite3 =
    opts.peer === 'sqlite3'
      ? benchRequire('sqlite3')
      : createRequire(path.join(opts.offloop, 'package.json'))(path.join(opts.offloop, 'adapters', 'sqlite3', 'index.js'));
  const options = opts.peer === 'offloop' ? [{ threadNice: Number(opts['thread-nice']) }] : [];
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(opts.file, ...options, (err) => (err ? reject(err) : resolve(db)));
  });
}

const db = await open();
const small = path.join(path.dirname(opts.file), 'small.txt');
fs.writeFileSync(small, 'x'.repeat(512));

let running = true;
let queries = 0;
const queryMs = [];
function slowQuery() {
  const started = performance.now();
  db.get(SLOW, SLOW_ROWS, (err) => {
    if (err) throw err;
    queries += 1;
    queryMs.push(performance.now() - started);
    if (running) slowQuery();
  });
}
if (db !== null) for (let i = 0; i < IN_FLIGHT; i++) slowQuery();

const reads = [];
const end = performance.now() + Number(opts.duration) * 1000;
while (performance.now() < end) {
  const started = performance.now();
  await fs.promises.readFile(small);
  reads.push(performance.now() - started);
}
running = false;
if (db !== null) await new Promise((resolve) => db.wait(() => db.close(resolve)));

const r = sorted(reads);
const q = sorted(queryMs);
console.log(
  JSON.stringify({
    peer: opts.peer,
    threadNice: Number(opts['thread-nice']),
    reads: reads.length,
    readMs: { p50: round(percentile(r, 0.5), 3), p99: round(percentile(r, 0.99), 3), max: round(r[r.length - 1], 1) },
    queries,
    queryMs: queries ? { p50: round(percentile(q, 0.5), 1) } : null,
  }),
);
