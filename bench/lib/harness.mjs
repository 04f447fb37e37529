// What every benchmark does around its measurements: wait for a quiet
// machine, snapshot the offloop build, make a scratch folder, start the
// report with the machine and the build, and clean up at the end.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { snapshotOffloop } from './build.mjs';
import { cpuBusyPercent, machine } from './machine.mjs';
import { waitForQuiet } from './quiet.mjs';
import { round } from './stats.mjs';

/**
 * `label` names the benchmark in the quiet-machine wait, `tmpName` its
 * scratch folder. Returns the snapshot (`offloop`), the folder (`dir`), the
 * report's common fields (`header`) and `finish(report)`.
 */
export async function startBenchmark({ label, maxLoad, tmpName }) {
  const quiet = await waitForQuiet({ maxLoad, label });
  const busyBefore = await cpuBusyPercent();
  // Every run measures the same build, even if the tree is rebuilt meanwhile.
  const offloop = snapshotOffloop();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `offloop-bench-${tmpName}-`));
  return {
    offloop,
    dir,
    header: {
      date: new Date().toISOString().slice(0, 10),
      machine: { ...machine(), cpuBusyPercentBeforeStart: busyBefore, quietAtStart: quiet },
      offloop: offloop.build,
    },
    /** Removes the scratch folder and the snapshot; records the load at the end. */
    finish(report) {
      fs.rmSync(dir, { recursive: true, force: true });
      offloop.cleanup();
      report.machine.loadAverageAtEnd = os.loadavg().map((x) => round(x));
    },
  };
}
