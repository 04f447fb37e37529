'use strict';

// Not public API: a backup its caller steps, n pages at a time (SQLite's
// sqlite3_backup_step), for offloop/sqlite3's Backup. The backup runs on a
// thread of its own with its own two connections
// (crates/engine/src/backup_steps.rs); this file only reaches the addon and
// turns each step's answer into `{ status, remaining, pageCount }`.

const { native, track } = require('./calls.js');
const { send } = require('./core.js');
const { nativeOf } = require('./database.js');
const { notOpen } = require('./errors.js');

// SQLite's result codes a step ends with when it did not fail.
const SQLITE_OK = 0;
const SQLITE_DONE = 101;

/**
 * Opens a backup between `db` and the file `otherPath`: schema `source`
 * into schema `target`, from the database into the file when
 * `otherIsTarget`, else from the file into the database. `started`
 * resolves to whether SQLite started it (false: it refused the schema
 * names, as sqlite3_backup_init does) or rejects with why a connection
 * could not open.
 */
function openBackupSteps(db, otherPath, source, target, otherIsTarget) {
  const handle = nativeOf(db);
  let steps = null;
  let started;
  if (handle === null) {
    started = Promise.reject(notOpen());
  } else {
    const call = track(null, null);
    send(call.id, () => {
      steps = native.openBackupSteps(handle, call.id, otherPath, source, target, otherIsTarget);
    });
    started = call.promise;
  }
  return {
    started,
    /**
     * One sqlite3_backup_step(pages): resolves to its status (SQLITE_OK,
     * SQLITE_DONE or the error code, with the error as `error`) and the
     * backup's `remaining` and `pageCount` after it.
     */
    step(pages) {
      let progress = null;
      const call = track(null, null, (pageCount, remaining) => {
        progress = { pageCount, remaining };
      });
      send(call.id, () => native.stepBackup(steps, call.id, pages));
      return call.promise.then(
        (pageCount) => ({ status: pageCount === undefined ? SQLITE_OK : SQLITE_DONE, error: null, ...progress }),
        (error) => {
          // A step that ran reported its progress first; one that could
          // not run (the thread ended) did not.
          if (progress === null || typeof error.errcode !== 'number') throw error;
          return { status: error.errcode, error, ...progress };
        },
      );
    },
    /** sqlite3_backup_finish, and both connections closed. */
    finish() {
      const call = track(null, null);
      send(call.id, () => native.finishBackupSteps(steps, call.id));
      return call.promise;
    },
  };
}

module.exports = { openBackupSteps, SQLITE_OK, SQLITE_DONE };
