'use strict';

// sqlite3's Backup on a backup offloop steps as sqlite3 does: each step(n)
// is one sqlite3_backup_step(n) on the backup's own thread and connections
// (lib/backup-steps.js), so remaining and pageCount move by n per step. This
// file owns the Backup object's state (remaining, pageCount, idle,
// completed, failed, retryErrors) and its queue of step() and finish()
// calls, with sqlite3's rules for which failures end the backup. It never
// reads or writes a database file on this thread.

const EventEmitter = require('node:events');

const { openBackupSteps, SQLITE_OK, SQLITE_DONE } = require('../../lib/backup-steps.js');
const { Database, stateOf } = require('./database.js');
const { RESULT } = require('./constants.js');
const { sqliteError, fromOffloop } = require('./errors.js');
const { done, invoke, report, work } = require('./callback.js');
const { CallQueue } = require('./queue.js');

class Backup {
  #state;
  #inited = false;
  #finished = false;
  #completed = false;
  #failed = false;
  #remaining = -1;
  #pageCount = -1;
  #retryErrors = [];
  #calls = new CallQueue(this, {
    ready: () => this.#inited,
    ended: () => this.#finished,
    misuse: 'Backup is already finished',
    unheard: (err) => this.emit('error', err),
  });
  // The backup underneath while SQLite holds it (sqlite3's `_handle`), and
  // the last step's status and error, which a step without it reports again.
  #steps = null;
  #status = SQLITE_OK;
  #error = null;

  /** `new Backup(db, filename, sourceName, destName, filenameIsDest[, callback])`. */
  constructor(db, filename, sourceName, destName, filenameIsDest, callback) {
    if (!(db instanceof Database)) throw new TypeError('Database object expected');
    if (typeof filename !== 'string') throw new TypeError('Filename expected');
    if (typeof sourceName !== 'string') throw new TypeError('Source database name expected');
    if (typeof destName !== 'string') throw new TypeError('Destination database name expected');
    if (typeof filenameIsDest !== 'boolean') throw new TypeError('Direction flag expected');
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Callback expected');
    for (const [name, value] of [
      ['filename', filename],
      ['sourceName', sourceName],
      ['destName', destName],
      ['filenameIsDest', filenameIsDest],
    ]) {
      Object.defineProperty(this, name, { value });
    }
    this.#state = stateOf(db);
    // Busy until its initialisation's callback returned, as sqlite3's is.
    this.#calls.locked = true;
    this.#state.schedule(
      () => {
        this.#state.pending++;
        const resource = work('sqlite3.Backup.Initialize');
        // The database's side of the copy.
        const schema = filenameIsDest ? sourceName : destName;
        const steps = isTemp(schema) ? refusedTemp() : openBackupSteps(this.#state.odb, filename, sourceName, destName, filenameIsDest);
        steps.started.then(
          (started) => {
            // sqlite3 keeps a backup SQLite refused to start (unknown
            // schema names): it is initialised, and its first step fails it.
            this.#inited = true;
            this.#steps = started ? steps : null;
            // Only a backup SQLite holds keeps the database from closing.
            if (started) this.#state.live.add(this);
            invoke(resource, callback, this, [null]);
            this.#initialized(resource);
          },
          (err) => {
            report(resource, callback, this, fromOffloop(err));
            this.#finishAll();
            this.#initialized(resource);
          },
        );
      },
      (err, quiet) => invoke(null, callback, this, [err]) || (!quiet && this.emit('error', err)),
    );
  }

  #initialized(resource) {
    this.#calls.locked = false;
    done(resource);
    this.#state.pending--;
    this.#calls.process();
    this.#state.process();
  }

  get idle() {
    return this.#inited && this.#calls.idle;
  }

  get completed() {
    return this.#completed;
  }

  get failed() {
    return this.#failed;
  }

  get remaining() {
    return this.#remaining;
  }

  get pageCount() {
    return this.#pageCount;
  }

  /** The result codes a step may fail with and the backup go on (BUSY, LOCKED from db.backup()). */
  get retryErrors() {
    return this.#retryErrors;
  }

  set retryErrors(value) {
    if (!Array.isArray(value)) throw new Error('retryErrors must be an array');
    this.#retryErrors = value;
  }

  #begin(name) {
    this.#calls.locked = true;
    this.#state.pending++;
    return work(`sqlite3.Backup.${name}`);
  }

  #end(resource) {
    done(resource);
    this.#calls.locked = false;
    this.#state.pending--;
    this.#calls.process();
    this.#state.process();
  }

  /**
   * Copies up to `pages` more pages (all of them when negative), as
   * sqlite3_backup_step does; `callback(err, completed)`. A failure whose
   * code is not in `retryErrors` (when it has any) ends the backup.
   */
  step(pages, callback) {
    if (typeof pages !== 'number') throw new TypeError('Argument 0 must be an integer');
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 1 must be a function');
    // Read when the step is asked for, as sqlite3 reads it.
    const retry = new Set(this.#retryErrors.filter((code) => typeof code === 'number').map((code) => code | 0));
    this.#calls.schedule(this.#step, { pages: pages | 0, retry }, callback);
    return this;
  }

  #step({ pages, retry }, callback) {
    const resource = this.#begin('Step');
    this.#stepOnce(pages, retry).then(() => {
      if (this.#status === SQLITE_DONE) this.#completed = true;
      else if (this.#steps === null) this.#failed = true;
      if (this.#status !== SQLITE_OK && this.#status !== SQLITE_DONE) report(resource, callback, this, this.#error);
      else invoke(resource, callback, this, [null, this.#status === SQLITE_DONE]);
      this.#end(resource);
    });
  }

  // One step of the backup SQLite holds, if it holds one; then, if the
  // step failed with a code not to retry, its end.
  async #stepOnce(pages, retry) {
    if (this.#steps !== null) {
      let result;
      try {
        result = await this.#steps.step(pages);
      } catch (err) {
        result = { status: RESULT.ERROR, error: err, remaining: this.#remaining, pageCount: this.#pageCount };
      }
      this.#status = result.status;
      this.#remaining = result.remaining;
      this.#pageCount = result.pageCount;
      if (result.error !== null) this.#error = fromOffloop(result.error);
    } else {
      await null;
    }
    if (this.#status !== SQLITE_OK && retry.size > 0 && !retry.has(this.#status)) await this.#finishSqlite();
  }

  // sqlite3_backup_finish: after it, the backup holds nothing that keeps
  // the database from closing, whether finish() was called or a step
  // ended it (done, or failed with a code not to retry).
  async #finishSqlite() {
    const steps = this.#steps;
    this.#steps = null;
    this.#state.live.delete(this);
    if (steps !== null) await steps.finish().catch(() => {});
  }

  /** Ends the backup; `callback()`. */
  finish(callback) {
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 0 must be a function');
    this.#calls.schedule(this.#finish, null, callback);
    return this;
  }

  #finish(_, callback) {
    const resource = this.#begin('Finish');
    this.#finishSqlite().then(() => {
      this.#finishAll();
      invoke(resource, callback, this, []);
      this.#end(resource);
    });
  }

  #finishAll() {
    if (!this.#completed) this.#failed = true;
    this.#finished = true;
    this.#state.live.delete(this);
    this.#calls.clean();
  }
}

// SQLite's name of a connection's temporary schema (any case).
function isTemp(schema) {
  return schema.toLowerCase() === 'temp';
}

// A backup runs on a connection of its own (lib/backup-steps.js), and a
// temp schema belongs to one connection: that connection's would be empty
// whatever the database holds, so the backup is refused rather than copy
// nothing (docs/sqlite3.md).
function refusedTemp() {
  const err = sqliteError(
    RESULT.ERROR,
    "offloop/sqlite3 cannot back up to or from the database's temp schema: a backup runs on a connection of its own, which does not see it",
  );
  return { started: Promise.reject(err) };
}

// An EventEmitter whose constructor never ran, as sqlite3's classes are.
Object.setPrototypeOf(Backup.prototype, EventEmitter.prototype);

// `db.backup(filename[, callback])` copies main into the file's main;
// `db.backup(filename, destName, sourceName, filenameIsDest[, callback])`
// passes its arguments on as sqlite3 does.
Database.prototype.backup = function backup(...args) {
  const b = args.length <= 2 ? new Backup(this, args[0], 'main', 'main', true, args[1]) : new Backup(this, ...args.slice(0, 5));
  b.retryErrors = [RESULT.BUSY, RESULT.LOCKED];
  return b;
};

module.exports = { Backup };
