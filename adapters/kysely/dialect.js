'use strict';

// offloop/kysely: a Kysely dialect that runs on an offloop database. It
// owns the driver and the connection objects Kysely asks for, and the
// mapping of Kysely's begin / commit / savepoint calls onto an offloop
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

// Query kinds whose result counts rows changed, even when they return rows.
const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

function configError(message) {
  const err = new TypeError(message);
  err.code = 'ERR_INVALID_ARG_VALUE';
  return err;
}

function readConfig(config) {
  if (config === null || typeof config !== 'object') throw configError('OffloopDialect needs a config object: { database }');
  const { database, transactionMode = 'immediate' } = config;
  if (database === null || (typeof database !== 'object' && typeof database !== 'function')) {
    throw configError('OffloopDialect: config.database must be an offloop Database or a function that returns one');
  }
  if (!MODES.has(transactionMode)) {
    throw configError(`OffloopDialect: config.transactionMode must be 'deferred', 'immediate' or 'exclusive', not ${String(transactionMode)}`);
  }
  return { database, transactionMode };
}

function isZero(value) {
  return value === 0 || value === 0n;
}

function toBigInt(value) {
  return typeof value === 'bigint' ? value : BigInt(value);
}

/** Kysely's QueryResult from offloop's `query()` result. */
function toQueryResult(kind, { columns, rows, changes, lastInsertRowid }) {
  // A SELECT changed nothing and has no count; a write has one even when
  // it changed nothing or returned rows.
  const counted = WRITES.has(kind) || columns.length === 0 || !isZero(changes);
  return {
    rows,
    numAffectedRows: counted ? toBigInt(changes) : undefined,
    insertId: isZero(changes) ? undefined : toBigInt(lastInsertRowid),
  };
}

/**
 * One Kysely connection: no SQLite connection of its own, only the
 * transaction handle while Kysely runs a transaction on it.
 */
class OffloopConnection {
  #db;
  #tx = null;

  constructor(db) {
    this.#db = db;
  }

  #statement(sql, options) {
    const stmt = (this.#tx ?? this.#db).prepare(sql);
    return options?.signal === undefined ? stmt : stmt.withOptions({ signal: options.signal });
  }

  async executeQuery(compiledQuery, options) {
    const stmt = this.#statement(compiledQuery.sql, options);
    const result = await stmt.query(...bindable(compiledQuery.parameters));
    return toQueryResult(compiledQuery.query?.kind, result);
  }

  /** Rows from offloop's `iterate()`, `chunkSize` at a time. */
  async *streamQuery(compiledQuery, chunkSize, options) {
    const size = Number.isInteger(chunkSize) && chunkSize > 0 ? chunkSize : 1;
    const stmt = this.#statement(compiledQuery.sql, options);
    let rows = [];
    for await (const row of stmt.iterate(...bindable(compiledQuery.parameters))) {
      rows.push(row);
      if (rows.length === size) {
        yield { rows };
        rows = [];
      }
    }
    if (rows.length > 0) yield { rows };
  }

  async begin(mode) {
    if (this.#tx !== null) throw new Error('offloop/kysely: this connection is already in a transaction');
    this.#tx = await this.#db.begin({ mode });
  }

  async commit() {
    const tx = this.#transaction();
    this.#tx = null;
    await tx.commit();
  }

  // Kysely rolls back after any failure, a failed COMMIT included (which
  // offloop has rolled back already): with nothing open, there is nothing
  // to do.
  async rollback() {
    const tx = this.#tx;
    this.#tx = null;
    await tx?.rollback();
  }

  savepoint(name) {
    return this.#transaction().savepoint(name);
  }

  rollbackTo(name) {
    return this.#transaction().rollbackTo(name);
  }

  release(name) {
    return this.#transaction().release(name);
  }

  #transaction() {
    if (this.#tx === null) throw new Error('offloop/kysely: no transaction is open on this connection');
    return this.#tx;
  }
}

class OffloopDriver {
  #config;
  #db = null;

  constructor(config) {
    this.#config = config;
  }

  async init() {
    const { database } = this.#config;
    const db = typeof database === 'function' ? await database() : database;
    // `new Database()` returns before it is open; its calls would wait, but
    // an open error is clearer here.
    this.#db = db.ready === undefined ? db : await db.ready;
  }

  // Every acquire gets its own connection object: nothing to wait for.
  async acquireConnection() {
    return new OffloopConnection(this.#db);
  }

  // SQLite has one isolation level and offloop one kind of write
  // transaction, so Kysely's isolation and access settings are not used.
  async beginTransaction(connection) {
    await connection.begin(this.#config.transactionMode);
  }

  async commitTransaction(connection) {
    await connection.commit();
  }

  async rollbackTransaction(connection) {
    await connection.rollback();
  }

  async savepoint(connection, name) {
    await connection.savepoint(name);
  }

  async rollbackToSavepoint(connection, name) {
    await connection.rollbackTo(name);
  }

  async releaseSavepoint(connection, name) {
    await connection.release(name);
  }

  async releaseConnection() {}

  /** `kysely.destroy()` closes the database, as Kysely's SQLite dialect does. */
  async destroy() {
    await this.#db?.close();
  }
}

/** The dialect classes, built on the given Kysely module. */
function createKyselyDialect(kysely) {
  const { SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } = kysely;

  class OffloopAdapter extends SqliteAdapter {
    // Kysely 0.29 serialises every query of a dialect that says false here.
    get supportsMultipleConnections() {
      return true;
    }

    // SQLite's DDL is transactional: the migrator runs all pending
    // migrations in one transaction. That transaction holds offloop's
    // writer from BEGIN (IMMEDIATE by default) to COMMIT, which is the
    // migration lock: a second migrator, in this process or another, reads
    // the migration table after the first one committed. So the inherited
    // acquireMigrationLock / releaseMigrationLock do nothing.
    get supportsTransactionalDdl() {
      return true;
    }
  }

  class OffloopDialect {
    #config;

    /**
     * `config.database`: an offloop Database, or a function returning one
     * (or a promise of one), called on Kysely's first query.
     * `config.transactionMode`: BEGIN mode of Kysely's transactions,
     * 'immediate' (default), 'deferred' or 'exclusive'.
     */
    constructor(config) {
      this.#config = Object.freeze(readConfig(config));
    }

    createDriver() {
      return new OffloopDriver(this.#config);
    }

    createQueryCompiler() {
      return new SqliteQueryCompiler();
    }

    createAdapter() {
      return new OffloopAdapter();
    }

    createIntrospector(db) {
      return new SqliteIntrospector(db);
    }
  }

  return { OffloopDialect, OffloopAdapter, OffloopDriver };
}

module.exports = { createKyselyDialect };
