'use strict';

// The public API. Every SQLite call is queued to the addon's Rust threads;
// this file validates arguments, keeps the promises of calls in flight, and
// turns completed results into node:sqlite-shaped values and errors.

const path = require('node:path');
const { fileURLToPath } = require('node:url');
const native = require('./native.js');

// Call kinds and flags shared with src/node/database.rs.
const RUN = 0;
const GET = 1;
const ALL = 2;
const ITERATE = 3;
const COLUMNS = 4;
const FLAG_READ_BIG_INTS = 1;
const FLAG_ALLOW_BARE = 4;
const FLAG_ALLOW_UNKNOWN = 8;

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

// ---------------------------------------------------------------------------
// Errors

function nodeError(Ctor, code, message) {
  const err = new Ctor(message);
  err.code = code;
  return err;
}

const ERROR_CLASSES = {
  ERR_INVALID_ARG_TYPE: TypeError,
  ERR_INVALID_ARG_VALUE: TypeError,
  ERR_OUT_OF_RANGE: RangeError,
};

// `[code, message, errcode, errstr, sqliteCode]` from the addon.
function errorFromNative(desc) {
  const [code, message, errcode, errstr, sqliteCode] = desc;
  if (code === 'ERR_SQLITE_ERROR') {
    const err = new Error(message);
    err.code = code;
    err.errcode = errcode;
    err.errstr = errstr;
    err.sqliteCode = sqliteCode;
    return err;
  }
  if (code === 'ABORT_ERR') {
    const err = new Error(message);
    err.name = 'AbortError';
    err.code = code;
    return err;
  }
  return nodeError(ERROR_CLASSES[code] ?? Error, code, message);
}

function notOpen() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'database is not open');
}

function argType(name, what) {
  return nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', `The "${name}" argument must be ${what}.`);
}

// ---------------------------------------------------------------------------
// Calls in flight. Each call gets an id; the addon settles it by id from one
// batch per wake-up. While any call is pending the addon holds a reference
// on the event loop, so pending work keeps the process alive and an idle
// database does not.

const pending = new Map();
let nextId = 1;

function track(decode, context) {
  const id = nextId++;
  if (nextId > Number.MAX_SAFE_INTEGER) nextId = 1;
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  if (pending.size === 0) native.setKeepAlive(true);
  pending.set(id, { resolve, reject, decode, context });
  return { id, promise };
}

function untrack(id) {
  pending.delete(id);
  if (pending.size === 0) native.setKeepAlive(false);
}

function drain() {
  const batch = native.takeCompletions();
  for (let i = 0; i < batch.length; i += 3) {
    const id = batch[i];
    const call = pending.get(id);
    if (call === undefined) continue;
    pending.delete(id);
    if (batch[i + 1]) {
      let value;
      try {
        value = call.decode === null ? batch[i + 2] : call.decode(batch[i + 2], call.context);
      } catch (err) {
        call.reject(err);
        continue;
      }
      call.resolve(value);
    } else {
      call.reject(errorFromNative(batch[i + 2]));
    }
  }
  if (pending.size === 0) native.setKeepAlive(false);
}

native.init(drain);

// ---------------------------------------------------------------------------
// Rows

function makeRow(columns, values, offset, arrays) {
  const n = columns.length;
  if (arrays) return values.slice(offset, offset + n);
  const row = { __proto__: null };
  for (let c = 0; c < n; c++) row[columns[c]] = values[offset + c];
  return row;
}

function decodeRun(pair) {
  return { changes: pair[0], lastInsertRowid: pair[1] };
}

function decodeGet([columns, values], arrays) {
  return values.length === 0 ? undefined : makeRow(columns, values, 0, arrays);
}

function decodeAll([columns, values], arrays) {
  const n = columns.length;
  const count = n === 0 ? 0 : values.length / n;
  const rows = new Array(count);
  for (let r = 0; r < count; r++) rows[r] = makeRow(columns, values, r * n, arrays);
  return rows;
}

const CHECKPOINT_MODES = { __proto__: null, PASSIVE: 0, FULL: 1, RESTART: 2, TRUNCATE: 3 };

function decodeCheckpoint([logFrames, checkpointedFrames]) {
  return { logFrames, checkpointedFrames };
}

function decodeColumns(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += 5) {
    out.push({
      __proto__: null,
      column: flat[i + 1],
      database: flat[i + 2],
      name: flat[i],
      table: flat[i + 3],
      type: flat[i + 4],
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Options

const BOOLEAN_OPTIONS = [
  ['readOnly', false],
  ['enableForeignKeyConstraints', true],
  ['enableDoubleQuotedStringLiterals', false],
  ['defensive', true],
  ['readBigInts', false],
  ['returnArrays', false],
  ['allowBareNamedParameters', true],
  ['allowUnknownNamedParameters', false],
];

const DEFAULT_READERS = 4;
const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;
// More reader threads than this only add connections and memory.
const MAX_READERS = 64;

function readOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw argType('options', 'an object');
  }
  const out = {};
  for (const [name, fallback] of BOOLEAN_OPTIONS) {
    const value = options[name];
    if (value === undefined) out[name] = fallback;
    else if (typeof value !== 'boolean') throw argType(`options.${name}`, 'a boolean');
    else out[name] = value;
  }
  const timeout = options.timeout;
  if (timeout === undefined) out.timeout = DEFAULT_TIMEOUT_MS;
  else if (!Number.isInteger(timeout) || timeout > 0x7fffffff || timeout < -0x80000000) {
    throw argType('options.timeout', 'an integer');
  } else out.timeout = Math.max(0, timeout);
  const readers = options.readers;
  if (readers === undefined) out.readers = DEFAULT_READERS;
  else if (!Number.isInteger(readers)) throw argType('options.readers', 'an integer');
  else if (readers < 0 || readers > MAX_READERS) {
    throw nodeError(
      RangeError,
      'ERR_OUT_OF_RANGE',
      `The value of "options.readers" is out of range. It must be >= 0 && <= ${MAX_READERS}. Received ${readers}`,
    );
  } else out.readers = readers;
  out.journalSizeLimit = readInteger(options, 'journalSizeLimit', DEFAULT_JOURNAL_SIZE_LIMIT, -1, Number.MAX_SAFE_INTEGER);
  out.checkpoint = readCheckpointOptions(options.checkpoint);
  return out;
}

function readInteger(options, name, fallback, min, max) {
  const value = options[name];
  if (value === undefined) return fallback;
  if (!Number.isInteger(value)) throw argType(`options.${name}`, 'an integer');
  if (value < min || value > max) {
    throw nodeError(
      RangeError,
      'ERR_OUT_OF_RANGE',
      `The value of "options.${name}" is out of range. It must be >= ${min} && <= ${max}. Received ${value}`,
    );
  }
  return value;
}

// `checkpoint: false` turns the checkpointer thread off; an object tunes it.
function readCheckpointOptions(value) {
  if (value === undefined || value === true) value = {};
  if (value === false) return { enabled: false, thresholdFrames: 1000, idleMs: 100, backstopFrames: 10000 };
  if (value === null || typeof value !== 'object') {
    throw argType('options.checkpoint', 'a boolean or an object');
  }
  return {
    enabled: true,
    thresholdFrames: readInteger(value, 'thresholdFrames', 1000, 1, 0x7fffffff),
    idleMs: readInteger(value, 'idleMs', 100, 1, 0x7fffffff),
    backstopFrames: readInteger(value, 'backstopFrames', 10000, 1, 0x7fffffff),
  };
}

function readPath(location) {
  let text;
  if (typeof location === 'string') text = location;
  else if (location instanceof Uint8Array) text = Buffer.from(location).toString('utf8');
  else if (location instanceof URL) {
    if (location.protocol !== 'file:') {
      throw nodeError(TypeError, 'ERR_INVALID_URL_SCHEME', 'The URL must be of scheme file:');
    }
    text = location.href;
  }
  if (text === undefined || text.includes('\0')) {
    throw argType('path', 'a string, Uint8Array, or URL without null bytes');
  }
  return text;
}

function flagsOf(o) {
  return (
    (o.readBigInts ? FLAG_READ_BIG_INTS : 0) |
    (o.allowBareNamedParameters ? FLAG_ALLOW_BARE : 0) |
    (o.allowUnknownNamedParameters ? FLAG_ALLOW_UNKNOWN : 0)
  );
}

// ---------------------------------------------------------------------------
// Database

const OPENING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

class Database {
  #native;
  #state = OPENING;
  #options;
  #path;
  #closed = null;

  /**
   * Starts opening at once; `ready` settles when every connection is open.
   * Calls made before then wait in their queues.
   */
  constructor(location, options) {
    this.#path = readPath(location);
    this.#options = readOptions(arguments.length < 2 ? {} : options);
    const { id, promise } = track(null, null);
    try {
      this.#native = new native.NativeDatabase(
        this.#path,
        {
          readers: this.#options.readers,
          readOnly: this.#options.readOnly,
          timeout: this.#options.timeout,
          enableForeignKeyConstraints: this.#options.enableForeignKeyConstraints,
          enableDoubleQuotedStringLiterals: this.#options.enableDoubleQuotedStringLiterals,
          defensive: this.#options.defensive,
          journalSizeLimit: this.#options.journalSizeLimit,
          checkpoint: this.#options.checkpoint.enabled,
          checkpointThresholdFrames: this.#options.checkpoint.thresholdFrames,
          checkpointIdleMs: this.#options.checkpoint.idleMs,
          checkpointBackstopFrames: this.#options.checkpoint.backstopFrames,
        },
        id,
      );
    } catch (err) {
      untrack(id);
      throw err;
    }
    this.ready = promise.then(
      () => {
        if (this.#state === OPENING) this.#state = OPEN;
        return this;
      },
      (err) => {
        this.#state = CLOSED;
        this.#closed = this.#shutdown();
        throw err;
      },
    );
    // A failed open is reported through `ready` (and every queued call);
    // nobody awaiting `ready` must not crash the process.
    this.ready.catch(() => {});
  }

  /** Opens a database and resolves once every connection is open. */
  static open(location, options) {
    try {
      const db = arguments.length < 2 ? new Database(location) : new Database(location, options);
      return db.ready;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The version of the bundled SQLite. */
  static get sqliteVersion() {
    return native.sqliteVersion();
  }

  /** True once open and until `close()` is called. */
  get isOpen() {
    return this.#state === OPEN;
  }

  /** The absolute path of the database file; null for in-memory databases. */
  location() {
    if (this.#state !== OPEN) throw notOpen();
    return this.#native.location();
  }

  /** Creates a statement. Nothing is prepared until its first call. */
  prepare(sql, options) {
    if (this.#state >= CLOSING) throw notOpen();
    if (typeof sql !== 'string') throw argType('sql', 'a string');
    let flags = this.#options;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw argType('options', 'an object');
      flags = { ...flags };
      for (const name of [
        'returnArrays',
        'readBigInts',
        'allowBareNamedParameters',
        'allowUnknownNamedParameters',
      ]) {
        const value = options[name];
        if (value === undefined) continue;
        if (typeof value !== 'boolean') throw argType(`options.${name}`, 'a boolean');
        flags[name] = value;
      }
    }
    return new Statement(this, this.#native.sql(sql), sql, flags);
  }

  /** Runs every statement in `sql` on the writer; resolves to undefined. */
  exec(sql) {
    if (this.#state >= CLOSING) return Promise.reject(notOpen());
    if (typeof sql !== 'string') throw argType('sql', 'a string');
    const { id, promise } = track(null, null);
    this.#native.exec(id, sql);
    return promise;
  }

  /**
   * Work done so far, per thread: jobs executed, jobs queued now, and how
   * long jobs waited in the queue.
   */
  stats() {
    if (this.#state === CLOSED) throw notOpen();
    const s = this.#native.stats();
    return {
      writer: s.writer,
      readers: s.readers,
      readerQueue: s.readerQueue,
      checkpoint: { ...s.checkpoint, error: s.checkpoint.error ?? null },
    };
  }

  /**
   * Runs a WAL checkpoint on the checkpointer thread (on the writer when the
   * checkpointer is off). Resolves to SQLite's counts:
   * `{ logFrames, checkpointedFrames }`.
   */
  /**
   * Stops the checkpointer thread, as if it had failed: SQLite's automatic
   * checkpoint on the writer takes over (`wal_autocheckpoint` 1000) and
   * `stats().checkpoint.active` turns false.
   */
  stopCheckpointer() {
    if (this.#state >= CLOSING) return Promise.reject(notOpen());
    const { id, promise } = track(null, null);
    this.#native.stopCheckpointer(id);
    return promise;
  }

  checkpoint(mode = 'PASSIVE') {
    if (this.#state >= CLOSING) return Promise.reject(notOpen());
    if (typeof mode !== 'string') throw argType('mode', 'a string');
    const code = CHECKPOINT_MODES[mode.toUpperCase()];
    if (code === undefined) {
      throw nodeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        `The argument 'mode' must be one of PASSIVE, FULL, RESTART, TRUNCATE. Received '${mode}'`,
      );
    }
    const { id, promise } = track(decodeCheckpoint, null);
    this.#native.checkpoint(id, code);
    return promise;
  }

  /**
   * Lets queued work finish, closes every connection on its own thread and
   * joins the threads. Calls made after it reject with ERR_INVALID_STATE.
   * Calling it again returns the same promise.
   */
  close() {
    if (this.#closed === null) {
      this.#state = CLOSING;
      this.#closed = this.#shutdown().then(() => {
        this.#state = CLOSED;
      });
    }
    return this.#closed;
  }

  [asyncDispose]() {
    return this.close();
  }

  #shutdown() {
    const { id, promise } = track(null, null);
    this.#native.close(id);
    return promise;
  }

  // Internal: used by Statement and its iterators.
  _call(kind, handle, args, options, decode, context) {
    if (this.#state >= CLOSING) return Promise.reject(notOpen());
    const { id, promise } = track(decode, context);
    const bad = this.#native.call(kind, id, handle, args, flagsOf(options));
    if (bad !== null) {
      untrack(id);
      throw nodeError(ERROR_CLASSES[bad[0]] ?? Error, bad[0], bad[1]);
    }
    return promise;
  }

  _next(cursor, options, decode, context) {
    if (this.#state === CLOSED) return Promise.reject(notOpen());
    const { id, promise } = track(decode, context);
    this.#native.next(id, cursor[0], cursor[1], flagsOf(options));
    return promise;
  }

  _closeCursor(cursor) {
    if (this.#state === CLOSED) return Promise.resolve();
    const { id, promise } = track(null, null);
    this.#native.closeCursor(id, cursor[0], cursor[1]);
    return promise;
  }
}

// ---------------------------------------------------------------------------
// Statement

function checkBoolean(value, name) {
  if (typeof value !== 'boolean') throw argType(name, 'a boolean');
}

class Statement {
  #db;
  #handle;
  #sql;
  #options;

  constructor(db, handle, sql, options) {
    this.#db = db;
    this.#handle = handle;
    this.#sql = sql;
    this.#options = {
      readBigInts: options.readBigInts,
      returnArrays: options.returnArrays,
      allowBareNamedParameters: options.allowBareNamedParameters,
      allowUnknownNamedParameters: options.allowUnknownNamedParameters,
    };
  }

  /** The SQL text this statement was created with. */
  get sourceSQL() {
    return this.#sql;
  }

  /** Runs the statement; resolves to `{ changes, lastInsertRowid }`. */
  run(...params) {
    return this.#db._call(RUN, this.#handle, params, this.#options, decodeRun, null);
  }

  /** Resolves to the first row, or undefined when there is none. */
  get(...params) {
    return this.#db._call(GET, this.#handle, params, this.#options, decodeGet, this.#options.returnArrays);
  }

  /** Resolves to an array of every row. */
  all(...params) {
    return this.#db._call(ALL, this.#handle, params, this.#options, decodeAll, this.#options.returnArrays);
  }

  /**
   * An async iterator over the rows, fetched in chunks from the thread that
   * runs the query; the next chunk is requested as the current one is
   * consumed, so a large result is never held whole.
   */
  iterate(...params) {
    const options = { ...this.#options };
    const first = this.#db._call(ITERATE, this.#handle, params, options, null, null);
    return new RowIterator(this.#db, first, options);
  }

  /** Resolves to the result columns' metadata, as node:sqlite's columns(). */
  columns() {
    return this.#db._call(COLUMNS, this.#handle, [], this.#options, decodeColumns, null);
  }

  setReadBigInts(enabled) {
    checkBoolean(enabled, 'readBigInts');
    this.#options.readBigInts = enabled;
  }

  setReturnArrays(enabled) {
    checkBoolean(enabled, 'returnArrays');
    this.#options.returnArrays = enabled;
  }

  setAllowBareNamedParameters(enabled) {
    checkBoolean(enabled, 'allowBareNamedParameters');
    this.#options.allowBareNamedParameters = enabled;
  }

  setAllowUnknownNamedParameters(enabled) {
    checkBoolean(enabled, 'enabled');
    this.#options.allowUnknownNamedParameters = enabled;
  }
}

// ---------------------------------------------------------------------------
// RowIterator: buffers one chunk and asks for the next one as soon as the
// consumer starts on the current one, so at most two chunks are in memory.

const DONE = Object.freeze({ __proto__: null, done: true, value: null });

// A cursor left open by an iterator nobody finished is closed when the
// iterator is garbage-collected, so its reader is not pinned forever.
const abandoned = new FinalizationRegistry(({ db, cursor }) => {
  db._closeCursor(cursor).catch(() => {});
});

class RowIterator {
  #db;
  #options;
  #columns = null;
  #values = null;
  #offset = 0;
  #cursor = null;
  #ahead = null;
  #finished = false;
  #chain;

  constructor(db, first, options) {
    this.#db = db;
    this.#options = options;
    this.#ahead = first;
    this.#chain = Promise.resolve();
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    const step = this.#chain.then(() => this.#step());
    this.#chain = step.catch(() => {});
    return step;
  }

  async #step() {
    for (;;) {
      if (this.#finished) return DONE;
      if (this.#values !== null && this.#offset < this.#values.length) {
        const row = makeRow(this.#columns, this.#values, this.#offset, this.#options.returnArrays);
        this.#offset += this.#columns.length;
        return { __proto__: null, done: false, value: row };
      }
      if (this.#ahead === null) {
        if (this.#cursor === null) {
          this.#finish();
          return DONE;
        }
        this.#ahead = this.#db._next(this.#cursor, this.#options, null, null);
      }
      let chunk;
      try {
        chunk = await this.#ahead;
      } catch (err) {
        this.#cursor = null;
        this.#finish();
        throw err;
      }
      this.#ahead = null;
      this.#columns = chunk[0];
      this.#values = chunk[1];
      this.#offset = 0;
      if (this.#columns.length === 0) this.#values = [];
      const cursor = chunk[2] === null ? null : [chunk[2], chunk[3]];
      if (this.#cursor === null && cursor !== null) {
        abandoned.register(this, { db: this.#db, cursor }, this);
      }
      this.#cursor = cursor;
      if (cursor !== null) {
        // Read ahead while the consumer works through this chunk.
        this.#ahead = this.#db._next(cursor, this.#options, null, null);
        this.#ahead.catch(() => {});
      }
    }
  }

  #finish() {
    this.#finished = true;
    this.#values = null;
    abandoned.unregister(this);
  }

  /** Ends the iteration early (called by `break` in `for await`). */
  return() {
    const step = this.#chain.then(async () => {
      if (this.#finished) return DONE;
      const cursor = this.#cursor;
      const ahead = this.#ahead;
      this.#cursor = null;
      this.#ahead = null;
      this.#finish();
      let open = cursor;
      if (ahead !== null) {
        // The chunk in flight may be the first, which opened the cursor.
        const chunk = await ahead.catch(() => null);
        if (chunk !== null && chunk[2] !== null) open = [chunk[2], chunk[3]];
        else if (chunk !== null) open = null;
      }
      if (open !== null) await this.#db._closeCursor(open).catch(() => {});
      return DONE;
    });
    this.#chain = step.catch(() => {});
    return step;
  }
}

module.exports = { Database, Statement };
