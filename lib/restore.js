'use strict';

// The JS side of the `restore` open option: `db.filled` and the shapes of
// `stats().replica` and `stats().restore`. The restore itself runs in the
// addon, on offloop's threads (src/node/paged.rs).

const { native, track } = require('./calls.js');
const { send } = require('./core.js');
const { readPath, readReplicaUrl, readRestoreOptions } = require('./options.js');
const { absolutePath, traceOperation } = require('./tracing.js');

// The replicator (and a follower) answer with a TXID, a number.
const wrapTxid = (txid) => ({ txid });

/** `Database.restore(url, path, options)`: on a thread of the addon's own. */
function restoreInto(url, location, options) {
  return traceOperation(
    'restore',
    () => ({ method: 'restore', database: typeof location === 'string' ? absolutePath(location) : location, url }),
    () => restore(url, location, options),
  );
}

function restore(url, location, options) {
  try {
    const u = readReplicaUrl(url, 'url');
    const p = readPath(location);
    const o = readRestoreOptions(options);
    const { id, promise } = track(wrapTxid, null);
    send(id, () => native.restoreReplica(id, u, p, o));
    return promise;
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Starts the background fill of a database opened with `restore: 'paged'`
 * (called once the replicator knows where the replica stands), after the
 * caller that awaited the open has run: nothing is fetched for the fill
 * before then.
 */
function startFill(core) {
  setImmediate(() => {
    if (!core.closing) native.startFill(core.native);
  });
}

/**
 * A replica that is down, or one found ahead of the database, with a gap,
 * or someone else's (started again from a snapshot), or `err` from the
 * replicator's first contact after a restore: a warning, not a failed open.
 */
function warnReplica(core, err) {
  const notice = err?.message ?? (core.closing ? null : core.native.replicaStats()?.lastError);
  if (notice) process.emitWarning(notice, { code: 'OFFLOOP_REPLICA' });
}

/**
 * Resolves when every page of the database is local (at once when it was
 * not opened paged); rejects if the fill ends without them (the database
 * closed first, or the replica lost the files it needs).
 */
function waitFilled(core) {
  const { id, promise } = track(() => undefined, null);
  send(id, () => native.fillWait(core.native, id));
  return promise;
}

/** `stats().replica` from the addon's record (null: not replicating). */
function replicaStats(r) {
  if (r === null || r === undefined) return null;
  return {
    url: r.url,
    txid: r.txid,
    lagMs: r.lagMs,
    pendingFiles: r.pendingFiles,
    pendingBytes: r.pendingBytes,
    bytesShipped: r.bytesShipped,
    durableRounds: r.durableRounds,
    durableWrites: r.durableWrites,
    lastSyncAt: r.lastSyncAt ?? null,
    lastError: r.lastError ?? null,
    leaseHolder: r.leaseHolder ?? null,
    fenced: r.fenced,
  };
}

/** `stats().restore` (null: the database was not opened from its replica page by page). */
function restoreStats(r) {
  if (r === null || r === undefined) return null;
  return {
    pagesLocal: r.pagesLocal,
    pagesTotal: r.pagesTotal,
    bytesFetched: r.bytesFetched,
    requests: r.requests,
    filled: r.filled,
    lastError: r.lastError ?? null,
  };
}

module.exports = { wrapTxid, restoreInto, startFill, waitFilled, warnReplica, replicaStats, restoreStats };
