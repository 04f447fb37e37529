// Makes the tarballs a release publishes, and refuses to make a bad one:
//
//   node scripts/pack.mjs [--out DIR] [--addons DIR] [<platform> ...]
//
// - offloop-<version>.tgz: the JavaScript package. Its manifest is the
//   repository's package.json with two changes written here, at release
//   time: `optionalDependencies` names every platform package at this exact
//   version (npm installs the one whose os, cpu and libc match), and
//   `scripts` is gone (they build from a checkout, and an installed package
//   must run none). It holds no Rust source, no test, no benchmark, and
//   stays under MAIN_PACKAGE_LIMIT.
// - offloop-<platform>-<version>.tgz for each platform named (default: each
//   npm/<platform>/ that holds its .node): that one .node and a manifest.
//   With --addons, each .node is taken from anywhere under that folder
//   instead (where a release collects the builds of its jobs).
//
// `npm publish <tarball>` publishes each one as it is. Packing runs no
// lifecycle script: it never builds. It prints the tarballs as JSON.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { ROOT, TARGETS, addonName, packagedAddon, targetOf } from './targets.mjs';

// A bound on what every user downloads for the JavaScript side, set at
// 100 KiB when the package was 47 kB and raised to 128 KiB when it reached
// 107 kB packed (367 kB unpacked): offloop/sqlite3 (28 kB packed), the ORM
// adapters (17 kB) and offloop/otel and offloop/metrics (8 kB) joined it,
// each an entry point of its own, all source as written with its comments.
// The platform package every install also downloads is about 6 MB packed
// (linux-x64-gnu).
// The bound is there to catch what does not belong (a docs/ or bench/
// folder alone is several times the headroom), not to squeeze the source.
export const MAIN_PACKAGE_LIMIT = 128 * 1024;

// Paths that belong to the repository and never to the published package.
const NOT_PUBLISHED = [/\.rs$/, /^(src|crates|__test__|bench|scripts|npm|docs|target)\//, /^Cargo\./, /\.node$/];

/** How npm is run: the npm that runs this script when there is one. */
export function npmCommand() {
  const cli = process.env.npm_execpath;
  if (cli && /\.c?js$/.test(cli)) return [process.execPath, [cli]];
  return [process.platform === 'win32' ? 'npm.cmd' : 'npm', []];
}

function npm(args, options) {
  const [command, prefix] = npmCommand();
  const result = spawnSync(command, [...prefix, ...args], { encoding: 'utf8', ...options });
  if (result.error) throw new Error(`npm ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} exited with ${result.status}:\n${result.stderr}`);
  return result.stdout;
}

/** `npm pack` of `dir` into `out`: { file, size, unpackedSize, files }. */
function npmPack(dir, out) {
  const [info] = JSON.parse(npm(['pack', dir, '--json', '--ignore-scripts', '--pack-destination', out]));
  return {
    name: info.name,
    version: info.version,
    file: path.join(out, info.filename),
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files.map((f) => f.path),
  };
}

function packMain(out, work) {
  const first = npmPack(ROOT, work);
  const staged = path.join(work, 'main');
  fs.mkdirSync(staged);
  const tar = spawnSync('tar', ['-xzf', first.file, '-C', staged, '--strip-components=1']);
  if (tar.status !== 0) throw new Error(`tar could not unpack ${first.file}: ${tar.stderr}`);
  const manifestPath = path.join(staged, 'package.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  delete manifest.scripts;
  manifest.optionalDependencies = Object.fromEntries(
    TARGETS.map((t) => [`${manifest.name}-${t.platform}`, manifest.version]),
  );
  fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = npmPack(staged, out);

  const unwanted = packed.files.filter((f) => NOT_PUBLISHED.some((re) => re.test(f)));
  if (unwanted.length) throw new Error(`the offloop package would publish ${unwanted.join(', ')}`);
  if (packed.size >= MAIN_PACKAGE_LIMIT) {
    throw new Error(`the offloop package is ${packed.size} bytes, over the ${MAIN_PACKAGE_LIMIT} limit`);
  }
  return packed;
}

/**
 * Packs npm/<platform>/ with `addon` as its .node (default: the one built
 * into that folder). Another file, such as the build from source a test
 * packs, is staged in a copy of the folder: npm/ itself is never written.
 */
function packPlatform(platform, out, work, addon = packagedAddon(platform)) {
  targetOf(platform);
  if (!fs.existsSync(addon)) {
    throw new Error(`${addon} is not built (node scripts/build-target.mjs ${platform})`);
  }
  let dir = path.join(ROOT, 'npm', platform);
  if (addon !== packagedAddon(platform)) {
    const staged = path.join(work, platform);
    fs.cpSync(dir, staged, { recursive: true, filter: (f) => !f.endsWith('.node') });
    fs.copyFileSync(addon, path.join(staged, addonName(platform)));
    dir = staged;
  }
  const packed = npmPack(dir, out);
  const addons = packed.files.filter((f) => f.endsWith('.node'));
  if (addons.length !== 1 || addons[0] !== addonName(platform)) {
    throw new Error(`${packed.name} must hold exactly ${addonName(platform)}, holds: ${addons.join(', ') || 'none'}`);
  }
  return packed;
}

/**
 * Packs the main package and `platforms` into `out`; returns their
 * descriptions. `addons` may name, per platform, the .node to pack instead
 * of npm/<platform>/'s.
 */
export function pack({ out, platforms, addons = {} }) {
  fs.mkdirSync(out, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-pack-'));
  try {
    return [packMain(out, work), ...platforms.map((p) => packPlatform(p, out, work, addons[p]))];
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Each `offloop.<platform>.node` found under `dir`, by platform. */
function addonsUnder(dir, platforms) {
  const files = fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, f));
  const found = {};
  for (const platform of platforms) {
    const matches = files.filter((f) => path.basename(f) === addonName(platform));
    if (matches.length !== 1) throw new Error(`${dir} holds ${matches.length} ${addonName(platform)}, expected 1`);
    found[platform] = matches[0];
  }
  return found;
}

function option(args, name) {
  const at = args.indexOf(name);
  if (at === -1) return null;
  const [, value] = args.splice(at, 2);
  return path.resolve(value);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const out = option(args, '--out') ?? path.join(ROOT, 'dist');
  const addonsDir = option(args, '--addons');
  const platforms = args.length ? args : TARGETS.map((t) => t.platform).filter((p) => fs.existsSync(packagedAddon(p)));
  const addons = addonsDir ? addonsUnder(addonsDir, platforms) : {};
  console.log(JSON.stringify(pack({ out, platforms, addons }), null, 2));
}
