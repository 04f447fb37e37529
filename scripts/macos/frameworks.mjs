// The two macOS frameworks the addon links (Security and CoreFoundation,
// which the S3 client's TLS verifier and chrono's time zone lookup use),
// as text-based stubs (.tbd) a linker on Linux can link against: each
// names the framework's install path and the symbols the addon imports
// from it, so the linker records the framework as a dependency and binds
// those symbols to it, two-level, and the real framework serves them on
// the Mac. No macOS SDK is needed.
//
// The symbols are kept in framework-symbols.json beside this file, made by
// `node scripts/macos/frameworks.mjs update <addon.node>...`: each addon
// given was linked against stubs that list nothing
// (`OFFLOOP_MACOS_STUBS=empty node scripts/build-target.mjs darwin-arm64`
// leaves one in target/napi-out/, after its check fails naming every
// framework symbol), so every framework symbol it imports was left to
// lookup in the host; those are sorted into the two frameworks by their
// names' prefixes (CF → CoreFoundation, Sec → Security). Run it again
// whenever a dependency starts to import another framework symbol: the
// check of a build (foreign-binaries.mjs) fails until then, naming it.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SYMBOLS_FILE = path.join(HERE, 'framework-symbols.json');

/** Each framework's install path on every macOS. */
export const FRAMEWORKS = {
  Security: '/System/Library/Frameworks/Security.framework/Versions/A/Security',
  CoreFoundation: '/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation',
};

// Which framework a symbol's name belongs to (the C names, with Mach-O's
// leading underscore). CoreFoundation's private functions start with __CF.
const PREFIXES = [
  [/^_{1,3}k?CF/, 'CoreFoundation'],
  [/^_k?Sec/, 'Security'],
];

/** The framework a symbol comes from, by its name; null when none matches. */
export function frameworkOf(symbol) {
  return PREFIXES.find(([pattern]) => pattern.test(symbol))?.[1] ?? null;
}

/** Every symbol a .tbd file lists (exports, re-exports, weak ones, in any of its documents). */
export function tbdSymbols(text) {
  const out = new Set();
  for (const m of text.matchAll(/(?:^|\s)(?:symbols|weak-symbols|thread-local-symbols):\s*\[([^\]]*)\]/g)) {
    for (const name of m[1].split(',')) {
      const symbol = name.trim().replace(/^'|'$/g, '');
      if (symbol) out.add(symbol);
    }
  }
  return out;
}

/** A .tbd for `framework` that exports `symbols`, for both macOS CPUs. */
export function tbdText(framework, symbols) {
  const list = [...symbols].sort().map((s) => `'${s}'`);
  return [
    '--- !tapi-tbd',
    'tbd-version:     4',
    'targets:         [ x86_64-macos, arm64-macos ]',
    `install-name:    '${FRAMEWORKS[framework]}'`,
    'current-version: 0',
    'exports:',
    '  - targets:         [ x86_64-macos, arm64-macos ]',
    `    symbols:         [ ${list.join(', ')} ]`,
    '...',
    '',
  ].join('\n');
}

/** The kept symbols: `{ Security: [...], CoreFoundation: [...] }`. */
export function keptSymbols() {
  return JSON.parse(fs.readFileSync(SYMBOLS_FILE, 'utf8'));
}

/**
 * Writes `<dir>/<Name>.framework/<Name>.tbd` for both frameworks (the
 * layout a linker's `-F <dir>` searches) and `<dir>/lib/libiconv.tbd` (for
 * `-L <dir>/lib`: the libc crate asks for libiconv on Apple targets, and
 * nothing calls it, so `-dead_strip_dylibs` drops it again; a call would
 * show as a symbol no stub serves). Returns `{ linkArgs, digest }`: the
 * linker arguments, and a SHA-256 of the stubs' text (cargo does not see
 * the stubs: the caller links the addon again when it changes). `symbols`
 * defaults to the kept ones; `{}` writes stubs that list nothing.
 */
export function writeStubs(dir, symbols = keptSymbols()) {
  const stubs = Object.keys(FRAMEWORKS).map((framework) => [
    path.join(dir, `${framework}.framework`, `${framework}.tbd`),
    tbdText(framework, symbols[framework] ?? []),
  ]);
  stubs.push([
    path.join(dir, 'lib', 'libiconv.tbd'),
    ['--- !tapi-tbd', 'tbd-version:     4', 'targets:         [ x86_64-macos, arm64-macos ]', "install-name:    '/usr/lib/libiconv.2.dylib'", 'current-version: 0', '...', ''].join('\n'),
  ]);
  const hash = crypto.createHash('sha256');
  for (const [file, text] of stubs) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    hash.update(text);
  }
  return { linkArgs: [`-F${dir}`, `-L${path.join(dir, 'lib')}`, '-Wl,-dead_strip_dylibs'], digest: hash.digest('hex') };
}

/**
 * Each undefined symbol of `file` with the library it is bound to, as
 * `llvm-nm -m` says: `libSystem`, `Security`, ..., or `null` for one left
 * to lookup in the host process (flat namespace, or "dynamically looked up").
 */
export function importedSymbols(file) {
  const result = spawnSync('llvm-nm', ['-m', '--undefined-only', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`llvm-nm ${file}: ${result.stderr || result.error?.message}`);
  return result.stdout
    .split('\n')
    .map((line) => line.match(/external (\S+)(?: \((.*)\))?$/))
    .filter(Boolean)
    .map(([, name, from]) => ({ name, from: from?.startsWith('from ') ? from.slice(5) : null }));
}

/** The symbols `file` leaves to lookup in the host process. */
export function lookedUpSymbols(file) {
  return importedSymbols(file)
    .filter(({ from }) => from === null)
    .map(({ name }) => name);
}

/** The kept lists made again from addons linked against empty stubs. */
function update(files) {
  const found = { Security: new Set(), CoreFoundation: new Set() };
  const unknown = new Set();
  for (const file of files) {
    for (const symbol of lookedUpSymbols(file)) {
      if (/^_(napi_|node_api_|uv_)/.test(symbol)) continue;
      const framework = frameworkOf(symbol);
      if (framework) found[framework].add(symbol);
      else unknown.add(symbol);
    }
  }
  if (unknown.size) throw new Error(`symbols of no known framework: ${[...unknown].join(', ')}`);
  const kept = Object.fromEntries(Object.entries(found).map(([k, v]) => [k, [...v].sort()]));
  fs.writeFileSync(SYMBOLS_FILE, `${JSON.stringify(kept, null, 1)}\n`);
  console.log(`wrote ${path.basename(SYMBOLS_FILE)}: ${kept.Security.length} Security, ${kept.CoreFoundation.length} CoreFoundation symbols`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command, ...files] = process.argv.slice(2);
  if (command === 'update' && files.length > 0) update(files);
  else if (command === 'stubs' && files.length === 1) console.log(writeStubs(path.resolve(files[0])).linkArgs.join(' '));
  else {
    console.error('usage: node scripts/macos/frameworks.mjs update <addon.node>... | stubs <dir>');
    process.exit(2);
  }
}
