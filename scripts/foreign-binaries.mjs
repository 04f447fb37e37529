// The checks a Windows or macOS addon built on Linux passes before it is
// kept (build-target.mjs): the right file format and CPU, the one export
// Node looks for (napi_register_module_v1), and imports a stock system
// has. It reads the binaries with MinGW-w64's objdump (Windows) and LLVM's
// llvm-objdump and llvm-nm (macOS), both from Debian; it never runs them.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

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

// Mach-O (loader.h): the 64-bit magic as read little-endian, the CPU types,
// and the file types an addon can be.
const MH_MAGIC_64 = 0xfeedfacf;
const CPU_TYPES = { x64: 0x01000007, arm64: 0x0100000c };
const MH_DYLIB = 6;
const MH_BUNDLE = 8;
const LIBSYSTEM = '/usr/lib/libSystem.B.dylib';
// The two system frameworks the S3 client's TLS verifier uses (the
// keychain), part of every macOS.
const FRAMEWORKS = new Map([
  ['/System/Library/Frameworks/Security.framework/Versions/A/Security', 'Security'],
  ['/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation', 'CoreFoundation'],
]);
// What the addon leaves to the host process: Node-API and libuv.
const FROM_NODE = /^_(napi_|uv_)/;

/**
 * Throws unless `file` is a Mach-O library for `cpu` ('x64' or 'arm64')
 * that exports the module entry, links only libSystem and the two system
 * frameworks above, and leaves to the host nothing but Node-API and libuv.
 */
export function checkMacAddon(file, cpu) {
  const header = Buffer.alloc(16);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, header, 0, header.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (header.readUInt32LE(0) !== MH_MAGIC_64) throw new Error(`${file} is not a 64-bit Mach-O file`);
  const cpuType = header.readUInt32LE(4);
  if (cpuType !== CPU_TYPES[cpu]) throw new Error(`${file} is for CPU type 0x${cpuType.toString(16)}, not ${cpu}`);
  const fileType = header.readUInt32LE(12);
  if (fileType !== MH_DYLIB && fileType !== MH_BUNDLE) throw new Error(`${file} is Mach-O file type ${fileType}, not a library`);

  const exported = output('llvm-nm', ['--extern-only', '--defined-only', file]);
  if (!/ _napi_register_module_v1$/m.test(exported)) throw new Error(`${file} does not export napi_register_module_v1`);

  // The first line names the file itself.
  const dylibs = output('llvm-objdump', ['--macho', '--dylibs-used', file])
    .split('\n')
    .slice(1)
    .map((line) => line.trim().replace(/ \(compatibility version.*$/, ''))
    .filter(Boolean);
  const linked = dylibs.filter((lib) => lib !== LIBSYSTEM && !FRAMEWORKS.has(lib));
  if (linked.length) throw new Error(`${file} links libraries beyond libSystem: ${linked.join(', ')}`);
  const fromSystem = new Set(['from libSystem', ...[...FRAMEWORKS.values()].map((name) => `from ${name}`)]);

  // `llvm-nm -m` says where each undefined symbol is bound: "(from
  // libSystem)" or, for what the host provides, "(dynamically looked up)".
  const undefinedSymbols = output('llvm-nm', ['-m', '--undefined-only', file])
    .split('\n')
    .filter(Boolean)
    .map((line) => line.match(/external (\S+)(?: \((.*)\))?$/))
    .filter(Boolean)
    .map(([, name, from]) => ({ name, from: from ?? '' }));
  const stray = undefinedSymbols.filter(
    ({ name, from }) => !fromSystem.has(from) && !(from === 'dynamically looked up' && FROM_NODE.test(name)),
  );
  if (stray.length) {
    throw new Error(`${file} needs symbols from outside Node-API, libuv and libSystem: ${stray.map((s) => `${s.name} (${s.from})`).join(', ')}`);
  }
  return { dylibs, fromHost: undefinedSymbols.filter(({ from }) => from === 'dynamically looked up').length };
}
