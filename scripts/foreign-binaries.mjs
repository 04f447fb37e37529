// The checks a Windows or macOS addon built on Linux passes before it is
// kept (build-target.mjs): the right file format and CPU, the one export
// Node looks for (napi_register_module_v1), and imports a stock system
// has. It reads the binaries with MinGW-w64's objdump (Windows), and with
// LLVM's llvm-nm and its own Mach-O reader (macOS, scripts/macos/); it
// never runs them.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FRAMEWORKS, importedSymbols, keptSymbols, tbdSymbols } from './macos/frameworks.mjs';
import { MH_NOUNDEFS, readMachO, verifyAdhocSignature } from './macos/macho.mjs';
import { ROOT, TARGETS } from './targets.mjs';

function output(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return result.stdout;
}

// The DLLs a Windows addon may import: parts of every Windows 10 and later
// (the C runtime msvcrt.dll included). MinGW's own runtime DLLs
// (libgcc_s_seh-1.dll, libwinpthread-1.dll, libstdc++-6.dll) are not, and
// neither is a Node module: the addon finds Node-API and libuv in the host
// process at run time, whatever the executable is called.
const WINDOWS_DLLS = new Set(
  [
    'kernel32.dll',
    'ntdll.dll',
    'msvcrt.dll',
    'advapi32.dll',
    'bcrypt.dll',
    'bcryptprimitives.dll',
    'crypt32.dll',
    'ncrypt.dll',
    'secur32.dll',
    'userenv.dll',
    'ws2_32.dll',
    'ole32.dll',
    'oleaut32.dll',
    'shell32.dll',
    'user32.dll',
  ],
);
// Windows' API sets, resolved by the loader to the DLLs above.
const WINDOWS_API_SET = /^api-ms-win-[a-z0-9-]+\.dll$/;

/** Throws unless `file` is an x86-64 DLL that exports the module entry and imports only system DLLs. */
export function checkWindowsAddon(file) {
  const dump = output('x86_64-w64-mingw32-objdump', ['-p', file]);
  if (!/file format pei-x86-64/.test(dump)) throw new Error(`${file} is not an x86-64 PE file`);
  const characteristics = dump.match(/^Characteristics\s+0x([0-9a-f]+)/m);
  // IMAGE_FILE_DLL
  if (!characteristics || (parseInt(characteristics[1], 16) & 0x2000) === 0) throw new Error(`${file} is not a DLL`);
  const exports = dump.split(/\[Ordinal\/Name Pointer\] Table/)[1] ?? '';
  if (!/\]\s+napi_register_module_v1$/m.test(exports)) throw new Error(`${file} does not export napi_register_module_v1`);
  const dlls = [...dump.matchAll(/^\s*DLL Name: (\S+)$/gm)].map((m) => m[1]);
  const foreign = dlls.filter((dll) => !WINDOWS_DLLS.has(dll.toLowerCase()) && !WINDOWS_API_SET.test(dll.toLowerCase()));
  if (foreign.length) throw new Error(`${file} imports DLLs a stock Windows lacks: ${foreign.join(', ')}`);
  return { dlls };
}

// Mach-O: the CPU types and the file types an addon can be.
const CPU_TYPES = { x64: 0x01000007, arm64: 0x0100000c };
const MH_DYLIB = 6;
const MH_BUNDLE = 8;
const LIBSYSTEM = '/usr/lib/libSystem.B.dylib';
// What the addon leaves to the host process: Node-API and libuv.
const FROM_NODE = /^_(napi_|node_api_|uv_)/;

/** Where zig keeps libSystem's stub (build-target.mjs installs the macOS builds' zig in .tools/venv-macos). */
export function zigLibSystemStub() {
  const lib = path.join(ROOT, '.tools', 'venv-macos', 'lib');
  const python = fs.existsSync(lib) ? fs.readdirSync(lib).find((d) => d.startsWith('python')) : undefined;
  const stub = python && path.join(lib, python, 'site-packages', 'ziglang', 'lib', 'libc', 'darwin', 'libSystem.tbd');
  if (!stub || !fs.existsSync(stub)) throw new Error('zig\'s libSystem.tbd is not in .tools/venv-macos (node scripts/build-target.mjs darwin-arm64 installs it)');
  return stub;
}

function compareVersions(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/**
 * Throws unless `file` is what a Mac's loader takes from Node 20 up: a
 * Mach-O library for `cpu` ('x64' or 'arm64') whose minimum macOS is no
 * newer than Node 20's, linking only libSystem and the two frameworks at
 * their system paths; every undefined symbol either served by one of them
 * (as their stubs say: zig's libSystem.tbd, and `frameworks`, the
 * frameworks' kept symbols) or left to the host and one of Node-API's or
 * libuv's; MH_NOUNDEFS clear while any is left to the host; exporting the
 * module entry; named `@rpath/…`, not by the path it was built at; and, on arm64 (where macOS refuses an unsigned library),
 * an ad-hoc signature whose every page hash matches.
 */
export function checkMacAddon(file, cpu, { frameworks, libSystemStub } = {}) {
  const buf = fs.readFileSync(file);
  let macho;
  try {
    macho = readMachO(buf);
  } catch (error) {
    throw new Error(`${file}: ${error.message}`);
  }
  if (macho.cpuType !== CPU_TYPES[cpu]) throw new Error(`${file} is for CPU type 0x${macho.cpuType.toString(16)}, not ${cpu}`);
  if (macho.fileType !== MH_DYLIB && macho.fileType !== MH_BUNDLE) throw new Error(`${file} is Mach-O file type ${macho.fileType}, not a library`);
  if (macho.minMacos === null) throw new Error(`${file} names no minimum macOS version`);
  const oldest = TARGETS.find((t) => t.os === 'darwin' && t.cpu === cpu).macos;
  if (compareVersions(macho.minMacos, oldest) > 0) {
    throw new Error(`${file} needs macOS ${macho.minMacos}, newer than Node 20's ${oldest}`);
  }
  // Its own install name: a path of the build machine when none was given (build.rs gives one).
  if (macho.id !== null && macho.id.startsWith('/')) throw new Error(`${file} is named by the path it was built at: ${macho.id}`);
  const linked = macho.dylibs.filter((lib) => lib !== LIBSYSTEM && !Object.values(FRAMEWORKS).includes(lib));
  if (linked.length) throw new Error(`${file} links libraries beyond libSystem and the frameworks: ${linked.join(', ')}`);

  const exported = output('llvm-nm', ['--extern-only', '--defined-only', file]);
  if (!/ _napi_register_module_v1$/m.test(exported)) throw new Error(`${file} does not export napi_register_module_v1`);

  // Where each undefined symbol is bound: a library (two-level), or the
  // host process (null: flat namespace, what Node-API and libuv need).
  const served = new Map([['libSystem', tbdSymbols(fs.readFileSync(libSystemStub ?? zigLibSystemStub(), 'utf8'))]]);
  const kept = frameworks ?? keptSymbols();
  for (const name of Object.keys(FRAMEWORKS)) served.set(name, new Set(kept[name] ?? []));
  const undefinedSymbols = importedSymbols(file);
  const stray = undefinedSymbols.filter(({ name, from }) => (from === null ? !FROM_NODE.test(name) : !served.get(from)?.has(name)));
  if (stray.length) {
    throw new Error(
      `${file} needs symbols that neither Node nor libSystem's or the frameworks' stubs serve: ${stray.map((s) => `${s.name} (from ${s.from ?? 'the host'})`).join(', ')}`,
    );
  }
  const fromHost = undefinedSymbols.filter(({ from }) => from === null).length;
  if (fromHost > 0 && (macho.flags & MH_NOUNDEFS) !== 0) {
    throw new Error(`${file} has MH_NOUNDEFS set but leaves ${fromHost} symbols to the host: dyld would not look them up`);
  }
  let signedPages = null;
  if (cpu === 'arm64' || macho.signature) signedPages = verifyAdhocSignature(buf).pages;
  const frameworkSymbols = Object.fromEntries(Object.keys(FRAMEWORKS).map((name) => [name, undefinedSymbols.filter(({ from }) => from === name).length]));
  return { dylibs: macho.dylibs, fromHost, frameworkSymbols, minMacos: macho.minMacos, signedPages, flags: macho.flags };
}
