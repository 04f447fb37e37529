'use strict';

// sqlite3's Database on an offloop database. This file owns the handle's
// life (open, close, the calls queued before the one and after the other)
// and sqlite3's scheduling: calls start at once and run side by side
// (parallelize), or each waits for the ones before it (serialize); exec,
// close, wait and loadExtension wait for everything before them and hold
// back everything after. What runs where is offloop's business: reads go to
// its reader threads, writes to its writer, nothing to libuv's thread pool
// and nothing on this thread. It never runs SQL itself: statement calls are
// in statement.js.

const EventEmitter = require('node:events');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const offloop = require('../../index.js');
const { rowChanges } = require('../../lib/row-changes.js');
const { DEFAULT_MODE, OPEN, RESULT, limitName } = require('./constants.js');
const { sqliteError, fromOffloop } = require('./errors.js');
const { done, emit, invoke, report, work } = require('./callback.js');
const { Fifo } = require('./fifo.js');

// sqlite3 gives every connection a busy timeout of one second.
const BUSY_TIMEOUT_MS = 1000;
// SQL texts whose offloop statement a database keeps (the oldest goes first).
const STATEMENT_CACHE_SIZE = 256;
// The events whose listeners turn on one of SQLite's hooks.
const HOOKED = new Set(['trace', 'profile', 'change']);

let stateOf;

/**
 * SQLite's own defaults, which sqlite3 keeps and node:sqlite (so the core)
 * changes: a double-quoted word that names no column is a string, as Knex's
 * schema queries write them (`type="table"`), and foreign keys are not
 * enforced until the application turns them on. `foreignKeys`, the other
 * name of the option, overrides the default as well.
 */
function sqliteDefaults(options) {
  const defaults = { enableDoubleQuotedStringLiterals: true };
  if (options.foreignKeys === undefined) defaults.enableForeignKeyConstraints = false;
  return defaults;
}

/** sqlite3's mode and offloop's options as offloop's open options and path. */
function openArguments(filename, mode, options) {
  const o = { timeout: BUSY_TIMEOUT_MS, ...sqliteDefaults(options), ...options, allowExtension: true };
  const special = filename === '' || filename === ':memory:';
  const readOnly = (mode & OPEN.OPEN_READONLY) !== 0;
  if (readOnly) o.readOnly = true;
  let location = filename;
  const isUri = (mode & OPEN.OPEN_URI) !== 0 && filename.startsWith('file:');
  // OPEN_SHAREDCACHE shares an in-memory URI's database between the
  // databases that open it, as cache=shared does (a plain ':memory:' never
  // is); a file's connections each keep their own cache (docs/sqlite3.md).
  if (isUri && (mode & OPEN.OPEN_SHAREDCACHE) !== 0 && isMemoryUri(filename) && !/[?&]cache=/.test(filename)) {
    location = `${filename}${filename.includes('?') ? '&' : '?'}cache=shared`;
  }
  // Without OPEN_CREATE a missing file is SQLITE_CANTOPEN: a URI's
  // mode=rw says so to SQLite (mode=ro does for a read-only one).
  if (!special && !readOnly && (mode & OPEN.OPEN_CREATE) === 0) {
    if (isUri) location = /[?&]mode=/.test(location) ? location : `${location}${location.includes('?') ? '&' : '?'}mode=rw`;
    else location = `${pathToFileURL(path.resolve(filename)).href}?mode=rw`;
  }
  return { location, options: o };
}

/** Whether a `file:` URI names an in-memory database, as SQLite reads it. */
function isMemoryUri(uri) {
  return uri.startsWith('file::memory:') || /[?&]mode=memory(&|$)/.test(uri);
}

/**
 * The scheduler's state of one Database, shared with its statements:
 * `pending` counts the statement steps and execs running now, `locked`
 * says that the call which started last waits for nothing to run beside
 * it, `queue` holds the calls that wait.
 */
class State {
  constructor(db) {
    this.db = db;
    this.odb = null;
    this.open = false;
    this.locked = false;
    this.closing = false;
    this.pending = 0;
    this.serialize = false;
    // (start, fail, exclusive) per waiting call.
    this.queue = new Fifo(3);
    // Prepared statements not finalized: close() refuses while any is.
    this.live = new Set();
    // interrupt() aborts this signal; each call made before it carries it.
    this.interrupts = new AbortController();
    this.hooks = { trace: false, profile: false, change: false };
    this.statements = new Map();
    this.withSignal = new WeakMap();
  }

  /**
   * `promise`, made to hand on first, with 'change' listeners, the rows
   * offloop's writer changed meanwhile as sqlite3's 'change' events: a
   * call's events come before its callback.
   */
  settled(promise) {
    if (!this.hooks.change) return promise;
    const flush = () => {
      if (this.odb === null) return;
      for (const c of rowChanges(this.odb).take()) emit(null, this.db, 'change', c.op, c.database, c.table, c.rowid);
    };
    return promise.then(
      (value) => {
        flush();
        return value;
      },
      (err) => {
        flush();
        throw err;
      },
    );
  }

  /**
   * Runs `start` now, or queues it. `fail(err)` reports that it cannot run
   * because the database is closed. `exclusive`: nothing runs beside it.
   */
  schedule(start, fail, exclusive = false) {
    if (!this.open && this.locked) {
      fail(sqliteError(RESULT.MISUSE, 'Database is closed'));
      return;
    }
    if (!this.open || ((this.locked || exclusive || this.serialize) && this.pending > 0)) {
      this.queue.push(start, fail, exclusive || this.serialize);
    } else {
      this.locked = exclusive;
      start();
    }
  }

  /** Starts what the queue allows now (called whenever something ends). */
  process() {
    if (!this.open && this.locked && this.queue.length > 0) {
      // Calls that waited behind close(): each one's callback gets the
      // error, or the database emits it once when none had a callback.
      const err = sqliteError(RESULT.MISUSE, 'Database handle is closed');
      const calls = this.queue;
      this.queue = new Fifo(3);
      let called = false;
      while (calls.length > 0) {
        const fail = calls.peek(1);
        calls.shift();
        if (fail(err, true)) called = true;
      }
      if (!called) emit(null, this.db, 'error', err);
      return;
    }
    const queue = this.queue;
    while (this.open && (!this.locked || this.pending === 0) && queue.length > 0) {
      const exclusive = queue.peek(2);
      if (exclusive && this.pending > 0) break;
      const start = queue.shift();
      this.locked = exclusive;
      start();
      if (this.locked) break;
    }
  }

  /** The signal that interrupt() aborts, for a call starting now. */
  get signal() {
    return this.interrupts.signal;
  }

  /**
   * The offloop statement for `sql`, shared by the calls that prepare and
   * run at once (db.run(), db.get() ...): offloop statements hold no
   * SQLite object and take calls side by side, so one per SQL text does.
   */
  statement(sql, options) {
    let ost = this.statements.get(sql);
    if (ost === undefined) {
      ost = this.odb.prepare(sql, options);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value);
      this.statements.set(sql, ost);
    }
    return ost;
  }

  /** `ost` carrying the signal interrupt() aborts now (made once per statement and signal). */
  signalled(ost) {
    const signal = this.interrupts.signal;
    let entry = this.withSignal.get(ost);
    if (entry === undefined || entry.signal !== signal) {
      entry = { signal, ost: ost.withOptions({ signal }) };
      this.withSignal.set(ost, entry);
    }
    return entry.ost;
  }
}

/**
 * `fail` for a call whose only callback is `callback` (called with the
 * database as `this`): reports whether there was one; with `quiet` it
 * emits nothing (process() emits once for the whole queue).
 */
function failTo(db, callback) {
  return (err, quiet) => {
    if (invoke(null, callback, db, [err])) return true;
    if (!quiet) emit(null, db, 'error', err);
    return false;
  };
}

function optionalCallback(value, index) {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`Argument ${index} must be a function`);
  return value;
}

class Database {
  #state = new State(this);

  static {
    stateOf = (db) => db.#state;
  }

  /**
   * `new Database(filename[, mode][, options][, callback])`: opens at
   * once; calls made before the open ends wait for it. `options` are
   * offloop's (readers, replica, settings ...), see docs/sqlite3.md.
   */
  constructor(filename, ...rest) {
    if (typeof filename !== 'string') throw new TypeError('String expected');
    let at = 0;
    let mode = DEFAULT_MODE;
    let options = {};
    if (typeof rest[at] === 'number' && (rest[at] | 0) === rest[at]) mode = rest[at++];
    if (rest[at] !== null && typeof rest[at] === 'object') options = rest[at++];
    const callback = typeof rest[at] === 'function' ? rest[at] : undefined;
    Object.defineProperty(this, 'filename', { value: filename });
    Object.defineProperty(this, 'mode', { value: mode });

    const state = this.#state;
    const resource = work('sqlite3.Database.Open');
    const { location, options: o } = openArguments(filename, mode, options);
    let ready;
    try {
      state.odb = new offloop.Database(location, o);
      ready = state.odb.ready;
    } catch (err) {
      // offloop refuses options it cannot use: reported as a failed open.
      ready = Promise.reject(err);
    }
    ready.then(
      () => {
        state.open = true;
        invoke(resource, callback, this, [null]);
        emit(resource, this, 'open');
        done(resource);
        state.process();
      },
      (err) => {
        // A database that failed to open keeps its calls queued, as
        // sqlite3's does: none of them ever runs.
        const error = fromOffloop(err);
        if (!invoke(resource, callback, this, [error])) emit(resource, this, 'error', error);
        done(resource);
      },
    );
  }

  /** True once open, until closed. */
  get open() {
    return this.#state.open;
  }

  /** The offloop Database underneath (for stats(), settings(), replication). */
  get offloop() {
    return this.#state.odb;
  }

  /** offloop's `db.stats()`: where the work ran (writer, readers, checkpointer). */
  stats() {
    return this.#state.odb.stats();
  }

  /** Every call after this one waits for the ones before it; with `callback`, only the calls made inside it. */
  serialize(callback) {
    return this.#mode(true, optionalCallback(callback, 0));
  }

  /** Calls start at once and run side by side; with `callback`, only the calls made inside it. */
  parallelize(callback) {
    return this.#mode(false, optionalCallback(callback, 0));
  }

  #mode(serialize, callback) {
    const state = this.#state;
    const before = state.serialize;
    state.serialize = serialize;
    if (callback !== undefined) {
      callback.call(this);
      state.serialize = before;
    }
    state.process();
    return this;
  }

  /** Runs every statement of `sql`, alone; `callback(err)`. */
  exec(sql, callback) {
    if (typeof sql !== 'string') throw new TypeError('Argument 0 must be a string');
    optionalCallback(callback, 1);
    const state = this.#state;
    state.schedule(
      () => {
        state.pending++;
        const resource = work('sqlite3.Database.Exec');
        const started = process.hrtime.bigint();
        const hooked = state.hooks.trace || state.hooks.profile;
        const statements = hooked ? statementsOf(state.odb, sql) : [];
        if (state.hooks.trace) for (const text of statements) emit(null, this, 'trace', text);
        const finish = () => {
          if (state.hooks.profile) {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            for (const text of statements) emit(null, this, 'profile', text, ms);
          }
        };
        state.settled(state.odb.exec(sql, { signal: state.signal })).then(
          () => {
            finish();
            invoke(resource, callback, this, [null]);
            this.#end(resource);
          },
          (err) => {
            finish();
            report(resource, callback, this, fromOffloop(err));
            this.#end(resource);
          },
        );
      },
      failTo(this, callback),
      true,
    );
    return this;
  }

  #end(resource) {
    done(resource);
    this.#state.pending--;
    this.#state.process();
  }

  /** Calls `callback(null)` once every call before it ended. */
  wait(callback) {
    optionalCallback(callback, 0);
    const state = this.#state;
    state.schedule(
      () => {
        invoke(null, callback, this, [null]);
        state.process();
      },
      failTo(this, callback),
      true,
    );
    return this;
  }

  /**
   * Closes once every call before it ended. Fails with SQLITE_BUSY while
   * a statement is not finalized, as sqlite3_close() does, and the
   * database stays open.
   */
  close(callback) {
    optionalCallback(callback, 0);
    const state = this.#state;
    state.schedule(
      () => {
        state.pending++;
        const resource = work('sqlite3.Database.Close');
        if (state.live.size > 0) {
          const err = sqliteError(RESULT.BUSY, 'unable to close due to unfinalized statements or unfinished backups');
          // The database is still open: the error goes to the callback or the 'error' event.
          queueMicrotask(() => {
            report(resource, callback, this, err);
            this.#end(resource);
          });
          return;
        }
        state.closing = true;
        state.odb.close().then(
          () => {
            state.open = false;
            state.closing = false;
            invoke(resource, callback, this, [null]);
            emit(resource, this, 'close');
            done(resource);
            state.pending--;
            state.process();
          },
          (err) => {
            state.closing = false;
            report(resource, callback, this, fromOffloop(err));
            this.#end(resource);
          },
        );
      },
      failTo(this, callback),
      true,
    );
    return this;
  }

  /**
   * `configure('busyTimeout', ms)`, `configure('limit', id, value)`, and
   * the hooks sqlite3 turns on for 'trace', 'profile' and 'change'
   * listeners.
   */
  configure(option, ...values) {
    if (arguments.length < 2) throw new TypeError('Expected 2arguments');
    const state = this.#state;
    let apply;
    // A hook is on while its event has listeners: counted now, when the
    // listener was added or removed, though the change applies once the
    // database is open.
    if (option === 'trace' || option === 'profile') {
      const on = this.listenerCount(option) > 0;
      apply = () => {
        state.hooks[option] = on;
      };
    } else if (option === 'change') {
      const on = this.listenerCount('change') > 0;
      apply = () => {
        state.hooks.change = on;
        rowChanges(state.odb).want(on);
      };
    } else if (option === 'busyTimeout') {
      if (typeof values[0] !== 'number') throw new TypeError('Value must be an integer');
      const ms = values[0] | 0;
      apply = () => {
        // The writer is the connection that waits for locks; readers in
        // WAL mode do not.
        state.odb.exec(`PRAGMA busy_timeout = ${ms}`).catch((err) => emit(null, this, 'error', fromOffloop(err)));
      };
    } else if (option === 'limit') {
      if (arguments.length < 3) throw new TypeError('Expected 3arguments');
      if (typeof values[0] !== 'number') throw new TypeError('limit id must be an integer');
      if (typeof values[1] !== 'number') throw new TypeError('limit value must be an integer');
      const name = limitName(values[0] | 0);
      const value = values[1] | 0;
      apply = () => {
        // A negative value leaves a limit as it is, as sqlite3_limit() does.
        if (name !== null && value >= 0) state.odb.limits[name] = value;
      };
    } else {
      throw new TypeError(`${option} is not a valid configuration option`);
    }
    state.schedule(apply, failTo(this, undefined));
    state.process();
    return this;
  }

  /** Interrupts the calls in flight; they fail with SQLITE_INTERRUPT. */
  interrupt() {
    const state = this.#state;
    if (!state.open) throw new Error('Database is not open');
    if (state.closing) throw new Error('Database is closing');
    state.interrupts.abort();
    state.interrupts = new AbortController();
    return this;
  }

  /** Loads an extension on every connection, alone; `callback(err)`. */
  loadExtension(filename, callback) {
    if (typeof filename !== 'string') throw new TypeError('Argument 0 must be a string');
    optionalCallback(callback, 1);
    const state = this.#state;
    state.schedule(
      () => {
        state.pending++;
        const resource = work('sqlite3.Database.LoadExtension');
        // Allowed for this call only, as sqlite3 allows it.
        state.odb.enableLoadExtension(true);
        let loading;
        try {
          loading = state.odb.loadExtension(filename);
        } catch (err) {
          loading = Promise.reject(err);
        } finally {
          state.odb.enableLoadExtension(false);
        }
        loading.then(
          () => {
            invoke(resource, callback, this, [null]);
            this.#end(resource);
          },
          (err) => {
            report(resource, callback, this, sqliteError(RESULT.ERROR, err.message));
            this.#end(resource);
          },
        );
      },
      failTo(this, callback),
      true,
    );
    return this;
  }

  addListener(event, listener) {
    EventEmitter.prototype.addListener.call(this, event, listener);
    if (HOOKED.has(event)) this.configure(event, true);
    return this;
  }

  on(event, listener) {
    return this.addListener(event, listener);
  }

  removeListener(event, listener) {
    EventEmitter.prototype.removeListener.call(this, event, listener);
    if (HOOKED.has(event)) this.configure(event, false);
    return this;
  }

  off(event, listener) {
    return this.removeListener(event, listener);
  }

  removeAllListeners(event) {
    // With no argument, every event's listeners go (an explicit undefined would not do that).
    EventEmitter.prototype.removeAllListeners.apply(this, arguments);
    for (const name of HOOKED) if (event === undefined || event === name) this.configure(name, false);
    return this;
  }
}

// An EventEmitter whose constructor never ran, as sqlite3's classes are:
// its listener table appears with the first listener.
Object.setPrototypeOf(Database.prototype, EventEmitter.prototype);

// The statements of an exec() text, each as SQLite keeps its text (up to
// its semicolon), for 'trace' and 'profile' listeners: sqlite3 reports
// them one by one. offloop finds where each ends.
function statementsOf(odb, sql) {
  const out = [];
  let rest = sql;
  while (rest.trim() !== '') {
    const first = odb.prepare(rest).sourceSQL;
    if (first.length === 0) break;
    out.push(first.trim());
    rest = rest.slice(first.length);
  }
  return out;
}

// 'profile' listeners get the SQL and the milliseconds from the call to its
// end (offloop's threads do not report SQLite's own timer).
function profile(db, state, sql, started) {
  if (!state.hooks.profile) return;
  emit(null, db, 'profile', sql, Number(process.hrtime.bigint() - started) / 1e6);
}

module.exports = { Database, stateOf: (db) => stateOf(db), profile };
