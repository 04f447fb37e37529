// Waiting for a shared machine to be quiet before timing anything. Other
// engineers' tests and benchmarks run on the same 2 cores; numbers taken
// under their load are slower and noisier, ratios included (the peers are
// single-threaded, offloop is not). The 1-minute load average is the
// measure: the published numbers are taken below `maxLoad`.

import os from 'node:os';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the 1-minute load average is below `maxLoad`, checking every
 * 10 s, for at most `maxWaitMs`. Resolves to the load average at the end
 * and whether it was quiet.
 */
export async function waitForQuiet({ maxLoad = 1.0, maxWaitMs = 600_000, label = 'benchmark' } = {}) {
  const started = Date.now();
  let load = os.loadavg()[0];
  while (load >= maxLoad && Date.now() - started < maxWaitMs) {
    console.error(`${label}: load average ${load.toFixed(2)} ≥ ${maxLoad}; waiting for the machine to settle`);
    await sleep(10_000);
    load = os.loadavg()[0];
  }
  if (load >= maxLoad) console.error(`${label}: warning: load average still ${load.toFixed(2)}; timings will be noisy`);
  return { loadAverage: Math.round(load * 100) / 100, quiet: load < maxLoad, waitedMs: Date.now() - started };
}

/** Node's major version from a version string (`v20.20.2` → 20). */
export function nodeMajor(version) {
  return Number(/^v?(\d+)/.exec(version)[1]);
}
