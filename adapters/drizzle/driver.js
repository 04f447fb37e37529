'use strict';

// offloop/drizzle: Drizzle ORM's asynchronous SQLite session on an offloop
// database (the shape of Drizzle's libsql driver: a session, its prepared
// queries, a transaction with nested savepoints). It owns the mapping of
// Drizzle's run / all / get / values onto offloop statements, and of
// `db.transaction()` onto an offloop transaction handle. It never sends
// BEGIN or COMMIT as SQL through the shared queue, where other requests'
// statements would land inside the transaction, and it never serialises
// queries: reads outside a transaction run on offloop's readers.
//
// The Drizzle modules are passed in (index.js and index.mjs each pass the
// build their caller loads).

const { bindable } = require('../values.js');

const MODES = new Set(['deferred', 'immediate', 'exclusive']);

/** A BLOB as a Buffer over the same memory, as Drizzle's Node drivers give it. */
function toBuffer(value) {
  return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}

/** `rows` (objects or arrays of values) with each BLOB as a Buffer. */
function withBuffers(rows) {
  for (const row of rows) {
    for (const key in row) row[key] = toBuffer(row[key]);
  }
  return rows;
}

/** The driver's classes and `drizzle()`, built on the given Drizzle modules. */
function createDrizzle({ orm, sqlite }) {
  const {
    entityKind,
    DefaultLogger,
    DrizzleQueryError,
    NoopLogger,
    createTableRelationsHelpers,
    extractTablesRelationalConfig,
    fillPlaceholders,
    mapResultRow,
    sql,
  } = orm;
  const { BaseSQLiteDatabase, SQLiteAsyncDialect, SQLitePreparedQuery, SQLiteSession, SQLiteTransaction } = sqlite;

  class OffloopPreparedQuery extends SQLitePreparedQuery {
    static [entityKind] = 'OffloopPreparedQuery';

    /** `client`: the offloop Database, or the Transaction handle inside one. */
    constructor(client, query, logger, cache, queryMetadata, cacheConfig, fields, executeMethod, isResponseInArrayMode, customResultMapper) {
      super('async', executeMethod, query, cache, queryMetadata, cacheConfig);
      this.client = client;
      this.logger = logger;
      this.fields = fields;
      this.customResultMapper = customResultMapper;
      this._isResponseInArrayMode = isResponseInArrayMode;
    }

    /** Whether Drizzle maps the rows itself, from arrays of values. */
    get mapsRows() {
      return this.fields !== undefined || this.customResultMapper !== undefined;
    }

    /** The offloop statement, and the parameters for it. */
    statement(placeholderValues, returnArrays) {
      const params = fillPlaceholders(this.query.params, placeholderValues ?? {});
      this.logger.logQuery(this.query.sql, params);
      const stmt = this.client.prepare(this.query.sql, returnArrays ? { returnArrays: true } : undefined);
      return { stmt, params };
    }

    run(placeholderValues) {
      const { stmt, params } = this.statement(placeholderValues, false);
      return this.queryWithCache(this.query.sql, params, () => stmt.run(...bindable(params)));
    }

    async all(placeholderValues) {
      const arrays = this.mapsRows;
      const { stmt, params } = this.statement(placeholderValues, arrays);
      const rows = withBuffers(await this.queryWithCache(this.query.sql, params, () => stmt.all(...bindable(params))));
      return arrays ? this.mapAllResult(rows) : rows;
    }

    async get(placeholderValues) {
      const arrays = this.mapsRows;
      const { stmt, params } = this.statement(placeholderValues, arrays);
      const row = await this.queryWithCache(this.query.sql, params, () => stmt.get(...bindable(params)));
      if (row !== undefined) withBuffers([row]);
      return arrays ? this.mapGetResult(row === undefined ? [] : [row]) : row;
    }

    async values(placeholderValues) {
      const { stmt, params } = this.statement(placeholderValues, true);
      return withBuffers(await this.queryWithCache(this.query.sql, params, () => stmt.all(...bindable(params))));
    }

    mapAllResult(rows) {
      if (this.customResultMapper !== undefined) return this.customResultMapper(rows);
      if (this.fields === undefined) return rows;
      return rows.map((row) => mapResultRow(this.fields, row, this.joinsNotNullableMap));
    }

    mapGetResult(rows) {
      if (this.customResultMapper !== undefined) return this.customResultMapper(rows);
      const row = rows[0];
      if (this.fields === undefined || row === undefined) return row;
      return mapResultRow(this.fields, row, this.joinsNotNullableMap);
    }

    /** @internal */
    isResponseInArrayMode() {
      return this._isResponseInArrayMode;
    }
  }

  class OffloopSession extends SQLiteSession {
    static [entityKind] = 'OffloopSession';

    constructor(client, dialect, schema, options) {
      super(dialect);
      this.client = client;
      this.schema = schema;
      this.options = options;
      this.logger = options.logger ?? new NoopLogger();
      this.cache = options.cache;
    }

    prepareQuery(query, fields, executeMethod, isResponseInArrayMode, customResultMapper, queryMetadata, cacheConfig) {
      return new OffloopPreparedQuery(
        this.client,
        query,
        this.logger,
        this.cache,
        queryMetadata,
        cacheConfig,
        fields,
        executeMethod,
        isResponseInArrayMode,
        customResultMapper,
      );
    }

    /**
     * Transaction control: offloop's transaction handle does `run`, and
     * Drizzle's logger sees `text`, as it sees what Drizzle's SQL-driven
     * SQLite drivers send; a failure is Drizzle's DrizzleQueryError, as
     * any query's.
     */
    async control(text, run) {
      this.logger.logQuery(text, []);
      try {
        return await run();
      } catch (err) {
        throw new DrizzleQueryError(text, [], err);
      }
    }

    /**
     * One offloop transaction handle for `fn`: committed when it resolves,
     * rolled back when it rejects (Drizzle's `tx.rollback()` throws).
     * `config.behavior` is the BEGIN mode.
     */
    async transaction(fn, config) {
      const mode = config?.behavior ?? this.options.transactionMode;
      const handle = await this.control(`begin ${mode}`, () => this.client.begin({ mode }));
      const session = new OffloopSession(handle, this.dialect, this.schema, this.options);
      let result;
      try {
        result = await fn(new OffloopTransaction('async', this.dialect, session, this.schema));
      } catch (err) {
        await this.control('rollback', () => handle.rollback()).catch(() => {});
        throw err;
      }
      await this.control('commit', () => handle.commit());
      return result;
    }

    /**
     * Drizzle's `db.batch([...])` as one offloop batch: one message to the
     * writer, all statements in one transaction.
     */
    async batch(queries) {
      const prepared = queries.map((q) => q._prepare());
      const entries = prepared.map((p) => {
        const { sql: text, params } = p.getQuery();
        p.logger.logQuery(text, params);
        const arrays = p.mapsRows || p.executeMethod === 'values';
        return [this.client.prepare(text, arrays ? { returnArrays: true } : undefined), bindable(params)];
      });
      const results = await this.client.batch(entries);
      return results.map((result, i) => {
        const p = prepared[i];
        // A statement's rows come as an array; a run as `{ changes, lastInsertRowid }`.
        if (Array.isArray(result)) withBuffers(result);
        switch (p.executeMethod) {
          case 'all':
            return p.mapAllResult(result);
          case 'get':
            return p.mapGetResult(result);
          default:
            return result;
        }
      });
    }
  }

  class OffloopTransaction extends SQLiteTransaction {
    static [entityKind] = 'OffloopTransaction';

    /**
     * A nested transaction: a savepoint, run as SQL in the transaction
     * (so Drizzle's logger sees it, as with its libsql driver); rolled
     * back to and released when `fn` throws.
     */
    async transaction(fn) {
      const name = `sp${this.nestedIndex}`;
      const tx = new OffloopTransaction('async', this.dialect, this.session, this.schema, this.nestedIndex + 1);
      await this.session.run(sql.raw(`savepoint ${name}`));
      let result;
      try {
        result = await fn(tx);
      } catch (err) {
        await this.session.run(sql.raw(`rollback to savepoint ${name}`));
        await this.session.run(sql.raw(`release savepoint ${name}`));
        throw err;
      }
      await this.session.run(sql.raw(`release savepoint ${name}`));
      return result;
    }
  }

  class OffloopDatabase extends BaseSQLiteDatabase {
    static [entityKind] = 'OffloopDatabase';

    /** Several queries in one message and one transaction; each result as Drizzle maps it. */
    batch(queries) {
      return this.session.batch(queries);
    }
  }

  /**
   * `drizzle(db, { schema, logger, casing, cache, transactionMode })` on an
   * open (or opening) offloop Database.
   */
  function drizzle(client, config = {}) {
    if (client === null || typeof client !== 'object' || typeof client.begin !== 'function') {
      const err = new TypeError('drizzle() from offloop/drizzle takes an offloop Database');
      err.code = 'ERR_INVALID_ARG_TYPE';
      throw err;
    }
    const transactionMode = config.transactionMode ?? 'immediate';
    if (!MODES.has(transactionMode)) {
      const err = new TypeError(`drizzle(): transactionMode must be 'deferred', 'immediate' or 'exclusive', not ${String(transactionMode)}`);
      err.code = 'ERR_INVALID_ARG_VALUE';
      throw err;
    }
    const dialect = new SQLiteAsyncDialect({ casing: config.casing });
    let logger;
    if (config.logger === true) logger = new DefaultLogger();
    else if (config.logger !== false) logger = config.logger;
    let schema;
    if (config.schema) {
      const tables = extractTablesRelationalConfig(config.schema, createTableRelationsHelpers);
      schema = { fullSchema: config.schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap };
    }
    const session = new OffloopSession(client, dialect, schema, { logger, cache: config.cache, transactionMode });
    const db = new OffloopDatabase('async', dialect, session, schema);
    db.$client = client;
    db.$cache = config.cache;
    if (db.$cache) db.$cache.invalidate = config.cache.onMutate;
    return db;
  }

  return { drizzle, OffloopDatabase, OffloopSession, OffloopTransaction, OffloopPreparedQuery };
}

module.exports = { createDrizzle };
