'use strict';

// offloop/kysely: a Kysely dialect that runs on an offloop database. It
// owns the driver (Kysely's own SqliteDriver, whose transaction and
// savepoint methods it keeps) and the connection objects Kysely asks for,
// and the mapping of Kysely's begin / commit / rollback onto an offloop
// transaction handle. It never holds a lock of its own: statements outside
// a transaction go straight to offloop, which sends reads to its reader
// threads and writes to its writer, so Kysely's queries run as concurrently
// as offloop allows. It never sends BEGIN or COMMIT as SQL through the
// shared queue (where other requests' statements would land inside the
// transaction): a Kysely transaction holds one `db.begin()` handle.
//
// The Kysely module is passed in (index.js and index.mjs each pass the one
// their caller loads), so a CommonJS and an ES module user each get
// classes from the Kysely build they use themselves.

const { bindable } = require('../values.js');

const MODES = new Set(['deferred', 'immediate', 'exclusive']);

function configError(message) {
  const err = new TypeError(message);
  err.code = 'ERR_INVALID_ARG_VALUE';
  return err;
}

function readConfig(config) {
  if (config === null || typeof config !== 'object') throw configError('OffloopDialect needs a config object: { database }');
  const { database, transactionMode = 'deferred' } = config;
  if (database === null || (typeof database !== 'object' && typeof database !== 'function')) {
    throw configError('OffloopDialect: config.database must be an offloop Database or a function that returns one');
  }
  if (!MODES.has(transactionMode)) {
    throw configError(`OffloopDialect: config.transactionMode must be 'deferred', 'immediate' or 'exclusive', not ${String(transactionMode)}`);
  }
  return { database, transactionMode };
}

/** `rows` with each BLOB as a Buffer over the same memory, as better-sqlite3 gives it. */
function withBuffers(rows) {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return rows;
}

// Writes Kysely built itself; without RETURNING they return no rows.
const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

/** Whether `node` is a write without RETURNING, which `run()` serves. */
function isPlainWrite(node) {
  return node !== undefined && WRITES.has(node.kind) && node.returning === undefined;
}

/**
 * Kysely's QueryResult for a write without RETURNING, from offloop's
 * `run()`, as Kysely's SqliteDialect makes it from better-sqlite3's:
 * `insertId` is the connection's last insert rowid even when the
 * statement inserted nothing (`INSERT OR IGNORE`, `DO NOTHING`).
 */
function runResult({ changes, lastInsertRowid }) {
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * Kysely's QueryResult from offloop's `query()` result: a statement that
 * returns columns gives its rows only, as SqliteDialect's; any other its
 * counts (`query()` reports 0 for both when it changed no row).
 */
function queryResult({ columns, rows, changes, lastInsertRowid }) {
  if (columns.length > 0) return { rows: withBuffers(rows) };
  return runResult({ changes, lastInsertRowid });
}

// Kysely's own drivers add the stack of the method that saw an error to
// the error's stack (its `extendStackTrace`); this does the same for an
// error whose stack does not reach this file. offloop takes a failed
// call's stack in its caller's continuation, which names every async
// function awaiting it, this one and Kysely's included; where that chain
// is broken (a stream's rows are fetched ahead of their reader), the
// frames from here to Kysely's caller are added.
function extendStack(err, here) {
  if (err === null || typeof err !== 'object' || typeof err.stack !== 'string' || typeof here.stack !== 'string') return err;
  if (!err.stack.includes(__filename)) err.stack += here.stack.slice(here.stack.indexOf('\n'));
  return err;
}

// Transaction control travels as queries through the connection's
// executeQuery (where Kysely's logger sees them, as it sees
// SqliteDialect's `begin` and `commit`), and is done on the connection's
// offloop transaction handle: what the query sent under `asControl` stands
// for.
const BEGIN = 'begin';
const COMMIT = 'commit';
const ROLLBACK = 'rollback';

/**
 * One Kysely connection: no SQLite connection of its own, only the
 * transaction handle while Kysely runs a transaction on it.
 */
class OffloopConnection {
  #db;
  #mode;
  #tx = null;
  // What the next query stands for, while `asControl` sends it.
  #sending = null;

  constructor(db, mode) {
    this.#db = db;
    this.#mode = mode;
  }

  #statement(sql, options) {
    const stmt = (this.#tx ?? this.#db).prepare(sql);
    return options?.signal === undefined ? stmt : stmt.withOptions({ signal: options.signal });
  }

  /**
   * Runs `send()`, whose one query on this connection is transaction
   * control (`control`) rather than SQL: the driver's own begin, commit
   * or rollback query, which Kysely logs as it is.
   */
  async asControl(control, send) {
    this.#sending = control;
    try {
      await send();
    } finally {
      this.#sending = null;
    }
  }

  async executeQuery(compiledQuery, options) {
    const control = this.#sending;
    this.#sending = null;
    try {
      if (control !== null) {
        await this.#control(control);
        return { rows: [] };
      }
      const stmt = this.#statement(compiledQuery.sql, options);
      const params = bindable(compiledQuery.parameters);
      if (isPlainWrite(compiledQuery.query)) return runResult(await stmt.run(...params));
      return queryResult(await stmt.query(...params));
    } catch (err) {
      throw extendStack(err, new Error());
    }
  }

  /** Rows from offloop's `iterate()`, `chunkSize` at a time. */
  async *streamQuery(compiledQuery, chunkSize, options) {
    const size = Number.isInteger(chunkSize) && chunkSize > 0 ? chunkSize : 1;
    const stmt = this.#statement(compiledQuery.sql, options);
    let rows = [];
    try {
      for await (const row of stmt.iterate(...bindable(compiledQuery.parameters))) {
        rows.push(row);
        if (rows.length === size) {
          yield { rows: withBuffers(rows) };
          rows = [];
        }
      }
    } catch (err) {
      throw extendStack(err, new Error());
    }
    if (rows.length > 0) yield { rows: withBuffers(rows) };
  }

  async #control(control) {
    if (control === BEGIN) {
      if (this.#tx !== null) throw new Error('offloop/kysely: this connection is already in a transaction');
      this.#tx = await this.#db.begin({ mode: this.#mode });
    } else if (control === COMMIT) {
      const tx = this.#transaction();
      this.#tx = null;
      await tx.commit();
    } else {
      // Kysely rolls back after any failure, a failed COMMIT included
      // (which offloop has rolled back already): with nothing open, there
      // is nothing to do.
      const tx = this.#tx;
      this.#tx = null;
      await tx?.rollback();
    }
  }

  #transaction() {
    if (this.#tx === null) throw new Error('offloop/kysely: no transaction is open on this connection');
    return this.#tx;
  }
}

/**
 * The driver, built on the given Kysely module's SqliteDriver: begin (in
 * the default deferred mode), commit, rollback and the savepoints are that
 * class's own methods, sending the SQL text SqliteDialect sends, so what
 * Kysely logs, and what a test that wraps SqliteDriver's methods sees, is
 * the same. Only the connections are offloop's.
 */
function createDriverClass(kysely) {
  return class OffloopDriver extends kysely.SqliteDriver {
    #config;
    #shared;
    #db = null;

    constructor(config, shared) {
      super(config);
      this.#config = config;
      this.#shared = shared;
    }

    async init() {
      const { database } = this.#config;
      const db = typeof database === 'function' ? await database() : database;
      // `new Database()` returns before it is open; its calls would wait, but
      // an open error is clearer here.
      this.#db = db.ready === undefined ? db : await db.ready;
      this.#shared.db = this.#db;
    }

    // Every acquire gets its own connection object: nothing to wait for.
    async acquireConnection() {
      return new OffloopConnection(this.#db, this.#config.transactionMode);
    }

    // SQLite has one isolation level and offloop one kind of write
    // transaction, so Kysely's isolation and access settings are not used.
    // Deferred, the default, is SqliteDriver's own `begin`; another mode
    // is logged as the BEGIN offloop runs (`begin immediate`).
    async beginTransaction(connection, settings) {
      const mode = this.#config.transactionMode;
      if (mode === 'deferred') {
        await connection.asControl(BEGIN, () => super.beginTransaction(connection, settings));
      } else {
        await connection.asControl(BEGIN, () => connection.executeQuery(kysely.CompiledQuery.raw(`begin ${mode}`)));
      }
    }

    async commitTransaction(connection) {
      await connection.asControl(COMMIT, () => super.commitTransaction(connection));
    }

    async rollbackTransaction(connection) {
      await connection.asControl(ROLLBACK, () => super.rollbackTransaction(connection));
    }

    async releaseConnection() {}

    /** `kysely.destroy()` closes the database, as Kysely's SQLite dialect does. */
    async destroy() {
      await this.#db?.close();
    }
  };
}

// The migration lock of each offloop Database: the end of the last run
// that asked for it. Kysely's SqliteDialect needs none (its one connection
// serialises every migrator); offloop's connections run side by side.
const migrationLocks = new WeakMap();

/** The dialect classes, built on the given Kysely module. */
function createKyselyDialect(kysely) {
  const { SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } = kysely;
  const OffloopDriver = createDriverClass(kysely);

  class OffloopAdapter extends SqliteAdapter {
    #shared;
    // The release of each migrator's run, by the Kysely instance it got.
    #held = new WeakMap();

    constructor(shared) {
      super();
      this.#shared = shared;
    }

    // Kysely 0.29 serialises every query of a dialect that says false here.
    get supportsMultipleConnections() {
      return true;
    }

    // As SqliteAdapter: migrations run outside a transaction, so one can
    // turn `PRAGMA foreign_keys` off, and a migrator given a transaction
    // refuses it (supportsTransactionalDdl stays SqliteAdapter's false).
    // Two migrators of one process wait for each other on this lock;
    // migrators in two processes do not (neither do SqliteDialect's).
    async acquireMigrationLock(db) {
      const database = this.#shared.db;
      const previous = migrationLocks.get(database) ?? Promise.resolve();
      let release;
      const held = new Promise((resolve) => {
        release = resolve;
      });
      migrationLocks.set(database, previous.then(() => held));
      this.#held.set(db, release);
      await previous;
    }

    async releaseMigrationLock(db) {
      const release = this.#held.get(db);
      this.#held.delete(db);
      release?.();
    }
  }

  class OffloopDialect {
    #config;

    /**
     * `config.database`: an offloop Database, or a function returning one
     * (or a promise of one), called on Kysely's first query.
     * `config.transactionMode`: BEGIN mode of Kysely's transactions,
     * 'deferred' (default, SqliteDialect's `begin`), 'immediate' or
     * 'exclusive'.
     */
    // The database the driver opened, for the adapter's migration lock.
    #shared = { db: null };

    constructor(config) {
      this.#config = Object.freeze(readConfig(config));
    }

    createDriver() {
      return new OffloopDriver(this.#config, this.#shared);
    }

    createQueryCompiler() {
      return new SqliteQueryCompiler();
    }

    createAdapter() {
      return new OffloopAdapter(this.#shared);
    }

    createIntrospector(db) {
      return new SqliteIntrospector(db);
    }
  }

  return { OffloopDialect, OffloopAdapter, OffloopDriver };
}

module.exports = { createKyselyDialect };
