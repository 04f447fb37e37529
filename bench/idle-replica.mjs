// What an idle replicated database costs the process: the threads (by
// name) and file descriptors that each database with a replica adds, and
// the requests an idle writer makes to S3 per minute. It owns its temp
// folders, its moto server and a counting proxy in front of it on
// 127.0.0.1; it never writes results anywhere but stdout.
//
//   node bench/idle-replica.mjs [--dbs 20] [--settle-s 40] [--idle-s 60] [--lease true|false] [--modes folder,s3]
//
// Threads and fds are read from /proc/self (Linux): a baseline before the
// first open, then with every database open and idle, then a second after
// every close. Requests are counted by the proxy for `--idle-s` seconds,
// from `--settle-s` after every database uploaded its first write: the
// first compaction of that write (30 s after it by default) is work on
// something new, not idle cost.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { ROOT, requireOffloop } from './lib/paths.mjs';
import { countingProxy } from './lib/s3-proxy.mjs';
import { S3_KEYS, S3_REGION, startMoto } from './lib/s3-servers.mjs';

const { Database } = requireOffloop(ROOT);

const { values: args } = parseArgs({
  options: {
    dbs: { type: 'string', default: '20' },
    'settle-s': { type: 'string', default: '40' },
    'idle-s': { type: 'string', default: '60' },
    lease: { type: 'string', default: 'true' },
    modes: { type: 'string', default: 'folder,s3' },
  },
});
const DBS = Number(args.dbs);
const SETTLE_MS = Number(args['settle-s']) * 1000;
const IDLE_MS = Number(args['idle-s']) * 1000;
const LEASE = args.lease !== 'false';

/** Thread names of this process, counted. */
function threads() {
  const names = {};
  for (const id of fs.readdirSync('/proc/self/task')) {
    let name;
    try {
      name = fs.readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    names[name] = (names[name] ?? 0) + 1;
  }
  return names;
}

const fds = () => fs.readdirSync('/proc/self/fd').length;
const total = (names) => Object.values(names).reduce((a, b) => a + b, 0);

/** Per-name difference `after - before`, divided by `n`. */
function perDatabase(before, after, n) {
  const out = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[name] ?? 0) - (before[name] ?? 0);
    if (d !== 0) out[name] = +(d / n).toFixed(2);
  }
  return out;
}

async function openAll(dir, replica) {
  const dbs = [];
  for (let i = 0; i < DBS; i++) {
    const db = await Database.open(path.join(dir, `t${i}.db`), { replica: replica(i) });
    await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)');
    await db.prepare('INSERT INTO t(v) VALUES (?)').run('x');
    await db.syncReplica();
    dbs.push(db);
  }
  return dbs;
}

async function folder() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-idle-'));
  try {
    const before = threads();
    const fdsBefore = fds();
    const dbs = await openAll(dir, (i) => ({ url: `file://${path.join(dir, `r${i}`)}`, lease: LEASE }));
    // Past the first compaction interval's threads coming and going.
    await sleep(2000);
    const open = threads();
    const fdsOpen = fds();
    await Promise.all(dbs.map((db) => db.close()));
    await sleep(1000);
    const closed = threads();
    console.log(
      JSON.stringify(
        {
          mode: 'folder',
          dbs: DBS,
          lease: LEASE,
          threadsPerDb: +((total(open) - total(before)) / DBS).toFixed(2),
          threadsByName: perDatabase(before, open, DBS),
          fdsPerDb: +((fdsOpen - fdsBefore) / DBS).toFixed(2),
          threadsLeftAfterClose: total(closed) - total(before),
          leftByName: perDatabase(before, closed, 1),
        },
        null,
        2,
      ),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function s3() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-idle-'));
  const moto = await startMoto({ buckets: ['replica'] });
  const proxy = await countingProxy(moto.port);
  try {
    const s3 = { endpoint: proxy.endpoint, region: S3_REGION, ...S3_KEYS, forcePathStyle: true };
    const dbs = await openAll(dir, (i) => ({ url: `s3://replica/t${i}`, lease: LEASE, ...s3 }));
    const opening = proxy.take();
    await sleep(SETTLE_MS);
    const settling = proxy.take();
    await sleep(IDLE_MS);
    const idle = proxy.take();
    const perMinute = {};
    for (const [k, n] of Object.entries(idle)) perMinute[k] = +((n / DBS / IDLE_MS) * 60_000).toFixed(2);
    await Promise.all(dbs.map((db) => db.close()));
    console.log(
      JSON.stringify({ mode: 's3', dbs: DBS, lease: LEASE, settleSeconds: SETTLE_MS / 1000, idleSeconds: IDLE_MS / 1000, opening, settling, idle, perMinutePerDb: perMinute }, null, 2),
    );
  } finally {
    await proxy.stop();
    await moto.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const modes = args.modes.split(',');
if (modes.includes('folder')) await folder();
if (modes.includes('s3')) await s3();
