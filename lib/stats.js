'use strict';

// The shape of `db.stats()`: the engine's counters per thread, the
// replica, restore and follow sections (each null when it does not
// apply), and how completions wake the event loop in this process. It only reads counters; it never starts any work.

const { native } = require('./calls.js');
const { replicaStats, restoreStats } = require('./restore.js');
const { followStats } = require('./follow.js');

/** `db.stats()` of the open database whose native handle is `nativeDb`. */
function databaseStats(nativeDb) {
  const s = nativeDb.stats();
  return {
    writer: s.writer,
    readers: s.readers,
    readerQueue: s.readerQueue,
    checkpoint: { ...s.checkpoint, error: s.checkpoint.error ?? null },
    replica: replicaStats(nativeDb.replicaStats()),
    restore: restoreStats(native.restoreStats(nativeDb)),
    follow: followStats(native.followStats(nativeDb)),
    waker: native.waker(),
  };
}

module.exports = { databaseStats };
