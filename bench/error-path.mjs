// What taking a failed call's stack in its caller's continuation costs a
// call that succeeds: `stmt.get()` and `stmt.run()` per call, for this
// checkout's lib/ and for lib/ as it was before that change (a git
// revision, `--before REV`), both on this checkout's addon. The two cannot
// share a process (each lib registers itself with the addon), so children
// alternate, before and after, round after round, and each figure is the
// median over rounds (and the fastest round). It owns that comparison; it
// never builds anything.
//
//   node bench/error-path.mjs [--before REV] [--rounds N] [--calls N] [--pin]

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { runChild } from './lib/child.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

// The last commit before the change: lib/calls.js without rejectInCaller.
const BEFORE = option('before', '4edfa66');
const ROUNDS = Number(option('rounds', 15));
const CALLS = Number(option('calls', 20000));
// `--pin`: every child on CPU 0 (taskset), JS and SQLite threads alike, as
// the RT benchmark pins for stable round trips.
const PIN = process.argv.includes('--pin');

/** A copy of `rev`'s lib/, index.js and native.js, loading this checkout's addon. */
function checkoutBefore(rev) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-before-'));
  const tar = execFileSync('git', ['archive', rev, 'lib', 'index.js', 'native.js'], { cwd: ROOT, maxBuffer: 64 << 20 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  for (const f of fs.readdirSync(ROOT).filter((name) => name.endsWith('.node'))) fs.symlinkSync(path.join(ROOT, f), path.join(dir, f));
  return dir;
}

const CHILD = `
const { Database } = require(process.argv[2]);
const fs = require('node:fs');
const path = require('node:path');
const calls = Number(process.argv[4]);
(async () => {
  const file = path.join(process.argv[3], 'bench.db');
  fs.rmSync(file, { force: true });
  const db = await Database.open(file);
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (\\'row\\')');
  const get = db.prepare('SELECT id, v FROM t WHERE id = ?');
  const run = db.prepare('INSERT INTO t(v) VALUES (?)');
  async function perCall(fn, n) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    return Number(process.hrtime.bigint() - start) / n / 1000;
  }
  async function inFlight(fn, n, width) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i += width) await Promise.all(Array.from({ length: width }, fn));
    return Number(process.hrtime.bigint() - start) / n / 1000;
  }
  await perCall(() => get.get(1), calls / 4);
  await perCall(() => run.run('w'), calls / 4);
  const result = {
    getAwaited: await perCall(() => get.get(1), calls),
    get64: await inFlight(() => get.get(1), calls, 64),
    runAwaited: await perCall(() => run.run('x'), calls / 4),
    run64: await inFlight(() => run.run('x'), calls, 64),
  };
  await db.close();
  console.log(JSON.stringify(result));
})();
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const before = checkoutBefore(BEFORE);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-error-path-'));
const script = path.join(work, 'child.js');
fs.writeFileSync(script, CHILD);
const rounds = { before: [], after: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always follows the other.
    const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const which of order) {
      const lib = which === 'before' ? path.join(before, 'index.js') : path.join(ROOT, 'index.js');
      const args = [script, lib, work, String(CALLS)];
      const { result } = PIN ? await runChild('taskset', ['-c', '0', process.execPath, ...args]) : await runChild(process.execPath, args);
      rounds[which].push(result);
    }
    console.error(`round ${r + 1}/${ROUNDS}`);
  }
} finally {
  fs.rmSync(before, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
}

// The medians; the median of each round's own after / before, which load
// that drifts over the run disturbs less; and the fastest rounds, which
// other load on a shared machine disturbs least.
const rows = ['getAwaited', 'get64', 'runAwaited', 'run64'].map((key) => {
  const b = rounds.before.map((x) => x[key]);
  const a = rounds.after.map((x) => x[key]);
  return {
    key,
    beforeUs: median(b),
    afterUs: median(a),
    pairedRatio: median(a.map((v, i) => v / b[i])),
    beforeMinUs: Math.min(...b),
    afterMinUs: Math.min(...a),
    minRatio: Math.min(...a) / Math.min(...b),
  };
});
const report = {
  bench: 'error-path',
  before: BEFORE,
  after: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(),
  node: process.version,
  cpus: os.cpus().length,
  rounds: ROUNDS,
  calls: CALLS,
  pinned: PIN,
  rows,
  samples: rounds,
};
fs.mkdirSync(path.join(HERE, 'results'), { recursive: true });
fs.writeFileSync(path.join(HERE, 'results', 'error-path.json'), `${JSON.stringify(report, null, 2)}\n`);
const table = [
  '| µs per call | before (median) | after (median) | after / before (median of rounds) | before (fastest) | after (fastest) | ratio |',
  '|---|---:|---:|---:|---:|---:|---:|',
];
for (const r of rows) {
  const cells = [r.beforeUs, r.afterUs, r.pairedRatio, r.beforeMinUs, r.afterMinUs, r.minRatio].map((v, i) => v.toFixed(i % 3 === 2 ? 3 : 2));
  table.push(`| ${r.key} | ${cells.join(' | ')} |`);
}
console.log(table.join('\n'));
