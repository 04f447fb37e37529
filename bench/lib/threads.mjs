// CPU time per thread of this process, from /proc/self/task/*/schedstat:
// the time each thread ran, leaving out the time it waited for a core on
// a loaded machine. Linux only; elsewhere every figure is empty.

import fs from 'node:fs';

/** CPU ms per thread name (the JS thread is `js`; numbered names such as offloop-reader-2 kept apart). */
export function threadCpu() {
  const out = {};
  const dir = `/proc/${process.pid}/task`;
  let tids = [];
  try {
    tids = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = tid === String(process.pid) ? 'js' : fs.readFileSync(`${dir}/${tid}/comm`, 'utf8').trim();
      const ms = Number(fs.readFileSync(`${dir}/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      out[name] = (out[name] ?? 0) + ms;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** The CPU ms each thread used between two `threadCpu()` readings. */
export function threadCpuSince(before, after = threadCpu()) {
  const out = {};
  for (const [name, ms] of Object.entries(after)) out[name] = ms - (before[name] ?? 0);
  return out;
}
