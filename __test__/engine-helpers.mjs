// Shared helpers for the engine-level suites (threading and lifecycle).
// Not a test file itself: node --test only picks up *.test.mjs.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The package root (where index.js lives). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The public API, loaded the way a CommonJS user loads it. */
export const { Database } = require(path.join(ROOT, 'index.js'));

/** A fresh temporary directory for one test file; removed by `cleanup()`. */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `offloop-${prefix}-`));
  let n = 0;
  return {
    dir,
    /** A new database file path inside the directory. */
    file(name = 'db') {
      n += 1;
      return path.join(dir, `${name}-${n}.db`);
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sum of `executed` over every reader. */
export function readerExecuted(stats) {
  return stats.readers.reduce((sum, r) => sum + r.executed, 0);
}

/**
 * A recursive CTE counting 1..? and returning how many rows it produced.
 * Its run time grows with the parameter, which makes it the suites' "long
 * read" without any user-defined function.
 */
export const COUNT_TO = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c';

/** Waits until `predicate()` is true, yielding to the event loop between checks. */
export async function until(predicate, what, maxChecks = 20000) {
  for (let i = 0; i < maxChecks; i++) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`gave up waiting for: ${what}`);
}

/**
 * Runs `source` (CommonJS) in a child Node process. `OFFLOOP` in the
 * script's scope is the package's index.js path. Resolves with
 * `{ code, signal, stdout, stderr }`; a child still running after
 * `killAfterMs` is killed (and `signal` says so), so a hang fails the test
 * instead of stalling the suite.
 */
export function runChild(dir, source, { args = [], killAfterMs = 30000, env = {} } = {}) {
  const file = path.join(dir, `child-${process.pid}-${Math.random().toString(36).slice(2)}.cjs`);
  fs.writeFileSync(file, `const OFFLOOP = ${JSON.stringify(path.join(ROOT, 'index.js'))};\n${source}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
