// The Windows x64 build made on Linux with MinGW-w64 (Rust's
// x86_64-pc-windows-gnu target): what cargo needs for it, and the check that
// keeps Unix-only code out of the crates:
//
//   node scripts/windows-gnu.mjs check   # cargo check of every crate for Windows
//
// napi-build, on a windows-gnu target, links every Node-API addon against a
// libnode.dll (the Node of MSYS2, built as a DLL) found through LIBNODE_PATH,
// and fails the build without one. offloop links nothing from Node: napi-sys
// (its dyn-symbols feature) and src/node/uv.rs look every Node-API and libuv
// function up in the host node.exe at run time. So the folder handed to it
// holds an import library of node.exe that imports nothing, made with
// MinGW's dlltool, and the .node it produces names no Node module at all
// (build-target.mjs checks its imports).
//
// It installs nothing: .ci/tools installs MinGW-w64 and the Rust target.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { ROOT } from './targets.mjs';

export const WINDOWS_GNU = 'x86_64-pc-windows-gnu';
const DLLTOOL = 'x86_64-w64-mingw32-dlltool';

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

/** The folder napi-build takes as LIBNODE_PATH; made on first use. */
export function libnodeFolder() {
  const dir = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'windows-gnu-libnode');
  const lib = path.join(dir, 'libnode.dll');
  if (!fs.existsSync(lib)) {
    fs.mkdirSync(dir, { recursive: true });
    const def = path.join(dir, 'node.def');
    fs.writeFileSync(def, 'LIBRARY node.exe\nEXPORTS\n');
    // An import library, under the one name napi-build looks for; the
    // linker reads it by its content, an archive with no symbol in it.
    run(DLLTOOL, ['--input-def', def, '--dllname', 'node.exe', '--output-lib', lib]);
  }
  return dir;
}

/** `env` with what a cargo build for windows-gnu needs. */
export function windowsGnuEnv(env = process.env) {
  return { ...env, LIBNODE_PATH: libnodeFolder() };
}

/** `cargo check` of every crate, tests included, for Windows. */
export function checkWindows() {
  run('cargo', ['check', '--workspace', '--all-targets', '--target', WINDOWS_GNU], {
    cwd: ROOT,
    env: windowsGnuEnv(),
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] !== 'check') {
    console.error('usage: node scripts/windows-gnu.mjs check');
    process.exit(2);
  }
  checkWindows();
}
