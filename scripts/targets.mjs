// The platforms offloop publishes a prebuilt addon for, one npm package
// each under npm/<platform>/. This file only describes them; the build
// (build-target.mjs), the packing (pack.mjs) and the tests read it, and it
// runs nothing. package.json `napi.targets`, the npm/ folders and the list in
// native.js must name the same platforms: __test__/package/layout.test.mjs
// checks that they do.

import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// glibc 2.17 is the oldest C library Rust's *-linux-gnu targets support, so
// the gnu builds link against it (through zig's glibc stubs) and load on
// every distribution Rust code can run on: RHEL/CentOS 7 and newer, Debian
// 8, Ubuntu 14.04. A build linked on the host instead asks for the host's
// glibc (2.34 on Debian 12) and fails to load on anything older.
const GLIBC_FLOOR = '2.17';

// ELF e_machine values (System V ABI): the build checks that each .node is
// for the CPU its package claims.
const EM_X86_64 = 62;
const EM_AARCH64 = 183;

// The oldest macOS Node 20 runs on, for each CPU: the macOS builds are
// linked for it (MACOSX_DEPLOYMENT_TARGET), so that they load wherever
// Node does, and the check of each build (foreign-binaries.mjs) fails when
// one asks for a newer macOS.
const NODE20_MACOS = { x64: '10.15', arm64: '11.0' };

/**
 * Each target: `platform` (the npm/ folder and the package suffix),
 * `triple` (Rust's target), `os` and `cpu` (Node's process.platform and
 * process.arch), `libc` for Linux, `glibc` (the newest symbol version the
 * .node may need) for glibc builds, `elfMachine` for Linux builds, and
 * `macos` (the oldest macOS the build must load on) for macOS builds.
 */
export const TARGETS = [
  {
    platform: 'linux-x64-gnu',
    triple: 'x86_64-unknown-linux-gnu',
    os: 'linux',
    cpu: 'x64',
    libc: 'glibc',
    glibc: GLIBC_FLOOR,
    elfMachine: EM_X86_64,
  },
  {
    platform: 'linux-arm64-gnu',
    triple: 'aarch64-unknown-linux-gnu',
    os: 'linux',
    cpu: 'arm64',
    libc: 'glibc',
    glibc: GLIBC_FLOOR,
    elfMachine: EM_AARCH64,
  },
  {
    platform: 'linux-x64-musl',
    triple: 'x86_64-unknown-linux-musl',
    os: 'linux',
    cpu: 'x64',
    libc: 'musl',
    elfMachine: EM_X86_64,
  },
  {
    platform: 'linux-arm64-musl',
    triple: 'aarch64-unknown-linux-musl',
    os: 'linux',
    cpu: 'arm64',
    libc: 'musl',
    elfMachine: EM_AARCH64,
  },
  { platform: 'darwin-x64', triple: 'x86_64-apple-darwin', os: 'darwin', cpu: 'x64', macos: NODE20_MACOS.x64 },
  { platform: 'darwin-arm64', triple: 'aarch64-apple-darwin', os: 'darwin', cpu: 'arm64', macos: NODE20_MACOS.arm64 },
  { platform: 'win32-x64-msvc', triple: 'x86_64-pc-windows-msvc', os: 'win32', cpu: 'x64' },
];

export const LINUX_TARGETS = TARGETS.filter((t) => t.os === 'linux');

export function targetOf(platform) {
  const target = TARGETS.find((t) => t.platform === platform);
  if (!target) {
    throw new Error(`unknown platform ${platform}; offloop builds: ${TARGETS.map((t) => t.platform).join(', ')}`);
  }
  return target;
}

/** The platform name of the running Node, as native.js computes it. */
export function hostPlatform() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    process.report.excludeNetwork = true;
    return `${base}-${process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl'}`;
  }
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

export function addonName(platform) {
  return `offloop.${platform}.node`;
}

/** Where a target's package keeps its addon, ready for `npm pack`. */
export function packagedAddon(platform) {
  return path.join(ROOT, 'npm', platform, addonName(platform));
}
