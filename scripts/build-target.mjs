// Builds the prebuilt addon of one or more platforms and leaves each in its
// npm/<platform>/ folder, ready for `npm pack` there:
//
//   node scripts/build-target.mjs linux-arm64-gnu [linux-x64-musl ...]
//
// Linux targets are built on any Linux or macOS host with cargo-zigbuild
// (zig as the C compiler and linker), which links the glibc builds against
// glibc 2.17 and the musl builds against musl. On a Linux host, the macOS
// targets are built with cargo-zigbuild too, and Windows with MinGW-w64
// (Rust's x86_64-pc-windows-gnu target, see windows-gnu.mjs); on their own
// machines they can be built natively.
// A macOS build on Linux needs no SDK: zig ships libSystem's stub, and the
// two frameworks the addon links are linked against stubs kept in
// scripts/macos/ (frameworks.mjs says how they are made). SQLite gets the
// compile flags of every other build of this repository
// (.cargo/config.toml), and each result is checked before it is kept: right
// CPU, no glibc symbol newer than the floor, no library a stock system
// lacks, and for Windows and macOS the module entry exported and nothing
// imported beyond the system's and Node's (foreign-binaries.mjs). A failed
// check fails the build.
//
// It never installs anything outside this repository: zig and
// cargo-zigbuild go into .tools/venv (a Python virtual environment, ignored
// by git), and a missing Rust target is added with rustup.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { checkMacAddon, checkWindowsAddon } from './foreign-binaries.mjs';
import { lookedUpSymbols, writeStubs } from './macos/frameworks.mjs';
import { MH_NOUNDEFS, clearNoUndefs, readMachO, rehashAdhocSignature } from './macos/macho.mjs';
import { ROOT, addonName, packagedAddon, targetOf } from './targets.mjs';
import { WINDOWS_GNU, windowsGnuEnv } from './windows-gnu.mjs';

// Pinned so that every machine links with the same zig and the same glibc
// stubs. Both come from PyPI.
const ZIGLANG = '0.15.2';
const CARGO_ZIGBUILD = '0.24.1';
const TOOLS_VENV = path.join(ROOT, '.tools', 'venv');
// The macOS targets link with a newer zig: 0.15.2's Mach-O linker crashes
// (a segmentation fault, no message) on the compiler_builtins archive of
// Rust 1.95. Kept apart so that the Linux builds keep their pinned zig.
const ZIGLANG_MACOS = '0.17.0';
const TOOLS_VENV_MACOS = path.join(ROOT, '.tools', 'venv-macos');

// The shared libraries a .node may ask for. Anything else (libstdc++, a
// newer libc) is a dependency a user's machine may not have.
const GLIBC_LIBRARIES = new Set([
  'libc.so.6',
  'libm.so.6',
  'libpthread.so.0',
  'libdl.so.2',
  'librt.so.1',
  'libgcc_s.so.1',
  'ld-linux-x86-64.so.2',
  'ld-linux-aarch64.so.1',
]);
// musl's dynamic linker serves every name starting with `libc.` itself.
const MUSL_LIBRARY = /^libc\.(so|musl-[a-z0-9_]+\.so\.1)$/;

/**
 * zig's Mach-O linker has set MH_NOUNDEFS ("no undefined symbols") on a
 * library that leaves Node-API and libuv to dynamic lookup; dyld then
 * binds none of them. Clears the flag where symbols are left to the host,
 * and writes the ad-hoc signature's page hashes again (the header is in
 * its first page).
 */
function mendNoUndefs(file) {
  const buf = fs.readFileSync(file);
  const { flags, signature } = readMachO(buf);
  if ((flags & MH_NOUNDEFS) === 0 || lookedUpSymbols(file).length === 0) return;
  clearNoUndefs(buf);
  if (signature) rehashAdhocSignature(buf);
  fs.writeFileSync(file, buf);
  console.log(`${path.basename(file)}: MH_NOUNDEFS cleared (symbols are left to the host), signature re-hashed`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

function output(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return result.stdout;
}

function ensureRustTarget(triple) {
  const installed = output('rustup', ['target', 'list', '--installed']).split('\n');
  if (!installed.includes(triple)) run('rustup', ['target', 'add', triple]);
}

/** Puts zig `zig` and cargo-zigbuild in the virtual environment `venv`; returns its bin folder. */
function ensureZigTools(venv = TOOLS_VENV, zig = ZIGLANG) {
  const bin = path.join(venv, process.platform === 'win32' ? 'Scripts' : 'bin');
  const python = path.join(bin, process.platform === 'win32' ? 'python.exe' : 'python');
  if (!fs.existsSync(python)) run('python3', ['-m', 'venv', venv]);
  const have = (module) =>
    spawnSync(python, ['-m', 'pip', 'show', module], { encoding: 'utf8' }).stdout.match(/^Version: (.*)$/m)?.[1];
  if (have('ziglang') !== zig || have('cargo-zigbuild') !== CARGO_ZIGBUILD) {
    run(python, [
      '-m',
      'pip',
      'install',
      '-q',
      '--disable-pip-version-check',
      `ziglang==${zig}`,
      `cargo-zigbuild==${CARGO_ZIGBUILD}`,
    ]);
  }
  return bin;
}

function napiCli() {
  const require = createRequire(path.join(ROOT, 'package.json'));
  const manifest = require.resolve('@napi-rs/cli/package.json');
  return path.join(path.dirname(manifest), require(manifest).bin.napi);
}

/** The newest GLIBC_x.y symbol version the file needs, or null. */
function newestGlibc(file) {
  const versions = [...output('objdump', ['-T', file]).matchAll(/GLIBC_(\d+(?:\.\d+)*)/g)].map((m) => m[1]);
  return versions.sort(compareVersions).at(-1) ?? null;
}

function compareVersions(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function neededLibraries(file) {
  return [...output('readelf', ['-d', file]).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
}

/** Throws unless `file` is a 64-bit little-endian ELF for `machine`. */
function checkElf(file, machine) {
  const header = Buffer.alloc(20);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, header, 0, header.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (header.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file} is not an ELF file`);
  if (header[4] !== 2 || header[5] !== 1) throw new Error(`${file} is not a 64-bit little-endian ELF file`);
  const found = header.readUInt16LE(18);
  if (found !== machine) throw new Error(`${file} is for ELF machine ${found}, expected ${machine}`);
}

/** The checks every Linux build passes before it is kept. */
export function checkLinuxAddon(target, file) {
  checkElf(file, target.elfMachine);
  const glibc = newestGlibc(file);
  const needed = neededLibraries(file);
  if (target.libc === 'glibc') {
    if (glibc && compareVersions(glibc, target.glibc) > 0) {
      throw new Error(`${file} needs GLIBC_${glibc}, newer than the floor GLIBC_${target.glibc}`);
    }
    const extra = needed.filter((lib) => !GLIBC_LIBRARIES.has(lib));
    if (extra.length) throw new Error(`${file} needs libraries a glibc system may lack: ${extra.join(', ')}`);
  } else {
    if (glibc) throw new Error(`${file} is a musl build but needs GLIBC_${glibc}`);
    const extra = needed.filter((lib) => !MUSL_LIBRARY.test(lib));
    if (extra.length) throw new Error(`${file} needs libraries a musl system may lack: ${extra.join(', ')}`);
  }
  return { glibc, needed };
}

export function buildTarget(platform) {
  const target = targetOf(platform);
  const outDir = path.join(ROOT, 'target', 'napi-out', platform);
  fs.rmSync(outDir, { recursive: true, force: true });
  const args = [napiCli(), 'build', '--platform', '--release', '--no-js', '--output-dir', outDir];
  let env = { ...process.env };
  // The triple built, and the platform name napi gives its output.
  let triple = target.triple;
  let builtPlatform = platform;
  // For a macOS build against the stubs: which stubs its link used.
  let stubsStamp = null;
  if (target.os === 'linux') {
    if (process.platform === 'win32') throw new Error('Linux targets are built on a Linux or macOS host');
    env.PATH = `${ensureZigTools()}${path.delimiter}${env.PATH}`;
    // cargo-zigbuild reads a `.<version>` suffix on a gnu triple as the
    // glibc to link against.
    args.push('--cross-compile', '--target', target.glibc ? `${target.triple}.${target.glibc}` : target.triple);
  } else if (process.platform === target.os) {
    if (target.macos) env.MACOSX_DEPLOYMENT_TARGET = target.macos;
    args.push('--target', target.triple);
  } else if (target.os === 'darwin' && process.platform === 'linux') {
    env.PATH = `${ensureZigTools(TOOLS_VENV_MACOS, ZIGLANG_MACOS)}${path.delimiter}${env.PATH}`;
    // rustc, the C compiles and zig's linker all read it; without it zig
    // links for its own newest macOS.
    env.MACOSX_DEPLOYMENT_TARGET = target.macos;
    // With no macOS SDK, the frameworks are linked against the stubs kept
    // in this repository (scripts/macos/frameworks.mjs).
    // OFFLOOP_MACOS_STUBS=empty links against stubs that list nothing,
    // to make the kept lists again (frameworks.mjs).
    if (!env.SDKROOT) {
      const symbols = env.OFFLOOP_MACOS_STUBS === 'empty' ? {} : undefined;
      const stubs = path.join(ROOT, 'target', 'macos-frameworks');
      const { linkArgs, digest } = writeStubs(stubs, symbols);
      env.RUSTFLAGS = [env.RUSTFLAGS, ...linkArgs.map((a) => `-C link-arg=${a}`)].filter(Boolean).join(' ');
      // The stubs are no input cargo tracks: after they change, only the
      // addon's own crate is built and linked again.
      stubsStamp = { file: path.join(stubs, `${target.triple}.linked`), digest };
      const linked = fs.existsSync(stubsStamp.file) ? fs.readFileSync(stubsStamp.file, 'utf8') : null;
      if (linked !== digest) run('cargo', ['clean', '--quiet', '--release', '--target', target.triple, '-p', 'offloop'], { cwd: ROOT, env });
    }
    args.push('--cross-compile', '--target', target.triple);
  } else if (target.os === 'win32' && process.platform === 'linux') {
    triple = WINDOWS_GNU;
    builtPlatform = `${target.os}-${target.cpu}-gnu`;
    env = windowsGnuEnv(env);
    args.push('--target', triple);
  } else {
    throw new Error(`${platform} is built on ${target.os} or Linux, not ${process.platform}`);
  }
  ensureRustTarget(triple);
  run(process.execPath, args, { cwd: ROOT, env });
  if (stubsStamp) fs.writeFileSync(stubsStamp.file, stubsStamp.digest);

  const built = path.join(outDir, addonName(builtPlatform));
  if (!fs.existsSync(built)) throw new Error(`napi build left no ${built}`);
  let report = {};
  if (target.os === 'linux') report = checkLinuxAddon(target, built);
  else if (process.platform === 'linux' && target.os === 'win32') report = checkWindowsAddon(built);
  else if (process.platform === 'linux' && target.os === 'darwin') {
    mendNoUndefs(built);
    report = checkMacAddon(built, target.cpu);
  }
  const dest = packagedAddon(platform);
  fs.copyFileSync(built, dest);
  const { size } = fs.statSync(dest);
  const glibc = report.glibc ? `, newest glibc symbol GLIBC_${report.glibc}` : '';
  const macos = report.minMacos
    ? `, macOS ${report.minMacos} and up, ${Object.entries(report.frameworkSymbols).map(([name, n]) => `${n} ${name}`).join(' and ')} symbols` +
      (report.signedPages ? `, ${report.signedPages} signed pages` : '')
    : '';
  console.log(`${platform}: ${path.relative(ROOT, dest)} (${(size / 1024 / 1024).toFixed(1)} MiB${glibc}${macos})`);
  return dest;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const platforms = process.argv.slice(2);
  if (platforms.length === 0) {
    console.error('usage: node scripts/build-target.mjs <platform> [<platform> ...]');
    process.exit(2);
  }
  for (const platform of platforms) buildTarget(platform);
}
