// RT, the awaited round trip: one child process, one peer, one task, on a
// copy of the database bench/roundtrip.mjs built.
//
//   node bench/workloads/roundtrip.mjs --peer offloop|sqlite3|better-sqlite3
//        --task floor|get|run|all|get-inflight --file <db> [--ms 2000]
//        [--warmup-ms 300] [--in-flight 64] [--readers 4] [--offloop <package dir>]
//
// Tasks: `floor` awaits offloop's echo thread (a Rust thread that answers at
// once through offloop's completion path, no SQLite); `get` a one-row
// SELECT by rowid; `run` a one-row INSERT; `all` a 10-row SELECT;
// `get-inflight` the same get with `in-flight` calls outstanding. offloop
// and sqlite3 await each call before the next (sqlite3 through a prepared
// statement's get()); better-sqlite3 calls get() in a loop.
//
// Reports calls, wall time, the process's CPU time, the JS thread's CPU
// time (/proc/self/task/<pid>/schedstat) and the context switches of every
// thread of the process (/proc/self/task/*/status), and prints one JSON line.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';

import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';

const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    task: { type: 'string' },
    file: { type: 'string' },
    ms: { type: 'string', default: '2000' },
    'warmup-ms': { type: 'string', default: '300' },
    'in-flight': { type: 'string', default: '64' },
    readers: { type: 'string', default: '4' },
    offloop: { type: 'string', default: ROOT },
  },
});
const IN_FLIGHT = Number(opts['in-flight']);
const ROWS = 1000;

const GET = 'SELECT * FROM t WHERE id = ?';
const ALL = 'SELECT * FROM t WHERE id > ? ORDER BY id LIMIT 10';
const RUN = 'INSERT INTO log(n, note) VALUES (?, ?)';

let seq = 0;
const nextId = () => (seq++ % ROWS) + 1;
const nextAllStart = () => seq++ % (ROWS - 10);

/** Calls `call()` awaited one at a time (or `inFlight` at once) for `ms`. */
async function awaited(call, ms, inFlight = 1) {
  const end = performance.now() + ms;
  let n = 0;
  const caller = async () => {
    while (performance.now() < end) {
      await call();
      n += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, caller));
  return n;
}

const adapters = {
  async offloop(task) {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { readers: Number(opts.readers), synchronous: 'NORMAL' });
    const version = JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version;
    const close = () => db.close();
    if (task === 'floor') {
      // The addon's internals, as lib/ uses them: a call tracked like any
      // other, answered by the echo thread.
      const { native, track } = createRequire(path.join(opts.offloop, 'package.json'))('./lib/calls.js');
      const echo = new native.NativeEcho();
      const call = () => {
        const { id, promise } = track(null, null);
        echo.echo(id);
        return promise;
      };
      return { version, run: (ms) => awaited(call, ms), close: () => (echo.close(), close()) };
    }
    const get = db.prepare(GET);
    const all = db.prepare(ALL);
    const ins = db.prepare(RUN);
    const calls = {
      get: () => get.get(nextId()),
      all: () => all.all(nextAllStart()),
      run: () => ins.run(seq++, 'a note of some twenty bytes'),
    };
    if (task === 'get-inflight') return { version, run: (ms) => awaited(calls.get, ms, IN_FLIGHT), close };
    return { version, run: (ms) => awaited(calls[task], ms), close };
  },
  async sqlite3(task) {
    const sqlite3 = benchRequire('sqlite3');
    const db = await new Promise((resolve, reject) => {
      const d = new sqlite3.Database(opts.file, (err) => (err ? reject(err) : resolve(d)));
    });
    const exec = (sql) => new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
    await exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    const stmt = db.prepare({ get: GET, all: ALL, run: RUN }[task]);
    const promised = (method, ...args) =>
      new Promise((resolve, reject) => stmt[method](...args, function done(err, value) {
        if (err) reject(err);
        else resolve(method === 'run' ? this : value);
      }));
    const calls = {
      get: () => promised('get', nextId()),
      all: () => promised('all', nextAllStart()),
      run: () => promised('run', seq++, 'a note of some twenty bytes'),
    };
    return {
      version: benchRequire('sqlite3/package.json').version,
      run: (ms) => awaited(calls[task], ms),
      close: () => new Promise((resolve) => stmt.finalize(() => db.close(resolve))),
    };
  },
  async 'better-sqlite3'(task) {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(opts.file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const stmt = db.prepare({ get: GET, all: ALL, run: RUN }[task]);
    const calls = {
      get: () => stmt.get(nextId()),
      all: () => stmt.all(nextAllStart()),
      run: () => stmt.run(seq++, 'a note of some twenty bytes'),
    };
    const call = calls[task];
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      run: async (ms) => {
        const end = performance.now() + ms;
        let n = 0;
        while (performance.now() < end) {
          call();
          n += 1;
        }
        return n;
      },
      close: () => db.close(),
    };
  },
};

/** Context switches so far, over every thread of this process. */
function switches() {
  let voluntary = 0;
  let involuntary = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const status = fs.readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]);
      involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return { voluntary, involuntary };
}

/** The JS thread's CPU time so far, in ms. */
function jsThreadCpuMs() {
  return Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const peer = await open(opts.task);
await peer.run(Number(opts['warmup-ms']));
const s0 = switches();
const js0 = jsThreadCpuMs();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const calls = await peer.run(Number(opts.ms));
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const jsMs = jsThreadCpuMs() - js0;
const s1 = switches();
await peer.close();

console.log(
  JSON.stringify({
    node: process.version,
    peer: opts.peer,
    task: opts.task,
    version: peer.version,
    calls,
    wallMs,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    jsThreadCpuMs: jsMs,
    switches: { voluntary: s1.voluntary - s0.voluntary, involuntary: s1.involuntary - s0.involuntary },
    // Everything this process used, start-up included: the parent tells
    // other work on the machine from it.
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage()),
  }),
);
