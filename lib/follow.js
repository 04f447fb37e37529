'use strict';

// The JS side of the `follow` open option: the call that hears each
// applied file and turns it into an `'applied'` event, `db.catchUp()`,
// the staleness bound on calls, and the shape of `stats().follow`. The
// follower itself polls and applies on offloop's threads (src/node/follow.rs).

const { native, track, forget, armCancel } = require('./calls.js');
const { send } = require('./core.js');
const { nodeError } = require('./errors.js');
const { cancel: CANCEL } = require('./protocol.js');

/**
 * Starts following once the open has resolved; `emit(txid, pages)` hears
 * each applied file, on a later tick (a listener that throws does so
 * outside the completion path). Returns the watch's call id, to forget
 * at close.
 */
function startFollowing(core, emit) {
  const { id } = track(null, null, (txid, pages) => process.nextTick(emit, txid, pages));
  send(id, () => native.followStart(core.native, id));
  return id;
}

function stopFollowing(watchId) {
  if (watchId !== 0) forget(watchId);
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

/** `db.catchUp({ txid, timeout, signal })`, options already read. */
function catchUp(core, { txid, timeout, signal }) {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { id, promise } = track((text) => ({ txid: Number(text) }), null);
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
  };
}

module.exports = { startFollowing, stopFollowing, staleness, catchUp, followStats };
