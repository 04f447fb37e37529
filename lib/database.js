'use strict';

// Database: the public handle on one open database.

const { native, track, untrack } = require('./calls.js');
const { Core, OPENING, OPEN, CLOSING, CLOSED, send } = require('./core.js');
const { argType, nodeError, notOpen } = require('./errors.js');
const {
  readCallOptions,
  readOptions,
  readPath,
  readReplicaOptions,
  readReplicaUrl,
  readRestoreOptions,
} = require('./options.js');
const { decodeBatch, decodeCheckpoint } = require('./rows.js');
const { decodeSettings, emitSettingWarnings } = require('./settings.js');
const { prepare, batchCalls } = require('./statement.js');
const { runRead, runTransaction } = require('./transaction.js');

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

const CHECKPOINT_MODES = { __proto__: null, PASSIVE: 0, FULL: 1, RESTART: 2, TRUNCATE: 3 };

// The replicator answers with the replica's TXID as text.
const decodeTxid = (text) => ({ txid: Number(text) });

class Database {
  #core;
  #closed = null;
  // A stopReplicating() still shipping: a new replicate() waits for it, as
  // both use the replicator's folder next to the database.
  #stopping = Promise.resolve();
  #transactions = { open: 0 };

  /**
   * Starts opening at once; `ready` settles when every connection is open.
   * Calls made before then wait in their queues.
   */
  constructor(location, options) {
    const path = readPath(location);
    const o = readOptions(arguments.length < 2 ? {} : options);
    const { id, promise } = track(null, null);
    let nativeDb;
    try {
      nativeDb = new native.NativeDatabase(
        path,
        {
          readers: o.readers,
          readOnly: o.readOnly,
          timeout: o.timeout,
          enableForeignKeyConstraints: o.enableForeignKeyConstraints,
          enableDoubleQuotedStringLiterals: o.enableDoubleQuotedStringLiterals,
          defensive: o.defensive,
          journalSizeLimit: o.journalSizeLimit,
          checkpoint: o.checkpoint.enabled,
          checkpointThresholdFrames: o.checkpoint.thresholdFrames,
          checkpointIdleMs: o.checkpoint.idleMs,
          checkpointBackstopFrames: o.checkpoint.backstopFrames,
          journalMode: o.journalMode,
          synchronous: o.synchronous,
          mmapSize: o.mmapSize,
          cacheSize: o.cacheSize,
          tempStore: o.tempStore,
          pragmas: o.pragmas,
          strictSettings: o.strictSettings,
          threadNice: o.threadNice,
          replica: o.replica,
        },
        id,
      );
    } catch (err) {
      untrack(id);
      throw err;
    }
    const core = new Core(nativeDb, o);
    this.#core = core;
    this.ready = promise
      .then(async (settings) => {
        // A replica that can never work (a bad URL, refused credentials, a
        // path that is a file) fails the open; one that is only down does
        // not, and shows in stats().replica.lastError.
        if (o.replica !== undefined) {
          await this.#replicaCall((id) => core.native.replicaReady(id));
          // A replica that is down, or one found ahead of the database, with
          // a gap, or someone else's (started again from a snapshot): worth
          // a warning, not a failed open.
          const notice = core.native.replicaStats()?.lastError;
          if (notice) process.emitWarning(notice, { code: 'OFFLOOP_REPLICA' });
        }
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

  /**
   * Restores the replica at `url` into the database file `path`, on a
   * thread of its own. `options`: `{ txid, timestamp, overwrite, ...s3 }`.
   * Resolves to `{ txid }`, the TXID restored. Refuses to replace an
   * existing file unless `overwrite: true`.
   */
  static restore(url, location, options) {
    try {
      const u = readReplicaUrl(url, 'url');
      const p = readPath(location);
      const o = readRestoreOptions(options);
      const { id, promise } = track(decodeTxid, null);
      send(id, () => native.restoreReplica(id, u, p, o));
      return promise;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The version of the bundled SQLite. */
  static get sqliteVersion() {
    return native.sqliteVersion();
  }

  /** What the bundled SQLite was compiled with (`PRAGMA compile_options`). */
  static compileOptions() {
    return native.compileOptions();
  }

  /** True once open and until `close()` is called. */
  get isOpen() {
    return this.#core.state === OPEN;
  }

  /** True while a `transaction()` callback runs. */
  get isTransaction() {
    return this.#transactions.open > 0;
  }

  /** The absolute path of the database file; null for in-memory databases. */
  location() {
    if (this.#core.state !== OPEN) throw notOpen();
    return this.#core.native.location();
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
    return this.#core.exec(sql, null, readCallOptions(options));
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

  /** Runs `fn(r)`, whose reads (from `r.prepare()`) all see one snapshot. */
  read(fn) {
    return runRead(this.#core, fn);
  }

  /**
   * Work done so far, per thread: jobs executed, jobs queued now, and how
   * long jobs waited in the queue; and the checkpointer's state.
   */
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

  stats() {
    if (this.#core.state === CLOSED) throw notOpen();
    const s = this.#core.native.stats();
    const r = this.#core.native.replicaStats();
    return {
      writer: s.writer,
      readers: s.readers,
      readerQueue: s.readerQueue,
      checkpoint: { ...s.checkpoint, error: s.checkpoint.error ?? null },
      replica:
        r === null || r === undefined
          ? null
          : {
              url: r.url,
              txid: r.txid,
              lagMs: r.lagMs,
              pendingFiles: r.pendingFiles,
              pendingBytes: r.pendingBytes,
              bytesShipped: r.bytesShipped,
              lastSyncAt: r.lastSyncAt ?? null,
              lastError: r.lastError ?? null,
            },
    };
  }

  /**
   * Ships every commit made before this call to the replica; resolves to
   * `{ txid }`, the replica's TXID, once they are all there. Rejects with
   * `ERR_OFFLOOP_REPLICA` when the replica cannot take them now.
   */
  syncReplica() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.syncReplica());
    if (this.#core.closing) return Promise.reject(notOpen());
    return this.#replicaCall((id) => this.#core.native.syncReplica(id));
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
    if (this.#core.native.replicaStats() != null) {
      return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', 'the database replicates already'));
    }
    return this.#stopping.then(() => {
      if (this.#core.closing) throw notOpen();
      if (this.#core.native.replicaStats() != null) {
        throw nodeError(Error, 'ERR_INVALID_STATE', 'the database replicates already');
      }
      return this.#replicaCall((id) => this.#core.native.replicate(id, replica));
    });
  }

  /** Ships what was committed, then stops replicating; resolves to `{ txid }`. */
  stopReplicating() {
    if (this.#core.state === OPENING) return this.ready.then(() => this.stopReplicating());
    if (this.#core.closing) return Promise.reject(notOpen());
    const stopped = this.#replicaCall((id) => this.#core.native.stopReplicating(id));
    this.#stopping = stopped.then(
      () => {},
      () => {},
    );
    return stopped;
  }

  #replicaCall(start) {
    const { id, promise } = track(decodeTxid, null);
    send(id, () => start(id));
    return promise;
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
    send(id, () => this.#core.native.checkpoint(id, code));
    return promise;
  }

  /**
   * Lets queued work finish, closes every connection on its own thread and
   * joins the threads. Calls made after it reject with ERR_INVALID_STATE.
   * Calling it again returns the same promise.
   */
  close() {
    if (this.#closed === null) {
      this.#core.state = CLOSING;
      this.#closed = this.#shutdown().then(() => {
        this.#core.state = CLOSED;
      });
    }
    return this.#closed;
  }

  [asyncDispose]() {
    return this.close();
  }

  #shutdown() {
    const { id, promise } = track(null, null);
    send(id, () => this.#core.native.close(id));
    return promise.then(() => undefined);
  }
}

module.exports = { Database };
