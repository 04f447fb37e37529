// What a process holds right now, read from /proc/<pid> (Linux): its
// threads, its open file descriptors, its resident memory, the CPU time it
// used and the open-files limit in force. For benchmarks that count what a
// process costs (bench/tenants.mjs); it starts and stops nothing.

import fs from 'node:fs';

import { processCpuSeconds } from './tools.mjs';

function entries(dir) {
  try {
    return fs.readdirSync(dir).length;
  } catch {
    return null;
  }
}

/** A field of /proc/<pid>/status in KiB (the kernel writes "kB"), or null. */
function statusKiB(pid, field) {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) : null;
  } catch {
    return null;
  }
}

/**
 * `{ threads, fds, rssKiB, cpuSeconds }` of the process `pid`, each null
 * once it is gone. Listing /proc/self/fd opens one descriptor to do it;
 * that one is not counted.
 */
export function processFigures(pid = process.pid) {
  const self = pid === process.pid;
  const fds = entries(`/proc/${pid}/fd`);
  return {
    threads: entries(`/proc/${pid}/task`),
    fds: fds === null ? null : fds - (self ? 1 : 0),
    rssKiB: statusKiB(pid, 'VmRSS'),
    cpuSeconds: processCpuSeconds(pid),
  };
}

/** The sum of several processes' figures (a null figure counts as 0). */
export function addFigures(...list) {
  const out = { threads: 0, fds: 0, rssKiB: 0, cpuSeconds: 0 };
  for (const f of list) for (const k of Object.keys(out)) out[k] += f?.[k] ?? 0;
  return out;
}

/** The open-files limit of `pid` as `{ soft, hard }` (null for unlimited), or null once it is gone. */
export function openFilesLimit(pid = process.pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
  } catch {
    return null;
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return null;
  const value = (s) => (s === 'unlimited' ? null : Number(s));
  return { soft: value(m[1]), hard: value(m[2]) };
}
