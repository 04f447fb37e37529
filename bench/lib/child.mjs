// Running one measurement in a fresh child process, bounded in time. A
// child prints its result as one JSON line, the last line of its stdout;
// one run by runChildEvents prints its progress as JSON lines before it.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Runs `bin args…`; resolves to `{ result, stderr, ms }` where `result` is
 * the parsed last stdout line. Rejects when the child fails, prints no
 * result, or outlives `timeoutMs` (it is then killed).
 */
export function runChild(bin, args, { timeoutMs, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs ?? 120_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      const tail = stderr.trim().split('\n').slice(-5).join('\n');
      if (timedOut) return reject(new Error(`timed out after ${Math.round(ms / 1000)} s\n${tail}`));
      if (code !== 0) return reject(new Error(`exited with ${code ?? signal}\n${tail}`));
      const last = stdout.trim().split('\n').pop();
      try {
        resolve({ result: JSON.parse(last), stderr, ms });
      } catch {
        reject(new Error(`printed no JSON result\n${stdout.slice(-500)}\n${tail}`));
      }
    });
  });
}

/**
 * Runs `bin args…` as a child that may die on the way: it prints one JSON
 * object a line, each an event for `onEvent(event, child)` as it comes
 * (`child.pid`, and `child.reply(line)` writes a line to its stdin), the
 * last one `{ result }`. Never rejects for the child's sake; resolves to
 * `{ result, events, exit: { code, signal }, timedOut, stderrTail, ms }`,
 * with `result` null when none came (the events then say how far it got).
 */
export function runChildEvents(bin, args, { timeoutMs = 600_000, onEvent = () => {} } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    // A child that dies leaves its stdin closed: a late reply is dropped.
    child.stdin.on('error', () => {});
    const handle = { pid: child.pid, reply: (line) => child.stdin.writable && child.stdin.write(`${line}\n`) };
    const events = [];
    let result = null;
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let event;
      try {
        event = JSON.parse(line);
      } catch {
        return;
      }
      if (event.result !== undefined) result = event.result;
      else {
        events.push(event);
        onEvent(event, handle);
      }
    });
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderrTail = stderr.trim().split('\n').slice(-8).join('\n');
      resolve({ result, events, exit: { code, signal }, timedOut, stderrTail, ms: performance.now() - started });
    });
  });
}

const SYNC_CALLS = ['fsync', 'fdatasync', 'msync', 'sync_file_range'];

/** Whether strace is installed. */
export function haveStrace() {
  return !spawnSync('strace', ['-V']).error;
}

/**
 * Runs the same child under `strace -f`, tracing only the sync system
 * calls, and counts them by thread. The JavaScript thread is the main
 * thread, whose id is the process id; the child must print it as
 * `result.pid`. Resolves to `{ result, syncs }` with `syncs` =
 * `{ jsThread, otherThreads, otherThreadIds, byCall }`.
 */
export async function runUnderStrace(bin, args, { timeoutMs } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-bench-strace-'));
  const trace = path.join(dir, 'trace.txt');
  try {
    const straceArgs = ['-f', '-qq', '--seccomp-bpf', '-e', `trace=${SYNC_CALLS.join(',')}`, '-o', trace];
    const { result } = await runChild('strace', [...straceArgs, bin, ...args], { timeoutMs });
    const jsThread = String(result.pid);
    const syncs = { jsThread: 0, otherThreads: 0, otherThreadIds: 0, byCall: {} };
    const others = new Set();
    for (const line of fs.readFileSync(trace, 'utf8').split('\n')) {
      // "1234 fdatasync(7 <unfinished ...>" counts; "1234 <... fdatasync resumed>" does not.
      const m = /^(\d+)\s+(\w+)\(/.exec(line);
      if (!m || !SYNC_CALLS.includes(m[2])) continue;
      syncs.byCall[m[2]] = (syncs.byCall[m[2]] ?? 0) + 1;
      if (m[1] === jsThread) syncs.jsThread += 1;
      else {
        syncs.otherThreads += 1;
        others.add(m[1]);
      }
    }
    syncs.otherThreadIds = others.size;
    return { result, syncs };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a server child (`bin args…`) that prints `{ "port": N }` as its
 * first stdout line once it listens; resolves to `{ child, port }`. Rejects
 * if it exits first, prints something else, or has not started in 30 s.
 */
export function startServerChild(bin, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start\n${stderr}`));
    }, 30_000);
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve({ child, port: JSON.parse(line).port });
      } catch {
        reject(new Error(`unexpected server output: ${line}\n${stderr}`));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}\n${stderr}`));
    });
  });
}

/** Stops a server child: SIGTERM, then SIGKILL after 10 s; resolves once it exited. */
export function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
