// The offloop build a benchmark measures. The working tree may be rebuilt
// while a benchmark runs (by `npm run build` in another shell), so a
// benchmark copies the package (what `files` in package.json publishes,
// plus the addon) to a temporary folder once and loads it from there:
// every run of one benchmark measures the same build.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ROOT } from './paths.mjs';

function git(...args) {
  const { stdout, status } = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return status === 0 ? stdout.trim() : null;
}

function addonFile(dir) {
  return fs.readdirSync(dir).find((f) => /^offloop\..*\.node$/.test(f)) ?? null;
}

/** The first 16 hex digits of the sha256 of the addon in `dir`. */
export function addonDigest(dir = ROOT) {
  const addon = addonFile(dir);
  if (!addon) return null;
  return crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, addon))).digest('hex').slice(0, 16);
}

/**
 * Copies the offloop package to a temporary folder. Returns `{ dir, build,
 * cleanup }`: `dir` holds a loadable package (require(dir) works), `build`
 * describes it (version, commit, whether the tree had uncommitted changes
 * to the code, addon digest).
 */
export function snapshotOffloop() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const addon = addonFile(ROOT);
  if (!addon) throw new Error('the offloop addon is not built (npm run build)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-bench-build-'));
  for (const entry of ['package.json', addon, ...(pkg.files ?? ['index.js'])]) {
    const from = path.join(ROOT, entry);
    if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, entry), { recursive: true });
  }
  const code = ['package.json', ...(pkg.files ?? []), 'src', 'engine', 'Cargo.toml', 'Cargo.lock'];
  const dirty = git('status', '--porcelain', '--', ...code);
  const build = {
    version: pkg.version ?? null,
    commit: git('rev-parse', '--short=12', 'HEAD'),
    uncommittedChanges: dirty === null ? null : dirty.length > 0,
    addon,
    addonSha256: addonDigest(dir),
  };
  return { dir, build, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
