// REP (b): replication lag at a steady commit rate, in one replication
// mode, in one child process of bench/replicate.mjs.
//
//   node bench/workloads/replicate-lag.mjs --mode <id> --dir <scratch> [--rate 1000]
//        [--seconds 20] [--warmup 3] [--tail 3] [--sync-interval 1000]
//        [--offloop <package dir>] [replica arguments]
//
// Commits one ~200-byte row at a time, paced (commit i is issued at
// i / rate s, whatever the earlier ones are doing), and records when each
// commit was acknowledged, by row id. The parent watches the replica from
// outside and finds out which commits each replica file holds; this
// process only says when it acknowledged what. With offloop replicating,
// it also samples `db.stats().replica.txid` about every millisecond and
// records when each TXID first showed there, as a cross-check. After the
// paced run it keeps the database open for `tail` s, so the replica can
// take the last commits the normal way. Prints one JSON line.

import crypto from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { startLitestream } from '../lib/litestream.mjs';
import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { epochNow } from '../lib/replica-watch.mjs';
import { REPLICA_ARG_OPTIONS, modeById, offloopReplicaOptions, replicaFromArgs } from '../lib/replication-modes.mjs';

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string' },
    dir: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    tail: { type: 'string', default: '3' },
    'sync-interval': { type: 'string', default: '1000' },
    offloop: { type: 'string', default: ROOT },
    ...REPLICA_ARG_OPTIONS,
  },
});
const mode = modeById(opts.mode);
const replica = replicaFromArgs(mode, opts);
const RATE = Number(opts.rate);
const SYNC_INTERVAL_MS = Number(opts['sync-interval']);
const WARMUP_COMMITS = Math.round(Number(opts.warmup) * RATE);
const TOTAL_COMMITS = WARMUP_COMMITS + Math.round(Number(opts.seconds) * RATE);
const BODY_BYTES = 184;
const bodies = Array.from({ length: 4096 }, () => crypto.randomBytes(BODY_BYTES));

const { Database } = requireOffloop(opts.offloop);
const file = path.join(opts.dir, 'lag.db');
const db = await Database.open(file, mode.replicator === 'offloop' ? { replica: offloopReplicaOptions(replica, SYNC_INTERVAL_MS) } : {});
await db.exec('CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER NOT NULL, body BLOB NOT NULL)');
const sidecar =
  mode.replicator === 'litestream'
    ? await startLitestream({ db: file, replica, dir: path.join(opts.dir, 'litestream'), syncIntervalMs: SYNC_INTERVAL_MS })
    : null;
const insert = db.prepare('INSERT INTO events(id, at, body) VALUES (?, ?, ?)');

// When each TXID first showed in stats().replica (offloop's own account).
const statsFirstSeen = [];
let statsTxid = -1;
function sampleStats() {
  const txid = db.stats().replica?.txid;
  if (txid === undefined || txid <= statsTxid) return;
  const at = epochNow();
  for (let t = Math.max(statsTxid + 1, 0); t <= txid; t++) statsFirstSeen.push([t, at]);
  statsTxid = txid;
}

const ackAt = new Float64Array(TOTAL_COMMITS);
const issueLateMs = new Float64Array(TOTAL_COMMITS);
const failures = [];
const pending = [];
const t0 = performance.now();
const startedAt = epochNow();
let issued = 0;
while (issued < TOTAL_COMMITS) {
  const elapsed = performance.now() - t0;
  const due = Math.min(TOTAL_COMMITS, Math.floor((elapsed * RATE) / 1000) + 1);
  while (issued < due) {
    const i = issued++;
    issueLateMs[i] = elapsed - (i * 1000) / RATE;
    pending.push(
      insert.run(i + 1, Date.now(), bodies[i & 4095]).then(
        () => {
          ackAt[i] = epochNow();
        },
        (err) => failures.push(`${i + 1}: ${err.message}`),
      ),
    );
  }
  if (mode.replicator === 'offloop') sampleStats();
  await sleep(1);
}
await Promise.all(pending);
const pacedMs = performance.now() - t0;
const tailEnd = performance.now() + Number(opts.tail) * 1000;
while (performance.now() < tailEnd) {
  if (mode.replicator === 'offloop') sampleStats();
  await sleep(1);
}
const replicaAtEnd = db.stats().replica;
await sidecar?.stop();
await db.close();

const measured = Array.from(ackAt.subarray(WARMUP_COMMITS), (t) => Math.round((t - startedAt) * 100) / 100);
const late = Float64Array.from(issueLateMs.subarray(WARMUP_COMMITS)).sort();
console.log(
  JSON.stringify({
    node: process.version,
    mode: mode.id,
    rate: RATE,
    syncIntervalMs: SYNC_INTERVAL_MS,
    startedAt,
    // Commit ids firstMeasuredId.. were acknowledged at startedAt + ackMs[k].
    firstMeasuredId: WARMUP_COMMITS + 1,
    ackMs: measured,
    pacedMs,
    achievedRate: (TOTAL_COMMITS * 1000) / pacedMs,
    issueLateMs: { p50: late[Math.floor(late.length / 2)], p99: late[Math.floor(late.length * 0.99)], max: late.at(-1) },
    statsFirstSeen,
    replicaAtEnd,
    failures: failures.slice(0, 5),
    failureCount: failures.length,
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage()) + (sidecar?.cpuSeconds() ?? 0),
  }),
);
