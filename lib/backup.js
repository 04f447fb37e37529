'use strict';

// backup(): node:sqlite's `backup(sourceDb, path, options)` and
// `db.backup(path, options)`. This file owns the validation of the options
// (node:sqlite's messages) and the progress callback's place in the call;
// the copy runs on a thread of its own (crates/engine/src/backup.rs). It
// never touches the database file itself.

const { native, track } = require('./calls.js');
const { send } = require('./core.js');
const { argType, nodeError } = require('./errors.js');
const { readPath } = require('./options.js');

// SQLite's backup step takes an int; node:sqlite calls anything outside
// int32 not an integer.
const MIN_INT32 = -(2 ** 31);
const MAX_INT32 = 2 ** 31 - 1;

function readBackupOptions(options) {
  if (options === undefined) return { source: 'main', target: 'main', rate: 100, progress: null };
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  const { source = 'main', target = 'main', rate = 100, progress = null } = options;
  if (typeof source !== 'string') throw argType('options.source', 'a string');
  if (typeof target !== 'string') throw argType('options.target', 'a string');
  if (!Number.isInteger(rate) || rate < MIN_INT32 || rate > MAX_INT32) throw argType('options.rate', 'an integer');
  if (rate <= 0) {
    throw nodeError(RangeError, 'ERR_OUT_OF_RANGE', 'The "options.rate" argument must be a positive integer.');
  }
  if (progress !== null && typeof progress !== 'function') throw argType('options.progress', 'a function');
  return { source, target, rate, progress };
}

/**
 * Reads `backup()`'s arguments as node:sqlite does; throws what it throws.
 * Returns what `startBackup` takes.
 */
function readBackup(path, options) {
  return { target: readPath(path), o: readBackupOptions(options) };
}

/**
 * Copies the open database behind `core` into `target`; resolves to the
 * source's page count. A progress callback that throws stops the copy,
 * which then rejects with what it threw.
 */
function startBackup(core, { target, o }) {
  let thrown = null;
  let stop = null;
  const onProgress =
    o.progress === null
      ? null
      : (totalPages, remainingPages) => {
          if (thrown !== null) return;
          try {
            o.progress({ totalPages, remainingPages });
          } catch (err) {
            thrown = { err };
            native.stopBackup(stop);
          }
        };
  const { id, promise } = track(null, null, onProgress);
  send(id, () => {
    stop = native.backup(core.native, id, target, o.source, o.target, o.rate, onProgress !== null);
  });
  return promise.then(
    (pages) => {
      if (thrown !== null) throw thrown.err;
      return pages;
    },
    (err) => {
      throw thrown !== null ? thrown.err : err;
    },
  );
}

module.exports = { readBackup, startBackup };
