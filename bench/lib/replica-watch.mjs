// Watching a replica from outside, as a restore would see it: which L0
// files (TXIDs) it holds and when each first showed up, found by listing
// the replica over and over — a folder with readdir, S3 with
// ListObjectsV2. It owns that polling; it never reads a file's contents
// and never writes to the replica.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** Now, in ms since the epoch, with sub-ms resolution, comparable across processes. */
export const epochNow = () => performance.timeOrigin + performance.now();

const LTX_NAME = /([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/;

/** The L0 file names a folder replica holds now. */
function listFolder(root) {
  try {
    return fs.readdirSync(path.join(root, 'ltx', '0'));
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
}

/** The L0 keys an S3 replica holds after `startAfter`, in key order. */
async function listS3({ endpoint, bucket, prefix }, startAfter) {
  const query = new URLSearchParams({ 'list-type': '2', prefix: `${prefix}/0000/` });
  if (startAfter) query.set('start-after', startAfter);
  const res = await fetch(`${endpoint}/${bucket}?${query}`);
  const xml = await res.text();
  if (!res.ok) throw new Error(`listing ${bucket}/${prefix}: ${res.status} ${xml.slice(0, 200)}`);
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
}

/**
 * Lists the replica every `intervalMs` until `stop()`, which resolves to
 * `{ firstSeen, polls, pollMs }`: `firstSeen` maps each L0 TXID to the time
 * (epochNow) the first listing that held it had answered — a bound that
 * never makes a file look earlier than it was, late by at most one
 * interval plus one listing. `replica` is `{ type: 'file', path }` or
 * `{ type: 's3', endpoint, bucket, prefix }`.
 */
export function watchReplica(replica, { intervalMs }) {
  const firstSeen = new Map();
  const pollTimes = [];
  let running = true;
  let lastKey = '';
  const note = (names, at) => {
    for (const name of names) {
      const m = LTX_NAME.exec(name);
      if (!m) continue;
      const txid = Number.parseInt(m[2], 16);
      if (!firstSeen.has(txid)) firstSeen.set(txid, at);
    }
  };
  const loop = (async () => {
    while (running) {
      const started = epochNow();
      if (replica.type === 'file') {
        note(listFolder(replica.path), epochNow());
      } else {
        const keys = await listS3(replica, lastKey);
        if (keys.length > 0) lastKey = keys[keys.length - 1];
        note(keys, epochNow());
      }
      const took = epochNow() - started;
      pollTimes.push(took);
      await sleep(Math.max(0, intervalMs - took));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sortedTimes = [...pollTimes].sort((a, b) => a - b);
      return {
        firstSeen,
        polls: pollTimes.length,
        pollMs: { p50: sortedTimes[Math.floor(sortedTimes.length / 2)] ?? null, max: sortedTimes.at(-1) ?? null },
      };
    },
  };
}
