// Opening a database through the sqlite3 API, measured in one process: open
// an existing file, read one row, close, again and again, one database at a
// time; each phase's latency is recorded (from the call to its callback).
// What it measures is the start of a new connection, which decides how two
// connections to one file race (a second connection's first statement
// comes after its open).
//
//   node bench/workloads/sqlite3-open.mjs --peer sqlite3|offloop --file <db>
//                                         [--count N] [--offloop <package dir>]
//
// The file exists, in WAL mode, with one small table. It never writes, and
// it leaves the file as it found it. Prints one JSON line.

import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ROOT, benchRequire } from '../lib/paths.mjs';
import { percentile, round, sorted } from '../lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    count: { type: 'string', default: '1000' },
    offloop: { type: 'string', default: ROOT },
  },
});

// Opens before the measured ones: the first loads code and warms caches.
const WARMUP = 50;

const sqlite3 =
  opts.peer === 'sqlite3'
    ? benchRequire('sqlite3')
    : createRequire(path.join(opts.offloop, 'package.json'))(path.join(opts.offloop, 'adapters', 'sqlite3', 'index.js'));

/** One round: [open, get, close, all three] in ms. */
function openGetClose() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const db = new sqlite3.Database(opts.file, (err) => {
      if (err) return reject(err);
      const t1 = performance.now();
      db.get('SELECT v FROM t WHERE id = ?', 1, (err2, row) => {
        if (err2 || row?.v !== 'one') return reject(err2 ?? new Error('wrong row'));
        const t2 = performance.now();
        db.close((err3) => {
          if (err3) return reject(err3);
          const t3 = performance.now();
          resolve([t1 - t0, t2 - t1, t3 - t2, t3 - t0]);
        });
      });
    });
  });
}

for (let i = 0; i < WARMUP; i++) await openGetClose();
const samples = [];
for (let i = 0; i < Number(opts.count); i++) samples.push(await openGetClose());
const summary = (index) => {
  const s = sorted(samples.map((x) => x[index]));
  return { p50: round(percentile(s, 0.5), 3), p99: round(percentile(s, 0.99), 3) };
};
console.log(JSON.stringify({ peer: opts.peer, count: samples.length, openMs: summary(0), getMs: summary(1), closeMs: summary(2), totalMs: summary(3) }));
