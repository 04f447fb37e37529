// The public types are tested: types/api.mts (ES modules) and
// types/api-cjs.cts (CommonJS) use the whole API, core and adapters, and
// must compile with `tsc --noEmit`; their @ts-expect-error lines are wrong
// uses the types must refuse (an accepted one fails the compile too).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../engine-helpers.mjs';

test('the public types compile, and refuse the wrong uses marked @ts-expect-error', async () => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const project = path.join(ROOT, '__test__', 'api', 'types', 'tsconfig.json');
  const { code, signal, output } = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '--noEmit', '-p', project], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
  assert.equal(signal, null, output);
  assert.equal(code, 0, output);
});
