// The JavaScript runtimes other than Node that the tests run offloop in
// (Bun and Deno): which npm package holds each one's executable, pinned to
// one version, the flags each needs to load a Node-API addon, and where
// they are installed: .tools/runtimes/ (ignored by git), by npm, as
// `scripts/test-tools.mjs` asks. It never touches package.json or
// node_modules/, and installs nothing on a platform without those packages.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RUNTIMES_DIR = path.join(ROOT, '.tools', 'runtimes');
/** Written after a successful install: the packages it was made for. */
const STAMP = path.join(RUNTIMES_DIR, 'offloop-runtimes.txt');

/**
 * `args`: what comes before the script. Deno loads a Node-API addon only
 * with `--allow-ffi`, and offloop's threads open and write files;
 * `--allow-read --allow-write` grant that (narrow them to the database's
 * folder in production).
 */
export const RUNTIMES = [
  { name: 'bun', package: '@oven/bun-linux-x64', version: '1.4.5', executable: 'bin/bun', args: [] },
  {
    name: 'deno',
    package: '@deno/linux-x64-glibc',
    version: '2.9.6',
    executable: 'deno',
    args: ['run', '--allow-ffi', '--allow-read', '--allow-write'],
  },
];

/** The packages above exist for x64 Linux on glibc only. */
export function runtimesSupported() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return false;
  process.report.excludeNetwork = true;
  return Boolean(process.report.getReport().header.glibcVersionRuntime);
}

function specs() {
  return RUNTIMES.map((r) => `${r.package}@${r.version}`);
}

/** The path of `runtime`'s installed executable, or null when it is not installed at its version. */
export function runtimeExecutable(runtime) {
  const stamp = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8') : '';
  if (stamp !== specs().join('\n')) return null;
  const file = path.join(RUNTIMES_DIR, 'node_modules', runtime.package, runtime.executable);
  return fs.existsSync(file) ? file : null;
}

/** Installs every runtime unless it is there; returns why it failed, or null. */
export function installRuntimes() {
  if (RUNTIMES.every((r) => runtimeExecutable(r) !== null)) return null;
  fs.mkdirSync(RUNTIMES_DIR, { recursive: true });
  console.error(`test tools: npm install ${specs().join(' ')} into .tools/runtimes/`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', RUNTIMES_DIR, ...specs()],
    { cwd: RUNTIMES_DIR, stdio: 'inherit' },
  );
  if (result.error) return `npm: ${result.error.message}`;
  if (result.status !== 0) return `npm install exited with ${result.status ?? result.signal}`;
  fs.writeFileSync(STAMP, specs().join('\n'));
  return null;
}
