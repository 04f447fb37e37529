// One benchmark at a time on this machine. Engineers share it, and two
// benchmarks that each wait for a quiet machine see it quiet at the same
// moment and then time each other's load. `npm run bench` holds this lock
// (a file in the temp dir holding the owner's pid) while a benchmark runs;
// a lock whose owner died is taken over.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LOCK = path.join(os.tmpdir(), 'offloop-bench.lock');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function ownerAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Waits for the lock (at most `maxWaitMs`); resolves to a release function. */
export async function acquireBenchLock({ label, maxWaitMs = 30 * 60_000 } = {}) {
  const started = Date.now();
  let told = false;
  for (;;) {
    try {
      const fd = fs.openSync(LOCK, 'wx');
      fs.writeSync(fd, `${process.pid} ${label ?? ''}\n`);
      fs.closeSync(fd);
      return () => {
        try {
          if (fs.readFileSync(LOCK, 'utf8').startsWith(`${process.pid} `)) fs.unlinkSync(LOCK);
        } catch {
          // Already gone.
        }
      };
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let holder = '';
    try {
      holder = fs.readFileSync(LOCK, 'utf8').trim();
    } catch {
      continue;
    }
    const pid = Number(holder.split(' ')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !ownerAlive(pid)) {
      fs.rmSync(LOCK, { force: true });
      continue;
    }
    if (Date.now() - started > maxWaitMs) throw new Error(`another benchmark (${holder}) held the lock for too long`);
    if (!told) {
      console.error(`waiting for another benchmark to finish (pid ${holder})`);
      told = true;
    }
    await sleep(2000);
  }
}
