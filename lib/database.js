'use strict';

// Database: the public handle on one open database.

const EventEmitter = require('node:events');
const { native, track, forget } = require('./calls.js');
const { Core, OPENING, OPEN, CLOSING, CLOSED, send } = require('./core.js');
const { argType, nodeError, notOpen } = require('./errors.js');
const { readBackup, startBackup } = require('./backup.js');
const { applyChangeset, createSession } = require('./session.js');
const { deserialize, serialize } = require('./image.js');
const { observe } = require('./diagnostics.js');
const { absolutePath, databasePath, traceOperation } = require('./tracing.js');
const { readAuthorizer } = require('./authorizer.js');
const { wrapTxid, restoreInto, startFill, waitFilled, warnReplica } = require('./restore.js');
const { catchUp, staleness, stopFollowing } = require('./follow.js');
const { follow, promote, stopWatching } = require('./promote.js');
const { configure, databaseStats, processStats } = require('./stats.js');
const {
  nativeOptions,
  readCallOptions,
  readCheckpointMode,
  readOptions,
  readPath,
  readReplicaOptions,
  whyNotReplicable,
} = require('./options.js');
const { decodeBatch } = require('./rows.js');
const { closeInTurn } = require('./file-closes.js');
const { defineAggregate, defineFunction } = require('./functions.js');
const { createLimits, limitValues } = require('./limits.js');
const { SQLTagStore } = require('./tag-store.js');
const { decodeSettings, emitSettingWarnings } = require('./settings.js');
const { prepare, batchCalls } = require('./statement.js');
const { beginTransaction, runRead, runTransaction } = require('./transaction.js');

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

// A database created with `open: false` has this core until open().
const UNOPENED = { state: CLOSED, closing: true, native: null };

// The open database's native handle, or null: set by the class's static block, for lib/row-changes.js.
let nativeOf;

class Database extends EventEmitter {
  #core = UNOPENED;
  #closed = null;
  // A stopReplicating() still shipping: a new replicate() waits for it (both use the replicator's folder).
  #stopping = Promise.resolve();
  #transactions = { open: 0 };
  #path;
  #options;
  // What `db.limits` reads and sets while open (lib/limits.js).
  #limitValues = null;
  #limits = createLimits(() => {
    if (this.#core.closing) throw notOpen();
    return { values: this.#limitValues, send: (id, value) => native.setLimit(this.#core.native, id, value) };
  });
  // Whether loadExtension() may load (allowExtension, enableLoadExtension()).
  #extensionsAllowed = false;
  #ready;
  // `db.filled`, made at the first read after each open.
  #filled = null;

  /**
   * Starts opening at once (unless `options.open` is false); `ready`
   * settles when the writer's connection is open. Calls made before then wait in
   * their queues.
   */
  constructor(location, options) {
    super();
    this.#path = readPath(location);
    this.#options = readOptions(arguments.length < 2 ? {} : options);
    let settle;
    // Settles with the first open (at once, or from open()).
    this.ready = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.#ready = settle;
    // A failed open is reported through `ready` (and every queued call); nobody awaiting it must not crash.
    this.ready.catch(() => {});
    if (this.#options.open) this.#start();
  }

  /**
   * Opens a database created with `open: false`, or one closed since;
   * resolves once the writer's connection is open. Throws ERR_INVALID_STATE when
   * it is open or opening.
   */
  open() {
    if (this.#core.state !== CLOSED) {
      throw nodeError(
        Error,
        'ERR_INVALID_STATE',
        this.#core.state === CLOSING ? 'database is closing' : 'database is already open',
      );
    }
    return this.#start();
  }

  /** Opens; traced on `offloop:open` from this call until the writer's connection is open. */
  #start() {
    const fields = () => ({ method: 'open', database: absolutePath(this.#path) });
    const started = traceOperation('open', fields, () => this.#open());
    started.catch(() => {}); // The constructor drops it: a failed open is reported through `ready`.
    return started;
  }

  #open() {
    const path = this.#path;
    const o = this.#options;
    const { id, promise } = track(null, null);
    let nativeDb;
    try {
      nativeDb = new native.NativeDatabase(path, nativeOptions(o), id);
    } catch (err) {
      forget(id);
      throw err;
    }
    const core = new Core(nativeDb, o, path);
    core.database = this;
    if (o.follow?.maxStalenessMs !== undefined) core.stale = staleness;
    this.#core = core;
    this.#closed = null;
    this.#transactions = { open: 0 };
    this.#filled = null;
    this.#limitValues = limitValues(o.limits, (limit, value) => native.setLimit(nativeDb, limit, value));
    this.#extensionsAllowed = o.allowExtension;
    const opened = promise
      .then(async (settings) => {
        // A replica that can never work (a bad URL, refused credentials, a
        // path that is a file) fails the open; one that is only down does
        // not, and shows in stats().replica.lastError. After a restore the
        // open waits only to take a lease: the restore has just read the replica.
        if (o.replica !== undefined) {
          const contact = this.#replicaCall((id) => core.native.replicaReady(id)).then(() => warnReplica(core));
          if (o.restore === undefined) await contact;
          else if (o.replica.leaseTtlMs !== undefined) await contact.then(() => startFill(core));
          // The fill starts after that contact, whether it worked or not.
          else contact.catch((err) => warnReplica(core, err)).then(() => startFill(core));
        }
        if (o.follow !== undefined) follow(core, this);
        return settings;
      })
      .then(
        (settings) => {
          if (core.state === OPENING) core.state = OPEN;
          // What every connection read back once its settings were applied:
          // a value in force that is not the one requested is a warning.
          emitSettingWarnings(settings);
          return this;
        },
        (err) => {
          core.state = CLOSED;
          this.#closed = this.#shutdown();
          throw err;
        },
      );
    opened.catch(() => {});
    // The first open settles the `ready` made in the constructor; a reopen after close() has its own.
    this.#ready.resolve(opened);
    this.ready = opened;
    return opened;
  }

  /**
   * Opens a database and resolves once the writer's connection is open. A failed
   * open rejects once its threads have ended and let go of every file, so
   * the caller, who has no database to close, may at once delete, move or
   * open the files again. (`new Database()` rejects `db.ready` at once, so
   * calls queued before it still reject after it; `db.close()` then
   * resolves once the files are let go.)
   */
  static open(location, options) {
    let db;
    try {
      db = arguments.length < 2 ? new Database(location) : new Database(location, options);
    } catch (err) {
      return Promise.reject(err);
    }
    return db.ready.catch((err) => {
      const fail = () => {
        throw err;
      };
      return db.close().then(fail, fail);
    });
  }

  /**
   * Restores the replica at `url` into the database file `path`, on a
   * thread of its own. `options`: `{ txid, timestamp, overwrite, ...s3 }`.
   * Resolves to `{ txid }`, the TXID restored. Refuses to replace an
   * existing file unless `overwrite: true`.
   */
  static restore(url, location, options) {
    return restoreInto(url, location, options);
  }

  /** The version of the bundled SQLite. */
  static get sqliteVersion() {
    return native.sqliteVersion();
  }

  /** The check-in the bundled SQLite was built from (`sqlite_source_id()`). */
  static get sqliteSourceId() {
    return native.sqliteSourceId();
  }

  /** What the bundled SQLite was compiled with (`PRAGMA compile_options`). */
  static compileOptions() { return native.compileOptions(); }

  /** The process-wide view (databases, connections, SQLite threads, work waiting), and its one setting: `threads`. */
  static stats() { return processStats(); }
  static configure(options) { configure(options); }

  /** Resolves once every page is local: at once, unless opened with `restore: 'paged'` and still filling. */
  get filled() {
    if (this.#filled === null) {
      const core = this.#core;
      this.#filled = core === UNOPENED ? Promise.reject(notOpen()) : this.ready.then(() => waitFilled(core));
      this.#filled.catch(() => {});
    }
    return this.#filled;
  }

  /** True once open and until `close()` is called. */
  get isOpen() {
    return this.#core.state === OPEN;
  }

  /**
   * True while a transaction is open: from `begin()` (or the start of a
   * `transaction()` callback) until its caller commits or rolls it back,
   * and while the writer's connection is inside a transaction begun
   * otherwise (`exec('BEGIN')`).
   */
  get isTransaction() {
    if (this.#core.closing) throw notOpen();
    return this.#transactions.open > 0 || (this.#core.state === OPEN && native.inTransaction(this.#core.native));
  }

  /**
   * SQLite's limits, live: reading one gives the value every connection
   * has, setting one changes it on every connection (Infinity: back to the
   * default). Reading or setting throws when the database is not open.
   */
  get limits() {
    return this.#limits;
  }

  /**
   * The absolute path of schema `dbName`'s file ('main', or an attached
   * database); null for an in-memory or temporary one. Read from the list
   * the writer refreshes after each call, so it holds every ATTACH and
   * DETACH that resolved.
   */
  location(dbName) {
    if (this.#core.state !== OPEN) throw notOpen();
    if (dbName !== undefined && typeof dbName !== 'string') throw argType('dbName', 'a string');
    return this.#core.native.location(dbName ?? 'main');
  }

  /**
   * Turns SQLite's defensive mode (which refuses SQL that can corrupt the
   * database file, such as writing to `sqlite_schema`) on or off on every
   * connection, for the calls made after this.
   */
  enableDefensive(active) {
    if (this.#core.closing) throw notOpen();
    if (typeof active !== 'boolean') throw argType('active', 'a boolean');
    native.setDefensive(this.#core.native, active);
  }

  /**
   * Puts `callback(action, arg1, arg2, dbName, trigger)` after offloop's
   * own authorizer on every connection (null removes it). It answers
   * constants.SQLITE_OK, SQLITE_DENY or SQLITE_IGNORE for each action of a
   * statement being prepared, on this thread while the connection waits.
   */
  setAuthorizer(callback) {
    if (this.#core.closing) throw notOpen();
    native.setAuthorizer(this.#core.native, readAuthorizer(callback));
  }

  /**
   * Allows or forbids loadExtension(); only a database opened with
   * `allowExtension: true` may allow it.
   */
  enableLoadExtension(allow) {
    if (this.#core.closing) throw notOpen();
    if (typeof allow !== 'boolean') throw argType('allow', 'a boolean');
    if (!this.#options.allowExtension) {
      throw nodeError(
        Error,
        'ERR_INVALID_STATE',
        'Cannot enable extension loading because it was disabled at database creation.',
      );
    }
    this.#extensionsAllowed = allow;
  }

  /**
   * Loads a SQLite extension (a shared library) on the writer, then on
   * every other connection before its next call; resolves once the writer
   * has loaded it. `entryPoint` names its init function when it is not the
   * default one.
   */
  loadExtension(path, entryPoint) {
    if (this.#core.closing) return Promise.reject(notOpen());
    if (!this.#extensionsAllowed) {
      return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', 'extension loading is not allowed'));
    }
    if (typeof path !== 'string') throw argType('path', 'a string');
    if (entryPoint !== undefined && typeof entryPoint !== 'string') throw argType('entryPoint', 'a string');
    const { id, promise } = track(null, null);
    send(id, () => native.loadExtension(this.#core.native, id, path, entryPoint));
    return promise.then(
      () => undefined,
      (err) => {
        throw err.code === 'ERR_SQLITE_ERROR' ? nodeError(Error, 'ERR_LOAD_SQLITE_EXTENSION', err.message) : err;
      },
    );
  }

  /**
   * `function(name[, options], fn)`: defines a SQL function on every
   * connection, as node:sqlite's. SQLite calls `fn` from its own threads;
   * each call runs on this thread (see docs/api.md for the cost).
   */
  function(name, options, fn) {
    if (this.#core.closing) throw notOpen();
    defineFunction(this.#core.native, arguments.length > 2 ? [name, options, fn] : [name, options].slice(0, arguments.length));
  }

  /** Defines an aggregate (a window function when `options.inverse` is given). */
  aggregate(name, options) {
    if (this.#core.closing) throw notOpen();
    defineAggregate(this.#core.native, name, options);
  }

  /**
   * A store of up to `maxSize` (default 1000) statements made from tagged
   * templates: ``store.get`SELECT * FROM t WHERE id = ${id}` ``. Values are
   * always bound as parameters, never spliced into the SQL.
   */
  createTagStore(maxSize) {
    if (this.#core.closing) throw notOpen();
    const core = this.#core;
    return new SQLTagStore(this, () => core.closing, maxSize);
  }

  /**
   * Starts a session recording the changes made through the writer to
   * `options.table` (every table by default) of schema `options.db`
   * ('main'). Changes made after this call are recorded.
   */
  createSession(options) {
    if (this.#core.closing) throw notOpen();
    return createSession(this.#core, options);
  }

  /**
   * Applies a changeset on the writer; resolves to true, or false when a
   * conflict aborted it. `options`: `filter(table)` and `onConflict(kind)`,
   * called on this thread while the writer waits.
   */
  applyChangeset(changeset, options) {
    return applyChangeset(this.#core, changeset, options);
  }

  /** Resolves to schema `dbName`'s ('main') whole database as a Uint8Array. */
  serialize(dbName) {
    return serialize(this.#core, dbName);
  }

  /** Replaces schema `options.dbName` ('main') with the image in `buffer`. */
  deserialize(buffer, options) {
    return deserialize(this.#core, buffer, options);
  }

  /** Creates a statement. Nothing is prepared until its first call. */
  prepare(sql, options) {
    if (this.#core.closing) throw notOpen();
    return prepare(this.#core, null, sql, options);
  }

  /**
   * Runs every statement in `sql` on the writer; resolves to undefined.
   * `options`: `{ signal, timeout }`, as `stmt.withOptions()`.
   */
  exec(sql, options) {
    if (this.#core.closing) return Promise.reject(notOpen());
    if (typeof sql !== 'string') throw argType('sql', 'a string');
    return observe(this.#core.exec(sql, null, readCallOptions(options)), () => sql, this);
  }

  /**
   * Runs statements as one message to the writer, in one transaction:
   * `[[stmtOrSql, params], ...]`. Resolves to each statement's result (its
   * rows when it returns columns, else `{ changes, lastInsertRowid }`); the
   * first failure rolls the batch back and rejects with `batchIndex` set.
   */
  batch(statements) {
    if (this.#core.closing) return Promise.reject(notOpen());
    return this.#core.batch(batchCalls(this.#core, null, statements), null, decodeBatch);
  }

  /**
   * Runs `fn(tx)` in a write transaction (`options.mode`: 'immediate' by
   * default, 'deferred' or 'exclusive'). Statements from `tx.prepare()` run
   * inside it; COMMIT when `fn` resolves, ROLLBACK when it rejects. Other
   * writes wait until it ends.
   */
  transaction(fn, options) {
    return runTransaction(this.#core, fn, options, this.#transactions);
  }

  /**
   * Begins a write transaction (`options.mode` as for `transaction()`) and
   * resolves to its handle once BEGIN has run on the writer. The caller ends
   * it with `tx.commit()` or `tx.rollback()`; until then other writes wait.
   */
  begin(options) {
    return beginTransaction(this.#core, options, this.#transactions);
  }

  /** Runs `fn(r)`, whose reads (from `r.prepare()`) all see one snapshot. */
  read(fn) {
    return runRead(this.#core, fn);
  }

  /**
   * Every connection's settings, read back now on its own thread:
   * `{ writer, readers: [...], checkpointer }` (the checkpointer is null
   * when it does not run).
   */
  settings() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.settings());
    if (this.#core.closing) return Promise.reject(notOpen());
    const { id, promise } = track(decodeSettings, null);
    send(id, () => this.#core.native.settings(id));
    return promise;
  }

  /**
   * Work done so far, per thread: jobs executed, jobs queued now, and how
   * long jobs waited in the queue; and the checkpointer's state.
   */
  stats() {
    if (this.#core.state === CLOSED) throw notOpen();
    return databaseStats(this.#core.native);
  }

  /** A follower's read-your-writes: resolves to `{ txid }` (lib/follow.js). */
  catchUp(options) {
    if (this.#core.state === OPENING) return this.ready.then(() => this.catchUp(options));
    return catchUp(this.#core, options);
  }

  /** A follower becomes its replica's writer: resolves to `{ txid }` (lib/promote.js). */
  promote() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.promote());
    return promote(this.#core);
  }

  /**
   * Ships every commit made before this call to the replica; resolves to
   * `{ txid }`, the replica's TXID, once they are all there. Rejects with
   * `ERR_OFFLOOP_REPLICA` when the replica cannot take them now.
   */
  syncReplica() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.syncReplica());
    if (this.#core.closing) return Promise.reject(notOpen());
    const core = this.#core;
    const fields = () => ({ method: 'syncReplica', database: databasePath(core) });
    return traceOperation('sync', fields, () => this.#replicaCall((id) => core.native.syncReplica(id)));
  }

  /**
   * Starts replicating an open database (options as `options.replica` of
   * `Database.open`); resolves to `{ txid }` once the replica's position is
   * known.
   */
  replicate(options) {
    if (this.#core.state === OPENING) return this.ready.then(() => this.replicate(options));
    if (this.#core.closing) return Promise.reject(notOpen());
    const replica = readReplicaOptions(options, 'options.');
    const why = whyNotReplicable(this.#options);
    if (why !== null) return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', `db.replicate() ${why}`));
    if (this.#core.native.replicaStats() != null) {
      return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', 'the database replicates already'));
    }
    return this.#stopping.then(() => {
      if (this.#core.closing) throw notOpen();
      if (this.#core.native.replicaStats() != null) {
        throw nodeError(Error, 'ERR_INVALID_STATE', 'the database replicates already');
      }
      this.#core.durable = replica.durable;
      return this.#replicaCall((id) => this.#core.native.replicate(id, replica));
    });
  }

  /** Ships what was committed, then stops replicating; resolves to `{ txid }`. */
  stopReplicating() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.stopReplicating());
    if (this.#core.closing) return Promise.reject(notOpen());
    this.#core.durable = false;
    const stopped = this.#replicaCall((id) => this.#core.native.stopReplicating(id));
    const ignore = () => {};
    this.#stopping = stopped.then(ignore, ignore);
    return stopped;
  }

  #replicaCall(start) {
    const { id, promise } = track(wrapTxid, null);
    send(id, () => start(id));
    return promise;
  }

  /**
   * Copies the database into `path` with SQLite's online backup, on a
   * thread of its own with its own connection: writes and reads go on
   * meanwhile. Resolves to the number of pages copied. `options`: `source`
   * and `target` schema names ('main'), `rate` pages per step (100) and
   * `progress({ totalPages, remainingPages })`, called between steps.
   */
  backup(path, options) {
    if (this.#core.closing) throw notOpen();
    const request = readBackup(path, options);
    if (this.#core.state === OPENING) return this.ready.then(() => this.backup(path, options));
    return startBackup(this.#core, request);
  }

  /**
   * Stops the checkpointer thread, as if it had failed: SQLite's automatic
   * checkpoint on the writer takes over (`wal_autocheckpoint` 1000) and
   * `stats().checkpoint.active` turns false.
   */
  stopCheckpointer() {
    if (this.#core.closing) return Promise.reject(notOpen());
    const { id, promise } = track(null, null);
    send(id, () => this.#core.native.stopCheckpointer(id));
    return promise.then(() => undefined);
  }

  /**
   * Runs a WAL checkpoint on the checkpointer thread (on the writer when the
   * checkpointer is off). Resolves to `{ logFrames, checkpointedFrames }`.
   */
  checkpoint(mode = 'PASSIVE') {
    if (this.#core.closing) return Promise.reject(notOpen());
    return this.#core.checkpoint(mode, readCheckpointMode(mode));
  }

  /**
   * Lets queued work finish, and open transactions and snapshots end (up to
   * `closeTimeout` ms, then rolls them back); after the file's earlier closes
   * (lib/file-closes.js), closes each connection on its thread, joins them.
   * Later calls reject (ERR_INVALID_STATE); calling it again returns the same promise.
   */
  close() {
    if (this.#core === UNOPENED) return Promise.reject(notOpen());
    if (this.#closed === null) {
      const core = this.#core;
      core.state = CLOSING;
      const ended = core.endScopes(core.options.closeTimeout);
      this.#closed = closeInTurn(absolutePath(this.#path), () => ended.then(() => this.#shutdown())).then(() => {
        core.state = CLOSED;
      });
    }
    return this.#closed;
  }

  [asyncDispose]() {
    if (this.#core === UNOPENED) return Promise.resolve();
    return this.close();
  }

  #shutdown() {
    stopFollowing(this.#core);
    stopWatching(this.#core);
    const { id, promise } = track(null, null);
    send(id, () => this.#core.native.close(id));
    return promise.then(() => undefined);
  }

  static {
    nativeOf = (db) => (db.#core.state === CLOSED ? null : db.#core.native);
  }
}

/** node:sqlite's module function: `sourceDb.backup(path, options)`. */
function backup(sourceDb, path, options) {
  if (!(sourceDb instanceof Database)) throw argType('sourceDb', 'an instance of Database');
  return sourceDb.backup(path, options);
}

module.exports = { Database, backup, nativeOf: (db) => nativeOf(db) };
