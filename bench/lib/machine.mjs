// What a result was measured on: the machine and the Nodes on it. Written
// into every results file, so numbers are compared only with numbers from
// the same machine and run.

import fs from 'node:fs';
import os from 'node:os';

import { nodes } from './paths.mjs';

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function osName() {
  const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(read('/etc/os-release'));
  return m ? m[1] : os.type();
}

/** The file system type under `dir` (fsync costs depend on it). */
function fsType(dir) {
  let best = { mount: '', type: null };
  for (const line of read('/proc/mounts').split('\n')) {
    const [, mount, type] = line.split(' ');
    if (!mount) continue;
    const inside = dir === mount || dir.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
    if (inside && mount.length >= best.mount.length) best = { mount, type };
  }
  return best.type;
}

/** The machine and the Nodes on it. */
export function machine() {
  const cpus = os.cpus();
  const { host, node24 } = nodes();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: osName(),
    kernel: os.release(),
    arch: os.arch(),
    tmpFileSystem: fsType(fs.realpathSync(os.tmpdir())),
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    nodes: { host: host.version, node24: node24?.version ?? null },
  };
}

// /proc/stat counts in USER_HZ ticks, 100 a second on Linux.
const TICKS_PER_SECOND = 100;

/** The machine's CPU time so far, all cores added up: `{ idle, total }` in seconds. */
export function cpuTimes() {
  const [, ...fields] = read('/proc/stat').split('\n')[0].trim().split(/\s+/);
  const n = fields.map(Number);
  const idle = n[3] + (n[4] ?? 0);
  return { idle: idle / TICKS_PER_SECOND, total: n.reduce((a, b) => a + b, 0) / TICKS_PER_SECOND };
}

/**
 * The share (0–100) of the machine's CPU that something other than the
 * measured process used between two `cpuTimes()` readings, given the CPU
 * seconds that process used itself: other work on a shared machine skews a
 * run, and this says which runs it touched.
 */
export function otherLoadPercent(before, after, ownCpuSeconds) {
  const total = after.total - before.total;
  if (!(total > 0)) return null;
  const busy = total - (after.idle - before.idle);
  return Math.max(0, Math.round((100 * (busy - ownCpuSeconds)) / total));
}

/**
 * Runs `runOnce()` (which resolves to a result with `cpuSeconds`, or with
 * `error`) again while other processes used more than `maxOtherLoad`
 * percent of the machine's CPU meanwhile, up to `attempts` runs in all.
 * The result records `otherLoadPercent` and `attempts`.
 */
export async function runUndisturbed(runOnce, { attempts, maxOtherLoad }) {
  let result;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const before = cpuTimes();
    result = await runOnce();
    if (result.error) return result;
    result.otherLoadPercent = otherLoadPercent(before, cpuTimes(), result.cpuSeconds);
    result.attempts = attempt;
    if (result.otherLoadPercent === null || result.otherLoadPercent <= maxOtherLoad) break;
    process.stderr.write(`    other processes used ${result.otherLoadPercent}% of the CPU meanwhile; again\n`);
  }
  return result;
}

/**
 * The share of the machine's CPU time (0–100) spent busy over the next
 * `ms`: other work on a shared machine skews every timing, so a benchmark
 * records it before it starts. Null where /proc/stat is missing.
 */
export async function cpuBusyPercent(ms = 2000) {
  const a = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = cpuTimes();
  const total = b.total - a.total;
  if (!Number.isFinite(total) || total <= 0) return null;
  return Math.round((100 * (total - (b.idle - a.idle))) / total);
}

/** One line for a table caption or a README. */
export function describeMachine(m) {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Linux ${m.kernel}, ${m.tmpFileSystem ?? '?'} under the temp dir`;
}
