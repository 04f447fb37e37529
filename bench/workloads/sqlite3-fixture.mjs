// node-sqlite3's own fixture workload (its test suite builds its big
// database this way), in one process: inside one `db.serialize()`, CREATE
// TABLE, BEGIN, one prepared INSERT run N times from one synchronous loop
// (each with an integer and a random text of 0-100 characters built one
// character at a time), finalize, COMMIT, then close. Every call is queued
// before the first one runs, so this measures how a driver holds and
// drains a long queue. It reports the wall time from the open to the
// close's callback and the process's peak RSS; it never checks results
// beyond the callbacks' errors.
//
//   node bench/workloads/sqlite3-fixture.mjs --peer sqlite3|offloop --file <db> [--calls N] [--offloop <package dir>]
//
// Prints one JSON line.

import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ROOT, benchRequire } from '../lib/paths.mjs';

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    calls: { type: 'string', default: '200000' },
    offloop: { type: 'string', default: ROOT },
  },
});
const CALLS = Number(opts.calls);

const sqlite3 =
  opts.peer === 'sqlite3'
    ? benchRequire('sqlite3')
    : createRequire(path.join(opts.offloop, 'package.json'))(path.join(opts.offloop, 'adapters', 'sqlite3', 'index.js'));

// As node-sqlite3's fixture makes its text: one character at a time.
const CHARS = 'abcdefghijklmnopqrstuvwxzyABCDEFGHIJKLMNOPQRSTUVWXZY0123456789  ';
function randomString() {
  let str = '';
  for (let i = Math.random() * 100; i > 0; i--) str += CHARS[Math.floor(Math.random() * CHARS.length)];
  return str;
}

const failed = (err) => {
  if (err) {
    console.error(err);
    process.exit(1);
  }
};

const started = performance.now();
let loopMs = 0;
const db = new sqlite3.Database(opts.file, failed);
db.serialize(() => {
  db.run('CREATE TABLE foo (id INT, txt TEXT)', failed);
  db.run('BEGIN TRANSACTION', failed);
  const stmt = db.prepare('INSERT INTO foo VALUES(?, ?)', failed);
  for (let i = 0; i < CALLS; i++) stmt.run(i, randomString());
  stmt.finalize();
  db.run('COMMIT TRANSACTION', failed);
  loopMs = performance.now() - started;
});
db.close((err) => {
  failed(err);
  const ms = performance.now() - started;
  console.log(
    JSON.stringify({
      peer: opts.peer,
      calls: CALLS,
      seconds: Math.round(ms) / 1000,
      loopSeconds: Math.round(loopMs) / 1000,
      // ru_maxrss: the most this process ever held, in KiB.
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
});
