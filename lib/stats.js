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
    drains: drainCounts(),
  };
}

/** This JS thread's drains: `{ woken, lingered }`. */
function drainCounts() {
  const [woken, lingered] = native.drains();
  return { woken, lingered };
}

/**
 * `Database.stats()`: databases and SQLite connections open, offloop's
 * SQLite threads alive, lanes waiting for a thread, the thread bound, the
 * cap on open connections and how long an idle one stays open.
 */
function processStats() {
  const { databases, connections, threads, queued, threadLimit, connectionLimit, idleTimeoutMs } =
    native.processStats();
  return { databases, connections, threads, queued, threadLimit, connectionLimit, idleTimeout: idleTimeoutMs };
}

/** An integer option from `min` to `max`, or null (the default). */
function checkLimit(name, value, min, max) {
  if (value !== null && !Number.isInteger(value)) throw argType(`options.${name}`, 'an integer or null');
  if (value !== null && (value < min || value > max)) throw outOfRange(`options.${name}`, min, max, value);
}

/**
 * `Database.configure(options)`, process-wide; each option left out keeps
 * its value, `null` restores its default:
 * - `threads`: the most SQLite threads the pool runs (1 to 1,024; by
 *   default four a core, from 8 to 64);
 * - `connections`: the most SQLite connections kept open (16 to 1,000,000;
 *   by default what the limit on open files allows, four descriptors
 *   each): past it, the connections idle longest close;
 * - `idleTimeout`: milliseconds a connection stays open with nothing to do
 *   (1 to 86,400,000; by default 30,000), then closes, to reopen at the
 *   next call.
 */
function configure(options) {
  if (options === null || typeof options !== 'object') throw argType('options', 'of type object');
  const { threads, connections, idleTimeout } = options;
  if (threads !== undefined) checkLimit('threads', threads, 1, 1024);
  if (connections !== undefined) checkLimit('connections', connections, 16, 1_000_000);
  if (idleTimeout !== undefined) checkLimit('idleTimeout', idleTimeout, 1, 86_400_000);
  if (threads !== undefined) native.configureThreads(threads);
  if (connections !== undefined) native.configureConnections(connections);
  if (idleTimeout !== undefined) native.configureIdleTimeout(idleTimeout);
}

module.exports = { configure, databaseStats, processStats };
