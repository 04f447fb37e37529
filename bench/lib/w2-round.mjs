// One round of the W2 workload (bench/workloads/w2.mjs) for one
// configuration, as classic (W2) and runtimes run it: a fresh copy of the
// seed table, the workload in a child process, its get() rate on stderr,
// and the copy removed afterwards.

import fs from 'node:fs';
import path from 'node:path';

import { runChild } from './child.mjs';
import { BENCH } from './paths.mjs';

const WORKLOAD = path.join(BENCH, 'workloads', 'w2.mjs');

/**
 * Runs the workload for `config` (`id`, `peer`) with `bin` and `binArgs`
 * (a runtime's own flags before the script): `cells`, each for `cellMs`,
 * `inFlight` calls at once, offloop from `offloopDir`. Resolves to the
 * child's result, or `{ error }` when it failed.
 */
export async function runW2Round({ config, bin, binArgs = [], seed, dir, round, label, cells, cellMs, inFlight, offloopDir, timeoutMs }) {
  const file = path.join(dir, `${config.id}-${round}.db`);
  fs.copyFileSync(seed, file);
  const args = [...binArgs, WORKLOAD, '--peer', config.peer, '--file', file, '--cells', cells.join(',')];
  args.push('--ms', String(cellMs), '--in-flight', String(inFlight));
  if (config.peer === 'offloop') args.push('--offloop', offloopDir);
  process.stderr.write(`  ${label}round ${round + 1}: ${config.id} ... `);
  try {
    const { result } = await runChild(bin, args, { timeoutMs });
    const get = result.cells.find((c) => c.task === 'get');
    process.stderr.write(`get ${Math.round((get.ops / get.wallMs) * 1000).toLocaleString('en-US')}/s (${get.mode})\n`);
    return result;
  } catch (err) {
    process.stderr.write(`FAILED: ${err.message}\n`);
    return { error: err.message };
  } finally {
    for (const f of fs.readdirSync(dir)) if (f.startsWith(`${config.id}-${round}.db`)) fs.rmSync(path.join(dir, f));
  }
}
