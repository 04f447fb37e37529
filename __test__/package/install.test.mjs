// Installing offloop needs no Rust: the release tarballs of offloop and of
// this machine's platform package, installed into a fresh folder with
// `npm install --ignore-scripts`, offline and with no cargo on the PATH,
// load with require() and import() and pass the platform subset
// (platform/subset.mjs). The platform package packed here holds the addon
// `npm run build` made, the one the rest of the suite tests.
//
// Also the loader's refusals: a platform package of another version, and a
// missing one, each with a message that says what to do.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { MAIN_PACKAGE_LIMIT } from '../../scripts/pack.mjs';
import { ROOT, TARGETS, addonName, hostPlatform } from '../../scripts/targets.mjs';
import { install, onPath, pathWithoutToolchain, runNode, runSubset } from './platform/install.mjs';

const platform = hostPlatform();
const sourceBuild = path.join(ROOT, addonName(platform));
const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

// The subset runs a few hundred calls and three threads' worth of opens.
const SUBSET_TIMEOUT_MS = 120_000;

let installed;
before(() => {
  installed = install(platform, { addon: sourceBuild });
});
after(() => installed?.cleanup());

function installedManifest(name) {
  return JSON.parse(fs.readFileSync(path.join(installed.dir, 'node_modules', name, 'package.json'), 'utf8'));
}

test('the install and the subset run with no Rust toolchain on the PATH', () => {
  assert.equal(onPath('cargo', pathWithoutToolchain()), false);
  assert.equal(onPath('rustc', pathWithoutToolchain()), false);
});

test('the main package holds no Rust source, test, benchmark or addon, and is small', () => {
  const [main] = installed.packed;
  assert.equal(main.name, 'offloop');
  for (const file of main.files) {
    assert.doesNotMatch(file, /\.(rs|node)$|^(src|crates|__test__|bench|scripts|npm|target)\/|^Cargo\./, file);
  }
  for (const file of ['index.js', 'index.d.ts', 'native.js', 'package.json']) assert.ok(main.files.includes(file), file);
  assert.ok(main.size < MAIN_PACKAGE_LIMIT, `${main.size} bytes`);
});

test('the platform package holds exactly one .node, its own', () => {
  const [, native] = installed.packed;
  assert.equal(native.name, `offloop-${platform}`);
  assert.deepEqual(
    native.files.filter((f) => f.endsWith('.node')),
    [addonName(platform)],
  );
});

test('the published manifest runs no script and names every platform package at its version', () => {
  const manifest = installedManifest('offloop');
  assert.equal(manifest.scripts, undefined);
  assert.deepEqual(
    manifest.optionalDependencies,
    Object.fromEntries(TARGETS.map((t) => [`offloop-${t.platform}`, version])),
  );
});

test('npm installs only the platform package that matches this machine', () => {
  const packages = fs.readdirSync(path.join(installed.dir, 'node_modules')).filter((n) => n.startsWith('offloop'));
  assert.deepEqual(packages.sort(), ['offloop', `offloop-${platform}`]);
  assert.deepEqual(
    fs.readdirSync(path.join(installed.dir, 'node_modules', 'offloop')).filter((f) => f.endsWith('.node')),
    [],
  );
});

test('the installed package passes the platform subset, loading the addon from the platform package', () => {
  const run = runSubset(installed.dir, [process.execPath], { timeoutMs: SUBSET_TIMEOUT_MS });
  assert.equal(run.status, 0, run.output);
  assert.deepEqual(run.facts.addons, [path.join('node_modules', `offloop-${platform}`, addonName(platform))]);
});

/** Runs `code` with Node in the install folder; returns its exit status and output. */
function requireIn(dir, code) {
  return runNode(dir, [process.execPath], ['-e', code], { timeoutMs: SUBSET_TIMEOUT_MS });
}

test('a platform package of another version is refused with a message naming both versions', () => {
  const manifestFile = path.join(installed.dir, 'node_modules', `offloop-${platform}`, 'package.json');
  const original = fs.readFileSync(manifestFile, 'utf8');
  try {
    fs.writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(original), version: '0.0.1-other' }));
    const run = requireIn(installed.dir, "require('offloop')");
    assert.notEqual(run.status, 0);
    assert.match(run.output, new RegExp(`offloop-${platform}@0\\.0\\.1-other is installed, but this offloop is ${version}`));
    assert.match(run.output, /ERR_OFFLOOP_NATIVE_ADDON/);
  } finally {
    fs.writeFileSync(manifestFile, original);
  }
});

test('a missing platform package is reported by name, with the install options that leave it out', () => {
  const pkgDir = path.join(installed.dir, 'node_modules', `offloop-${platform}`);
  const aside = `${pkgDir}.aside`;
  fs.renameSync(pkgDir, aside);
  try {
    const run = requireIn(installed.dir, "require('offloop')");
    assert.notEqual(run.status, 0);
    assert.match(run.output, new RegExp(`offloop-${platform} is not installed`));
    assert.match(run.output, /--omit=optional/);
  } finally {
    fs.renameSync(aside, pkgDir);
  }
});
