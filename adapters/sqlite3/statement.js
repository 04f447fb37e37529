'use strict';

// sqlite3's Statement on an offloop statement, and the Database methods
// that make one (prepare, run, get, all, each, map). This file owns a
// statement's queue (its calls run one after another, after its prepare),
// its bindings (kept from call to call until new ones are given), the
// position a bare get() steps on from, and what happens to calls made after
// finalize(). Each call is one offloop call: offloop decides which thread
// runs it. It never runs SQLite on this thread.

const EventEmitter = require('node:events');

const { Database, stateOf, profile } = require('./database.js');
const { fromOffloop, isEmptySql } = require('./errors.js');
const { bindArgs, byIndex, toRow } = require('./values.js');
const { parameterNames } = require('./parameters.js');
const { done, emit, invoke, report, work } = require('./callback.js');
const { CallQueue } = require('./queue.js');

// offloop reads integers as BigInts (so that none beyond 2^53 is refused)
// and binds a name only with its prefix, as sqlite3 does.
const STATEMENT_OPTIONS = { readBigInts: true, allowBareNamedParameters: false };

// Passed by the Database methods that prepare a statement and run it at
// once: its prepare and its first call are one offloop call.
const FUSED = Symbol('fused');

/**
 * Takes a trailing function off `args` (a call's own rest array) and
 * returns it: the callback. What stays are the parameters.
 */
function takeCallback(args) {
  return args.length > 0 && typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
}

/**
 * A queued call's parameters as it keeps them until it runs: its own rest
 * array (null when empty; the queue keeps up to two in its own slots), its
 * strings flattened. A string built by `+=`
 * is a rope of every piece it was built from, tens of bytes per piece;
 * reading a character makes V8 flatten it in place, so the queue keeps one
 * flat string (sqlite3 copies each value when the call is made).
 */
function keepParams(args) {
  if (args.length === 0) return null;
  const first = args[0];
  if (Array.isArray(first)) flatten(first);
  else if (first !== null && typeof first === 'object') flatten(Object.values(first));
  else flatten(args);
  return args;
}

function flatten(values) {
  for (let i = 0; i < values.length; i++) if (typeof values[i] === 'string') values[i].charCodeAt(0);
}

class Statement {
  #db;
  #state;
  #ost = null;
  #prepared = false;
  #finalized = false;
  #calls = new CallQueue(this, {
    ready: () => this.#prepared,
    ended: () => this.#finalized,
    misuse: 'Statement is already finalized',
    unheard: (err) => emit(null, this, 'error', err),
  });
  // The offloop arguments of the last binding: a call without parameters
  // runs with them again, as sqlite3 keeps a statement's bindings.
  #bound = [];
  #names = undefined;
  // Where the statement stands after its last call: 'ready' (prepared,
  // reset or bound), 'row' (a get() returned a row), 'done' (ran to its
  // end) or 'error'. A get() without parameters steps on from 'row' and
  // finds nothing after 'done', as sqlite3_step() does.
  #status = 'ready';
  #consumed = 0;
  #cursor = null;
  // A fused statement's first call reports a failure as its prepare would:
  // to the prepare's callback, in the prepare's async resource.
  #fusedFirst = false;
  #fusedFail;
  #prepareResource = null;

  /** `new Statement(db, sql[, callback])`: prepares `sql` once the database lets it. */
  constructor(db, sql, callback, fused) {
    if (!(db instanceof Database)) throw new TypeError('Database object expected');
    if (typeof sql !== 'string') throw new TypeError('SQL query expected');
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Callback expected');
    Object.defineProperty(this, 'sql', { value: sql });
    this.#db = db;
    this.#state = stateOf(db);
    const fail = (err, quiet) => {
      if (invoke(null, callback, this, [err])) return true;
      if (!quiet) emit(null, db, 'error', err);
      return false;
    };
    if (fused === FUSED) {
      this.#fusedFirst = true;
      this.#fusedFail = callback;
      this.#state.schedule(() => {
        this.#prepareResource = work('sqlite3.Statement.Prepare');
        // With 'trace' listeners, a statement of its own: trace reads back the
        // values of the statement's last call.
        const state = this.#state;
        this.#ost = state.hooks.trace ? state.odb.prepare(sql, STATEMENT_OPTIONS) : state.statement(sql, STATEMENT_OPTIONS);
        this.#prepared = true;
        this.#calls.process();
      }, fail);
    } else {
      this.#state.schedule(() => this.#prepare(callback), fail);
    }
  }

  // An explicit prepare asks offloop for the columns: that prepares the
  // statement on a SQLite thread, so a bad statement fails here.
  #prepare(callback) {
    const state = this.#state;
    state.pending++;
    const resource = work('sqlite3.Statement.Prepare');
    this.#ost = state.odb.prepare(this.sql, STATEMENT_OPTIONS);
    // `holds`: SQLite holds a statement for it, which close() waits for.
    const prepared = (holds) => {
      this.#prepared = true;
      if (holds) state.live.add(this);
      invoke(resource, callback, this, [null]);
      this.#endPrepare(resource);
    };
    this.#ost.columns().then(
      () => prepared(true),
      (err) => {
        // SQL with no statement prepares, as in sqlite3 (to no SQLite
        // statement: the database closes without its finalize); each call
        // of it then fails with SQLITE_MISUSE (errors.js).
        if (isEmptySql(err)) return prepared(false);
        report(resource, callback, this, fromOffloop(err));
        this.#finalize();
        this.#endPrepare(resource);
      },
    );
  }

  #endPrepare(resource) {
    done(resource);
    this.#state.pending--;
    this.#calls.process();
    this.#state.process();
  }

  // --- the queue -----------------------------------------------------------

  #begin(name) {
    this.#calls.locked = true;
    this.#state.pending++;
    return work(`sqlite3.Statement.${name}`);
  }

  #end(resource) {
    done(resource);
    this.#calls.locked = false;
    this.#state.pending--;
    this.#calls.process();
    this.#state.process();
  }

  // A failed call: its callback (or the 'error' event). The first call of a
  // fused statement reports as the prepare would, and ends the statement.
  #fail(resource, callback, err) {
    this.#status = 'error';
    this.#closeCursor();
    const error = fromOffloop(err);
    if (this.#fusedFirst) {
      this.#fusedFirst = false;
      report(this.#prepareResource, this.#fusedFail, this, error);
      done(this.#prepareResource);
      this.#prepared = false;
      this.#finalize();
    } else {
      report(resource, callback, this, error);
    }
    this.#end(resource);
  }

  // --- offloop calls -------------------------------------------------------

  /** The offloop statement, carrying the signal interrupt() aborts now. */
  #target() {
    return this.#state.signalled(this.#ost);
  }

  /**
   * One offloop call with the current bindings; with 'trace' listeners,
   * they get the SQL with its values (SQLite's expansion) first.
   */
  #call(method) {
    const target = this.#target();
    const call = this.#state.settled(target[method](...this.#bound));
    if (!this.#state.hooks.trace) return call;
    call.catch(() => {});
    return target.expandedSQL.then(
      (sql) => {
        emit(null, this.#db, 'trace', sql);
        return call;
      },
      () => call,
    );
  }

  // When the call started, for 'profile' listeners (null without them).
  #started() {
    return this.#state.hooks.profile ? process.hrtime.bigint() : null;
  }

  #profile(started) {
    if (started === null) return;
    profile(this.#db, this.#state, this.#ost.sourceSQL, started);
  }

  // New parameters replace the bindings and reset the statement.
  #rebind(params) {
    if (params === null) return;
    const args = bindArgs(params);
    if (args === null) return;
    this.#bound = byIndex(args, this.#parameterNames());
    this.#reset();
  }

  // The statement's named slots by index (null: none), read once.
  #parameterNames() {
    if (this.#names === undefined) this.#names = /[:@$#]/.test(this.sql) ? parameterNames(this.#ost.sourceSQL) : null;
    return this.#names;
  }

  #reset() {
    this.#closeCursor();
    this.#status = 'ready';
    this.#consumed = 0;
  }

  #closeCursor() {
    const cursor = this.#cursor;
    this.#cursor = null;
    cursor?.return().catch(() => {});
  }

  // The first call of a fused statement succeeded: its prepare did.
  #preparedOk() {
    if (!this.#fusedFirst) return;
    this.#fusedFirst = false;
    done(this.#prepareResource);
  }

  // --- sqlite3's Statement methods -----------------------------------------

  /** Replaces the bindings (and resets); `callback(err)`. */
  bind(...args) {
    const callback = takeCallback(args);
    this.#calls.scheduleParams(this.#bind, keepParams(args), callback);
    return this;
  }

  #bind(params, callback) {
    const resource = this.#begin('Bind');
    this.#rebind(params);
    queueMicrotask(() => {
      invoke(resource, callback, this, [null]);
      this.#end(resource);
    });
  }

  /** Back to the first row, bindings kept; `callback(null)`. */
  reset(callback) {
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 0 must be a function');
    this.#calls.schedule(this.#resetCall, null, callback);
    return this;
  }

  #resetCall(_, callback) {
    const resource = this.#begin('Reset');
    this.#reset();
    queueMicrotask(() => {
      invoke(resource, callback, this, [null]);
      this.#end(resource);
    });
  }

  /** Runs once; the callback sees `this.lastID` and `this.changes`. */
  run(...args) {
    const callback = takeCallback(args);
    this.#calls.scheduleParams(this.#run, keepParams(args), callback);
    return this;
  }

  #run(params, callback) {
    const resource = this.#begin('Run');
    const started = this.#started();
    this.#closeCursor();
    this.#rebind(params);
    this.#call('run').then(
      (result) => {
        this.#preparedOk();
        this.#status = 'done';
        this.#profile(started);
        if (typeof callback === 'function') {
          this.lastID = Number(result.lastInsertRowid);
          this.changes = Number(result.changes);
        }
        invoke(resource, callback, this, [null]);
        this.#end(resource);
      },
      (err) => this.#fail(resource, callback, err),
    );
  }

  /** The next row: `callback(null, row)`, or `callback(null)` past the last. */
  get(...args) {
    const callback = takeCallback(args);
    this.#calls.scheduleParams(this.#get, keepParams(args), callback);
    return this;
  }

  #get(params, callback) {
    const resource = this.#begin('Get');
    const started = this.#started();
    this.#rebind(params);
    let next;
    if (this.#status === 'done') next = Promise.resolve(undefined);
    else if (this.#status === 'row') next = this.#stepOn();
    else {
      this.#consumed = 0;
      next = this.#call('get');
    }
    next.then(
      (row) => {
        this.#preparedOk();
        this.#profile(started);
        if (row === undefined) {
          this.#status = 'done';
          this.#closeCursor();
          invoke(resource, callback, this, [null]);
        } else {
          this.#status = 'row';
          this.#consumed++;
          invoke(resource, callback, this, [null, toRow(row)]);
        }
        this.#end(resource);
      },
      (err) => this.#fail(resource, callback, err),
    );
  }

  // The row after the ones get() returned since the last reset: a cursor
  // from the start, past those rows, kept open for the next get().
  async #stepOn() {
    if (this.#cursor === null) {
      this.#cursor = this.#target().iterate(...this.#bound);
      for (let i = 0; i < this.#consumed; i++) {
        if ((await this.#cursor.next()).done) return undefined;
      }
    }
    const { done: finished, value } = await this.#cursor.next();
    return finished ? undefined : value;
  }

  /** Every row: `callback(null, rows)`. */
  all(...args) {
    const callback = takeCallback(args);
    this.#calls.scheduleParams(this.#all, keepParams(args), callback);
    return this;
  }

  #all(params, callback) {
    const resource = this.#begin('All');
    const started = this.#started();
    this.#closeCursor();
    this.#rebind(params);
    this.#call('all').then(
      (rows) => {
        this.#preparedOk();
        this.#status = 'done';
        this.#profile(started);
        if (typeof callback === 'function') {
          const out = new Array(rows.length);
          for (let i = 0; i < rows.length; i++) out[i] = toRow(rows[i]);
          invoke(resource, callback, this, [null, out]);
        }
        this.#end(resource);
      },
      (err) => this.#fail(resource, callback, err),
    );
  }

  /**
   * `each([params...], callback(err, row)[, complete(err, count)])`: the
   * rows one by one as they arrive, then the count.
   */
  each(...args) {
    let complete;
    if (args.length >= 2 && typeof args[args.length - 1] === 'function' && typeof args[args.length - 2] === 'function') {
      complete = args.pop();
    }
    const callback = takeCallback(args);
    this.#calls.schedule(this.#eachCall, { params: keepParams(args), complete }, callback);
    return this;
  }

  #eachCall({ params, complete }, callback) {
    const resource = this.#begin('Each');
    const started = this.#started();
    this.#closeCursor();
    this.#rebind(params);
    this.#each(resource, callback, complete, started);
  }

  async #each(resource, callback, complete, started) {
    let count = 0;
    // interrupt() made while the rows arrive stops them: its abort stops
    // the chunk running on a SQLite thread, and the rows of a chunk
    // already here are not handed out after it, as sqlite3 stops stepping.
    const { signal } = this.#state;
    try {
      const target = this.#target();
      const rows = target.iterate(...this.#bound);
      if (this.#state.hooks.trace) emit(null, this.#db, 'trace', await target.expandedSQL);
      for await (const row of rows) {
        // Leaving the loop closes the iteration (its cursor).
        if (signal.aborted) throw signal.reason;
        this.#preparedOk();
        count++;
        invoke(resource, callback, this, [null, toRow(row)]);
      }
    } catch (err) {
      if (this.#fusedFirst) {
        this.#fail(resource, callback, err);
        return;
      }
      // A step's error goes to the row callback; the count still follows,
      // as in sqlite3.
      this.#status = 'error';
      this.#closeCursor();
      report(resource, callback, this, fromOffloop(err));
      invoke(resource, complete, this, [null, count]);
      this.#end(resource);
      return;
    }
    this.#preparedOk();
    this.#status = 'done';
    this.#profile(started);
    invoke(resource, complete, this, [null, count]);
    this.#end(resource);
  }

  /**
   * `map([params...], callback(err, map))`: the rows keyed by their first
   * column; the value is the second column when there are two, else the row.
   */
  map(...args) {
    const callback = args.pop();
    args.push((err, rows) => {
      if (err) return callback(err);
      const result = {};
      if (rows.length > 0) {
        const keys = Object.keys(rows[0]);
        const [key, value] = keys;
        for (const row of rows) result[row[key]] = keys.length > 2 ? row : row[value];
      }
      return callback(err, result);
    });
    return this.all(...args);
  }

  /** Ends the statement once its calls ran; later calls fail. Returns the database. */
  finalize(callback) {
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError('Argument 0 must be a function');
    this.#calls.schedule(this.#finalizeCall, null, callback);
    return this.#db;
  }

  #finalizeCall(_, callback) {
    this.#finalize();
    invoke(null, callback, this, []);
  }

  #finalize() {
    this.#finalized = true;
    this.#state.live.delete(this);
    this.#closeCursor();
    this.#calls.clean();
  }

  /** For the Database methods: prepares and runs at once, then finalizes. */
  static fused(db, sql, args, method) {
    // sqlite3's Database methods pass the trailing callback to the prepare
    // too, for its failure only. A failure here may be the prepare's (where
    // sqlite3 calls it without a `this`) or the first step's (`this` is the
    // statement): offloop reports both from one call, and the statement is
    // given.
    const callback = args.length > 0 && typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
    const onFailure =
      callback === undefined
        ? undefined
        : function (err) {
            if (err) callback.call(this, err);
          };
    const stmt = new Statement(db, sql, onFailure, FUSED);
    stmt[method](...args);
    stmt.finalize();
    return stmt;
  }
}

// An EventEmitter whose constructor never ran, as sqlite3's classes are.
Object.setPrototypeOf(Statement.prototype, EventEmitter.prototype);

// The Database methods sqlite3 builds on Statement.

Database.prototype.prepare = function prepare(sql, ...args) {
  const callback = args.length > 0 && typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
  const onFailure =
    callback === undefined
      ? undefined
      : (err) => {
          if (err) callback(err);
        };
  const stmt = new Statement(this, sql, onFailure);
  return args.length > 0 ? stmt.bind(...args) : stmt;
};

for (const method of ['run', 'get', 'all', 'each', 'map']) {
  Database.prototype[method] = {
    [method](sql, ...args) {
      Statement.fused(this, sql, args, method);
      return this;
    },
  }[method];
}

module.exports = { Statement };
