'use strict';

// The shape of `db.stats()`: the engine's counters per thread, the
// replica, restore and follow sections (each null when it does not
// apply), and how completions wake the event loop in this process; and of
// `Database.stats()`, the process-wide view, with the one setting
// `Database.configure()` changes. It only reads counters and passes
// settings on; it never starts any work.

const { native } = require('./calls.js');
const { argType, outOfRange } = require('./errors.js');
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

/**
 * `Database.stats()`: databases and SQLite connections open, offloop's
 * SQLite threads alive, lanes waiting for a thread, and the thread bound.
 */
function processStats() {
  const { databases, connections, threads, queued, threadLimit } = native.processStats();
  return { databases, connections, threads, queued, threadLimit };
}

/**
 * `Database.configure(options)`. `threads`: the most SQLite threads the
 * pool runs (an integer from 1 to 1024; `null` for the default, four a
 * core, from 8 to 64).
 */
function configure(options) {
  if (options === null || typeof options !== 'object') throw argType('options', 'of type object');
  const { threads } = options;
  if (threads === undefined) return;
  if (threads !== null && !Number.isInteger(threads)) throw argType('options.threads', 'an integer or null');
  if (threads !== null && (threads < 1 || threads > 1024)) throw outOfRange('options.threads', 1, 1024, threads);
  native.configureThreads(threads);
}

module.exports = { configure, databaseStats, processStats };
