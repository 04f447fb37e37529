'use strict';

// Finds and loads the offloop addon for the running process. It owns one
// decision, which `.node` file to load, and never builds, downloads or
// writes anything: an install needs no script and no network beyond npm's
// own download of the packages.
//
// Two places are tried, in this order:
// 1. `offloop.<platform>.node` beside this file: what `npm run build` leaves
//    in a git checkout (a build from source always wins there);
// 2. the package `offloop-<platform>`, which npm installs from the
//    `optionalDependencies` of a published offloop, picking the one whose
//    `os`, `cpu` and `libc` match the machine.
//
// <platform> is `<process.platform>-<process.arch>`, plus the C library on
// Linux (`gnu` or `musl`) and the toolchain on Windows (`msvc`): a glibc
// build does not load on musl and the other way round.

const fs = require('node:fs');
const path = require('node:path');

const { hostLabel } = require('./lib/host.js');

// The platforms with a prebuilt package. Kept equal to scripts/targets.mjs
// by __test__/package/layout.test.mjs.
const PREBUILT = [
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-msvc',
];

/**
 * The C library of the running process on Linux. The report header carries
 * `glibcVersionRuntime` only when Node runs on glibc; reading the process's
 * own report, rather than looking for /lib/ld-musl-*, stays right on a glibc
 * system that also has musl installed.
 */
function linuxLibc() {
  // Deno answers a report only with --allow-sys; its build target names
  // the C library it was built for, which is the one it runs on.
  const deno = globalThis.Deno;
  if (deno && deno.build && typeof deno.build.target === 'string') {
    return deno.build.target.endsWith('-musl') ? 'musl' : 'gnu';
  }
  const { report } = process;
  if (report && typeof report.getReport === 'function') {
    report.excludeNetwork = true;
    return report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl';
  }
  return 'gnu';
}

function platformName() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') return `${base}-${linuxLibc()}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

function isNotFound(err, request) {
  return err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(request);
}

function load() {
  const platform = platformName();
  const tried = [];

  const local = path.join(__dirname, `offloop.${platform}.node`);
  if (fs.existsSync(local)) {
    try {
      return require(local);
    } catch (err) {
      tried.push(`${local}: ${err.message}`);
    }
  }

  const pkg = `offloop-${platform}`;
  try {
    // A platform package from another release would speak another version
    // of the JS-to-addon wire, so a mismatch is refused here rather than
    // failing later in some call.
    const { version } = require(`${pkg}/package.json`);
    const expected = require('./package.json').version;
    if (version !== expected) {
      tried.push(
        `${pkg}@${version} is installed, but this offloop is ${expected}: ` +
          `install offloop again so that npm fetches ${pkg}@${expected}`,
      );
    } else {
      return require(pkg);
    }
  } catch (err) {
    if (isNotFound(err, pkg)) {
      tried.push(
        PREBUILT.includes(platform)
          ? `${pkg} is not installed: npm installs it with offloop unless optional ` +
              'dependencies are omitted (--omit=optional, --no-optional) or the lockfile ' +
              'was made on another platform; install offloop again without those'
          : `offloop has no prebuilt binary for ${platform} (there are: ${PREBUILT.join(', ')}); ` +
              'build it from source from a git checkout (docs/install.md)',
      );
    } else {
      tried.push(`${pkg}: ${err.message}`);
    }
  }

  // The runtime is named: what refuses an addon (Deno without --allow-ffi,
  // Node with --no-addons) says so in the first reason, not whose rule it is.
  const err = new Error(`offloop could not load its native addon for ${platform} in ${hostLabel()}:\n- ${tried.join('\n- ')}`);
  err.code = 'ERR_OFFLOOP_NATIVE_ADDON';
  throw err;
}

module.exports = load();
