// Replication lag, measured from outside: given when each commit was
// acknowledged (by row id) and when each replica file (TXID) first showed
// in the replica, find which commits each file made restorable — by
// restoring the replica at that TXID and reading the largest row id — and
// from that each commit's lag. It restores into a scratch file it removes;
// it never writes to the replica.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { S3_KEYS, S3_REGION } from './s3-servers.mjs';

/** `Database.restore`'s URL and options for a replica as `replicaFor` describes it. */
function restoreTarget(replica) {
  if (replica.type === 'file') return { url: pathToFileURL(replica.path).href, options: {} };
  return {
    url: `s3://${replica.bucket}/${replica.prefix}`,
    options: { endpoint: replica.endpoint, region: S3_REGION, ...S3_KEYS },
  };
}

/**
 * For the TXIDs in `firstSeen` (TXID → time it first showed) seen at or
 * after `fromMs`, in order, the largest row id of `table` restorable at
 * that TXID; stops at the first that holds `lastId`. Resolves to
 * `[{ txid, seenAt, maxId }]`. A TXID no longer restorable on its own
 * (compaction took its L0 file away) is skipped.
 */
export async function coverage({ Database, replica, firstSeen, fromMs, lastId, scratchDir, table = 'events' }) {
  const { url, options } = restoreTarget(replica);
  const out = path.join(scratchDir, 'coverage.db');
  const txids = [...firstSeen.entries()].filter(([, at]) => at >= fromMs).sort((a, b) => a[0] - b[0]);
  const found = [];
  const skipped = [];
  try {
    for (const [txid, seenAt] of txids) {
      try {
        await Database.restore(url, out, { ...options, txid, overwrite: true });
      } catch (err) {
        skipped.push({ txid, error: err.message });
        continue;
      }
      const db = await Database.open(out, { readOnly: true, readers: 0 });
      const { maxId } = await db.prepare(`SELECT coalesce(max(id), 0) AS maxId FROM ${table}`).get();
      await db.close();
      found.push({ txid, seenAt, maxId });
      if (maxId >= lastId) break;
    }
  } finally {
    for (const f of [out, `${out}-wal`, `${out}-shm`]) fs.rmSync(f, { force: true });
  }
  return { files: found, skipped };
}

/**
 * Each measured commit's lag (ms): the time the first replica file holding
 * it showed, less the time it was acknowledged. `ackAt(id)` gives the
 * acknowledgement time of row `id`; ids run `firstId..lastId`. Commits no
 * file was seen to hold are counted apart, not given a lag.
 */
export function lags(files, firstId, lastId, ackAt) {
  const byTxid = [...files].sort((a, b) => a.txid - b.txid);
  const out = [];
  let unseen = 0;
  let f = 0;
  for (let id = firstId; id <= lastId; id++) {
    while (f < byTxid.length && byTxid[f].maxId < id) f++;
    if (f === byTxid.length) unseen += 1;
    else out.push(byTxid[f].seenAt - ackAt(id));
  }
  return { lagsMs: out, unseen };
}
