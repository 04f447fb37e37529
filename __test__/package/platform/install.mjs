// Installs offloop the way a user gets it, for the package tests: the
// release tarballs (scripts/pack.mjs) of the main package and one platform
// package go into a fresh folder with `npm install --ignore-scripts`, offline
// and with no Rust toolchain on the PATH, and npm picks the platform package
// from the main package's optionalDependencies by os, cpu and libc. Then
// subset.mjs runs there under the Node of that platform. This file only
// prepares and runs; the tests assert.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { npmCommand, pack } from '../../../scripts/pack.mjs';
import { targetOf } from '../../../scripts/targets.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

// An install from local tarballs takes seconds; the bound only keeps a
// hung npm from hanging the suite.
const INSTALL_TIMEOUT_MS = 120_000;

const TOOLCHAIN = ['cargo', 'rustc', 'rustup'];

function executableIn(dir, name) {
  return [name, `${name}.exe`].some((n) => {
    try {
      fs.accessSync(path.join(dir, n), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The PATH with every folder that holds a Rust toolchain left out. */
export function pathWithoutToolchain() {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !TOOLCHAIN.some((tool) => executableIn(dir, tool)))
    .join(path.delimiter);
}

/** Whether `name` can be found on `searchPath`. */
export function onPath(name, searchPath) {
  return searchPath.split(path.delimiter).some((dir) => dir && executableIn(dir, name));
}

/**
 * Packs offloop and the package of `platform` (with `addon` as its .node,
 * default npm/<platform>/'s) and installs them in a new folder. Returns
 * `{ dir, packed, npm, cleanup }`; `npm` is the install's output.
 */
export function install(platform, { addon } = {}) {
  const target = targetOf(platform);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `offloop-install-${platform}-`));
  const tarballs = path.join(dir, 'tarballs');
  const packed = pack({ out: tarballs, platforms: [platform], addons: addon ? { [platform]: addon } : {} });
  const [main, native] = packed;
  const manifest = {
    private: true,
    dependencies: { [main.name]: `file:${path.relative(dir, main.file)}` },
    // The platform package is not named here: it comes in as the main
    // package's optional dependency, and npm resolves that one name to the
    // local tarball instead of the registry.
    overrides: { [native.name]: `file:${path.relative(dir, native.file)}` },
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));

  const [command, prefix] = npmCommand();
  const platformFlags = ['--os', target.os, '--cpu', target.cpu];
  if (target.libc) platformFlags.push('--libc', target.libc);
  const result = spawnSync(
    command,
    [...prefix, 'install', '--ignore-scripts', '--offline', '--no-audit', '--no-fund', ...platformFlags],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: INSTALL_TIMEOUT_MS,
      env: { ...process.env, PATH: pathWithoutToolchain() },
    },
  );
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  if (result.status !== 0) {
    cleanup();
    throw new Error(`npm install failed (${result.error?.message ?? result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  fs.copyFileSync(path.join(HERE, 'subset.mjs'), path.join(dir, 'subset.mjs'));
  return { dir, packed, npm: result.stdout + result.stderr, cleanup };
}

/**
 * The environment of a subset run: this one without a Rust toolchain on the
 * PATH, and without what `node --test` tells its own children (subset.mjs
 * is a test file run directly, not a child of this runner).
 */
function subsetEnv() {
  const env = { ...process.env, PATH: pathWithoutToolchain() };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * Runs `args` in `dir` with `node` (an argv: a Node binary, possibly behind
 * an emulator). Returns `{ status, output }`.
 */
export function runNode(dir, node, args, { timeoutMs }) {
  const [command, ...prefix] = node;
  const result = spawnSync(command, [...prefix, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: subsetEnv(),
  });
  return {
    status: result.status,
    output: `${result.error ? `${result.error.message}\n` : ''}${result.stdout}${result.stderr}`,
  };
}

/** Runs subset.mjs in `dir`; returns `{ status, output, facts }`. */
export function runSubset(dir, node, options) {
  const factsFile = path.join(dir, 'facts.json');
  fs.rmSync(factsFile, { force: true });
  const run = runNode(dir, node, ['subset.mjs'], options);
  return { ...run, facts: fs.existsSync(factsFile) ? JSON.parse(fs.readFileSync(factsFile, 'utf8')) : null };
}
