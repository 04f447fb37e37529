// The outside programs of the replication benchmarks — litestream and
// moto_server (an S3 server) — found where `npm test` installs them
// (the repository's .venv/bin) or on the PATH, with their versions, the
// environment they run in, and the CPU time a process has used. Starts
// nothing itself.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT } from './paths.mjs';

/** The path of an installed tool, or null. */
export function findTool(name) {
  const dirs = [path.join(ROOT, '.venv', 'bin'), ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean)];
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // Not here.
    }
  }
  return null;
}

/**
 * The environment the tools run in: an `AWS_CA_BUNDLE` that names no usable
 * bundle makes Litestream's S3 client fail, and the S3 servers here are
 * plain http on loopback, so it goes.
 */
export function toolEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.AWS_CA_BUNDLE;
  return env;
}

/** Litestream's and moto's versions (null where the tool is missing). */
export function toolVersions() {
  const litestream = findTool('litestream');
  const moto = findTool('moto_server');
  const out = { litestream: null, moto: null };
  if (litestream) out.litestream = spawnSync(litestream, ['version'], { encoding: 'utf8' }).stdout.trim() || null;
  if (moto) {
    // moto_server is a Python entry point; the Python next to it knows moto's version.
    const python = path.join(path.dirname(moto), 'python');
    const bin = fs.existsSync(python) ? python : 'python3';
    const r = spawnSync(bin, ['-c', 'import moto; print(moto.__version__)'], { encoding: 'utf8' });
    out.moto = r.status === 0 ? r.stdout.trim() : null;
  }
  return out;
}

// /proc/<pid>/stat counts CPU time in USER_HZ ticks, 100 a second on Linux.
const TICKS_PER_SECOND = 100;

/**
 * The CPU time (user + system, s) in a /proc/<pid>/stat text: the
 * process's own, and with `children` that of the children it waited for.
 */
export function cpuSecondsFromStat(stat, { children = false } = {}) {
  // The command name (field 2) may hold spaces; the fields after it don't.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14–17, i.e. 11–14 after the name.
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
  return (utime + stime + (children ? cutime + cstime : 0)) / TICKS_PER_SECOND;
}

/** The CPU time (s) the process `pid` has used so far, or null once it is gone. */
export function processCpuSeconds(pid) {
  try {
    return cpuSecondsFromStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * CPU ms per thread of the process `pid` so far, by thread name with any
 * trailing number dropped (offloop-reader-2 counts as offloop-reader); the
 * main thread is `js`. Linux cuts names to 15 characters: offloop-replicator
 * and offloop-replica-io both count as offloop-replica. From each task's schedstat under /proc/<pid>/task (ns, exact).
 */
export function threadCpuMs(pid = process.pid) {
  const out = {};
  const dir = `/proc/${pid}/task`;
  for (const tid of fs.readdirSync(dir)) {
    try {
      const comm = fs.readFileSync(`${dir}/${tid}/comm`, 'utf8').trim();
      const name = tid === String(pid) ? 'js' : comm.replace(/[-\d]+$/, '');
      const ms = Number(fs.readFileSync(`${dir}/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      out[name] = (out[name] ?? 0) + ms;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
