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

/** The driver's classes and `drizzle()`, built on the given Drizzle modules. */
function createDrizzle({ orm, sqlite }) {
  const { entityKind, DefaultLogger, NoopLogger, createTableRelationsHelpers, extractTablesRelationalConfig, fillPlaceholders, mapResultRow } = orm;
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
      const rows = await this.queryWithCache(this.query.sql, params, () => stmt.all(...bindable(params)));
      return arrays ? this.mapAllResult(rows) : rows;
    }

    async get(placeholderValues) {
      const arrays = this.mapsRows;
      const { stmt, params } = this.statement(placeholderValues, arrays);
      const row = await this.queryWithCache(this.query.sql, params, () => stmt.get(...bindable(params)));
      return arrays ? this.mapGetResult(row === undefined ? [] : [row]) : row;
    }

    values(placeholderValues) {
      const { stmt, params } = this.statement(placeholderValues, true);
      return this.queryWithCache(this.query.sql, params, () => stmt.all(...bindable(params)));
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
     * One offloop transaction handle for `fn`: committed when it resolves,
     * rolled back when it rejects (Drizzle's `tx.rollback()` throws).
     * `config.behavior` is the BEGIN mode.
     */
    transaction(fn, config) {
      const mode = config?.behavior ?? this.options.transactionMode;
      return this.client.transaction(
        (handle) => {
          const session = new OffloopSession(handle, this.dialect, this.schema, this.options);
          return fn(new OffloopTransaction('async', this.dialect, session, this.schema));
        },
        { mode },
      );
    }

    /**
     * Drizzle's `db.batch([...])` as one offloop batch: one message to the
     * writer, all statements in one transaction.
     */
    async batch(queries) {
      const prepared = queries.map((q) => q._prepare());
      const entries = prepared.map((p) => {
        const { sql, params } = p.getQuery();
        p.logger.logQuery(sql, params);
        const arrays = p.mapsRows || p.executeMethod === 'values';
        return [this.client.prepare(sql, arrays ? { returnArrays: true } : undefined), bindable(params)];
      });
      const results = await this.client.batch(entries);
      return results.map((result, i) => {
        const p = prepared[i];
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

    /** A nested transaction: a savepoint on the same offloop handle. */
    async transaction(fn) {
      const name = `sp${this.nestedIndex}`;
      const handle = this.session.client;
      const tx = new OffloopTransaction('async', this.dialect, this.session, this.schema, this.nestedIndex + 1);
      await handle.savepoint(name);
      let result;
      try {
        result = await fn(tx);
      } catch (err) {
        await handle.rollbackTo(name);
        await handle.release(name);
        throw err;
      }
      await handle.release(name);
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
