'use strict';

// sqlite3's Backup on offloop's online backup. This file owns the Backup
// object's state (remaining, pageCount, idle, completed, failed) and its
// queue of step() and finish() calls. The copy itself runs on offloop's
// backup thread, which copies at its own pace rather than a step per call:
// the first step() starts it with that step's page count as the rate, and
// each step() reports the copy's progress since the one before. It never
// reads or writes a database file on this thread.

const EventEmitter = require('node:events');

const { Database, stateOf } = require('./database.js');
const { RESULT } = require('./constants.js');
const { sqliteError, fromOffloop } = require('./errors.js');
const { done, invoke, report, work } = require('./callback.js');
const { CallQueue } = require('./queue.js');

// SQLite's backup step takes an int: a negative count copies everything.
const ALL_PAGES = 2 ** 31 - 1;

// A progress callback that throws this stops offloop's copy (finish()
// before the end).
const STOP = Symbol('stop');

class Backup {
  #db;
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
  #copy = null;
  // Progress not yet reported by a step, and the step waiting for it.
  #news = null;
  #waiting = null;
  #stop = false;

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
    this.#db = db;
    this.#state = stateOf(db);
    this.#state.schedule(
      () => {
        this.#state.pending++;
        const resource = work('sqlite3.Backup.Initialize');
        queueMicrotask(() => {
          if (!filenameIsDest) {
            // offloop copies out of an open database only.
            report(resource, callback, this, sqliteError(RESULT.ERROR, 'offloop/sqlite3 backs up into a file only (filenameIsDest must be true)'));
            this.#finishAll();
          } else {
            this.#inited = true;
            this.#state.live.add(this);
            invoke(resource, callback, this, [null]);
          }
          done(resource);
          this.#state.pending--;
          this.#calls.process();
          this.#state.process();
        });
      },
      (err, quiet) => invoke(null, callback, this, [err]) || (!quiet && this.emit('error', err)),
    );
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

  /** The result codes a step may fail with and the backup go on (BUSY, LOCKED by default). */
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

  /** Copies (about) `pages` more pages; `callback(err, completed)`. */
  step(pages, callback) {
    if (typeof pages !== 'number') throw new TypeError('Argument 0 must be an integer');
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 1 must be a function');
    this.#calls.schedule(callback, () => {
      const resource = this.#begin('Step');
      if (this.#copy === null) this.#start(pages);
      this.#nextNews().then(({ err }) => {
        if (err !== undefined) report(resource, callback, this, err);
        else invoke(resource, callback, this, [null, this.#completed]);
        this.#end(resource);
      });
    });
    return this;
  }

  #start(pages) {
    const rate = pages > 0 ? pages | 0 : ALL_PAGES;
    const progress = ({ totalPages, remainingPages }) => {
      if (this.#stop) throw STOP;
      this.#pageCount = totalPages;
      this.#remaining = remainingPages;
      this.#tell({});
    };
    let copy;
    try {
      copy = this.#state.odb.backup(this.filename, { source: this.sourceName, target: this.destName, rate, progress });
    } catch (err) {
      copy = Promise.reject(err);
    }
    this.#copy = copy.then(
      (pageCount) => {
        this.#pageCount = pageCount;
        this.#remaining = 0;
        this.#completed = true;
        this.#tell({});
      },
      (err) => {
        this.#failed = true;
        this.#tell(err === STOP ? {} : { err: fromOffloop(err) });
      },
    );
  }

  #tell(news) {
    if (this.#waiting !== null) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve(news);
    } else {
      // A failure stays news until a step reports it.
      if (this.#news?.err === undefined) this.#news = news;
    }
  }

  #nextNews() {
    if (this.#news !== null || this.#completed || this.#failed) {
      const news = this.#news ?? {};
      this.#news = null;
      return Promise.resolve(news);
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** Ends the backup (stopping a copy still running); `callback()`. */
  finish(callback) {
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 0 must be a function');
    this.#calls.schedule(callback, () => {
      const resource = this.#begin('Finish');
      this.#stop = true;
      const copied = this.#copy ?? Promise.resolve();
      copied.then(() => {
        this.#finishAll();
        invoke(resource, callback, this, []);
        this.#end(resource);
      });
    });
    return this;
  }

  #finishAll() {
    if (!this.#completed) this.#failed = true;
    this.#finished = true;
    this.#state.live.delete(this);
    this.#calls.clean();
  }
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
