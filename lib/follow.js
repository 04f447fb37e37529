'use strict';

// The JS side of the `follow` open option: the call that hears each
// applied file and turns it into an `'applied'` event, the start of a paged
// follower's fill, `db.catchUp()`, the staleness bound on calls, and the
// shape of `stats().follow`. The follower itself polls and applies on
// offloop's threads (src/node/follow.rs).

const { native, track, forget, armCancel } = require('./calls.js');
const { send } = require('./core.js');
const { nodeError, notOpen } = require('./errors.js');
const { readCatchUpOptions } = require('./options.js');
const { cancel: CANCEL } = require('./protocol.js');
const { startFill, wrapTxid } = require('./restore.js');

/**
 * Starts following once the open has resolved; `emit(txid, pages)` hears
 * each applied file, on a later tick (a listener that throws does so
 * outside the completion path). The watch's call id is kept on the core,
 * to forget at close.
 */
function startFollowing(core, emit) {
  const { id } = track(null, null, (txid, pages) => process.nextTick(emit, txid, pages));
  send(id, () => native.followStart(core.native, id));
  core.watch = id;
  // A paged follower's fill runs while it follows.
  if (core.options.restore === 'paged') startFill(core);
}

/** Forgets the watch of a closing database (it never settles). */
function stopFollowing(core) {
  if (core.watch !== undefined) forget(core.watch);
  core.watch = undefined;
}

/** Why a call may not run now: the follower is staler than `maxStaleness`. */
function staleness(core) {
  const bound = core.options.follow?.maxStalenessMs;
  if (bound === undefined) return null;
  const ms = native.followStaleness(core.native);
  if (ms <= bound) return null;
  return nodeError(
    Error,
    'ERR_OFFLOOP_STALE',
    `the follower last held the replica's newest TXID ${Math.round(ms)} ms ago (maxStaleness is ${bound} ms)`,
  );
}

/**
 * `db.catchUp({ txid, timeout, signal })`: resolves to `{ txid }`, the TXID
 * the database is at, once it is at `txid` or later (checking the replica
 * every `pollInterval`), or, without a TXID, once a check of the replica
 * found nothing more to apply. `timeout` (ms) rejects with a `TimeoutError`
 * DOMException, `signal` with its reason.
 */
function catchUp(core, options) {
  let read;
  try {
    read = readCatchUpOptions(options);
  } catch (err) {
    return Promise.reject(err);
  }
  if (core.closing) return Promise.reject(notOpen());
  if (core.options.follow === undefined) {
    return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', 'the database does not follow a replica'));
  }
  const { txid, timeout, signal } = read;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { id, promise } = track(wrapTxid, null);
  send(id, () => native.followCatchUp(core.native, id, txid));
  if (signal !== undefined || timeout > 0) {
    const cancel = (callId) => {
      native.followCancel(core.native, callId);
      return CANCEL.BEFORE_START;
    };
    armCancel(id, cancel, signal, timeout);
  }
  return promise;
}

/** `stats().follow` (null: the database does not follow). */
function followStats(f) {
  if (f === null || f === undefined) return null;
  return {
    url: f.url,
    txid: f.txid,
    stalenessMs: f.stalenessMs,
    lastCheckAt: f.lastCheckAt ?? null,
    appliedAt: f.appliedAt ?? null,
    requests: { list: f.listRequests, get: f.getRequests },
    bytesFetched: f.bytesFetched,
    lastError: f.lastError ?? null,
    keptFile: f.keptFile ?? null,
  };
}

module.exports = { startFollowing, stopFollowing, staleness, catchUp, followStats };
