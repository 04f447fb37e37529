// REP (d): the memory one replica operation costs, in a child process of
// bench/replicate.mjs, so that the peak is that operation's alone.
//
//   node bench/workloads/replicate-memory.mjs --phase snapshot|compact|restore|paged
//        --db <file> --url file:///<replica dir> [--out <file>] [--offloop <package dir>]
//   node bench/workloads/replicate-memory.mjs --phase snapshot --db <file>
//        --url s3://<bucket>/<prefix> --endpoint <S3 server URL>
//
// - snapshot: opens the database with the replica and waits for the first
//   sync, which stages and uploads a full image and an L9 snapshot (to a
//   folder, or to an S3 server: there both go as conditional creates);
// - compact: opens it again with L1 compaction due at once, writes a row,
//   syncs, and waits until the replica holds an L1 file (the merge reads the
//   full image back);
// - restore: `Database.restore` of the replica into `--out`;
// - paged: a paged open of `--out` from the replica, waiting for `filled`.
//
// Prints one JSON line: resident memory after loading the addon (idle),
// the peak during the phase (VmHWM, reset once idle through
// /proc/self/clear_refs), and the growth, in MiB.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { offloopReplicaOptions } from '../lib/replication-modes.mjs';

const { values: opts } = parseArgs({
  options: {
    phase: { type: 'string' },
    db: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
    offloop: { type: 'string', default: ROOT },
    endpoint: { type: 'string' },
  },
});

const MiB = 1 << 20;

/** A field of /proc/self/status in MiB (the kernel reports kB). */
function status(field) {
  const line = fs
    .readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line.split(/\s+/)[1]) / 1024;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForFile(dir) {
  for (let i = 0; i < 600; i++) {
    if (fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.endsWith('.ltx'))) return;
    await sleep(100);
  }
  throw new Error(`no file appeared in ${dir}`);
}

const { Database } = requireOffloop(opts.offloop);
// Everything the phase needs is loaded and the heap settled before the
// peak is reset: what follows is the operation's own.
global.gc?.();
await sleep(200);
const idleMiB = status('VmRSS');
fs.writeFileSync('/proc/self/clear_refs', '5');

const s3 = opts.url.startsWith('s3://') ? new URL(opts.url) : null;
if (s3 && opts.phase !== 'snapshot') throw new Error('only the snapshot phase runs against S3');
const replicaDir = new URL(opts.url).pathname;
switch (opts.phase) {
  case 'snapshot': {
    const replica = s3
      ? offloopReplicaOptions({ type: 's3', endpoint: opts.endpoint, bucket: s3.host, prefix: s3.pathname.slice(1) }, 60_000)
      : { url: opts.url, syncInterval: 60_000 };
    const db = await Database.open(opts.db, { replica });
    await db.syncReplica();
    await db.close();
    break;
  }
  case 'compact': {
    const db = await Database.open(opts.db, {
      replica: { url: opts.url, syncInterval: 100, compactionIntervals: [1] },
    });
    await db.exec('CREATE TABLE IF NOT EXISTS memory_probe(x)');
    await db.prepare('INSERT INTO memory_probe VALUES (1)').run();
    await db.syncReplica();
    await waitForFile(path.join(replicaDir, 'ltx', '1'));
    await db.close();
    break;
  }
  case 'restore':
    await Database.restore(opts.url, opts.out);
    break;
  case 'paged': {
    const db = await Database.open(opts.out, { restore: 'paged', replica: { url: opts.url } });
    await db.filled;
    await db.close();
    break;
  }
  default:
    throw new Error(`unknown phase ${opts.phase}`);
}
const peakMiB = status('VmHWM');
console.log(
  JSON.stringify({
    phase: opts.phase,
    store: s3 ? 's3' : 'folder',
    bytes: fs.statSync(opts.db).size,
    idleMiB: Math.round(idleMiB),
    peakMiB: Math.round(peakMiB),
    growthMiB: Math.round(peakMiB - idleMiB),
    perMiBOfDatabase: Math.round(((peakMiB - idleMiB) * MiB) / fs.statSync(opts.db).size * 100) / 100,
  }),
);
