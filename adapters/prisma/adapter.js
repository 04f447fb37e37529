'use strict';

// offloop/prisma: a Prisma 7 driver adapter on an offloop database. It owns
// the translation between Prisma's queries (SQL, arguments with their
// scalar types) and offloop statements, between offloop's rows and Prisma's
// result sets (column names, column types, rows of values), and between
// offloop's SQLite errors and Prisma's mapped errors. An interactive
// transaction is one offloop transaction handle (`db.begin()`), committed
// or rolled back by the handle, never by COMMIT sent through the shared
// queue. It never closes the database, which belongs to its caller.
//
// The driver-adapter-utils module is passed in (index.js and index.mjs
// each pass the build their caller loads).

const { bindable } = require('../values.js');

const ADAPTER_NAME = 'offloop';

/** A DATETIME argument or value as the ISO text Prisma reads back. */
function isoDateTime(date) {
  return date.toISOString().replace('Z', '+00:00');
}

function createPrismaAdapter({ ColumnTypeEnum: T, DriverAdapterError }) {
  // Declared column types (upper case) to Prisma's column types, after
  // SQLite's type affinity names and the types Prisma's schema engine
  // declares.
  const DECLARED = new Map([
    ...['INT', 'INTEGER', 'TINYINT', 'SMALLINT', 'MEDIUMINT', 'INT2', 'SERIAL'].map((t) => [t, T.Int32]),
    ...['BIGINT', 'INT8', 'UNSIGNED BIG INT'].map((t) => [t, T.Int64]),
    ...['REAL', 'DOUBLE', 'DOUBLE PRECISION', 'NUMERIC'].map((t) => [t, T.Double]),
    ['FLOAT', T.Float],
    ['DECIMAL', T.Numeric],
    ['BOOLEAN', T.Boolean],
    ...['TEXT', 'CLOB', 'CHARACTER', 'VARCHAR', 'VARYING CHARACTER', 'NCHAR', 'NATIVE CHARACTER', 'NVARCHAR'].map((t) => [t, T.Text]),
    ['BLOB', T.Bytes],
    ...['DATETIME', 'TIMESTAMP'].map((t) => [t, T.DateTime]),
    ['DATE', T.Date],
    ['TIME', T.Time],
    ['JSONB', T.Json],
  ]);

  /** A column without a declared type (an expression): by its first non-null value. */
  function typeOfValues(rows, index) {
    for (const row of rows) {
      const value = row[index];
      if (value === null) continue;
      if (typeof value === 'string') return T.Text;
      if (typeof value === 'bigint') return T.Int64;
      if (typeof value === 'number') return T.UnknownNumber;
      return T.Bytes;
    }
    // All NULL: any type reads NULL; Prisma's own SQLite adapters say Int32.
    return T.Int32;
  }

  function columnTypes(columns, rows) {
    return columns.map((c, i) => (c.type === null ? undefined : DECLARED.get(c.type.toUpperCase())) ?? typeOfValues(rows, i));
  }

  /** A value as Prisma expects it for its column type. */
  function resultValue(value, type) {
    if (typeof value === 'bigint') {
      if (type === T.DateTime) return isoDateTime(new Date(Number(value)));
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    }
    if (typeof value === 'number') {
      if (type === T.DateTime) return isoDateTime(new Date(value));
      if ((type === T.Int32 || type === T.Int64) && !Number.isInteger(value)) return Math.trunc(value);
    }
    return value;
  }

  /** An argument as offloop binds it, by its Prisma scalar type. */
  function argument(value, argType) {
    if (value === null || value === undefined) return null;
    const scalar = argType?.scalarType;
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value instanceof Date) return isoDateTime(value);
    if (typeof value === 'string') {
      switch (scalar) {
        case 'int':
        case 'bigint':
          return BigInt(value);
        case 'float':
        case 'decimal':
          return Number.parseFloat(value);
        case 'datetime':
          return isoDateTime(new Date(value));
        case 'bytes':
          return Buffer.from(value, 'base64');
        default:
          return value;
      }
    }
    return value;
  }

  function statementArgs(query) {
    return bindable(query.args.map((value, i) => argument(value, query.argTypes?.[i])));
  }

  /** The columns named in `UNIQUE constraint failed: t.a, t.b`. */
  function failedColumns(message) {
    return message.split('constraint failed: ')[1]?.split(', ');
  }

  /** The fields of those columns. */
  function failedFields(columns) {
    return columns?.map((c) => c.slice(c.lastIndexOf('.') + 1));
  }

  /**
   * Prisma's mapped error for an offloop SQLite error, as Prisma's own
   * SQLite adapters (better-sqlite3, libsql) map theirs.
   */
  function mapped(err) {
    const { sqliteCode, message } = err;
    switch (sqliteCode) {
      case 'SQLITE_CONSTRAINT_UNIQUE':
      case 'SQLITE_CONSTRAINT_PRIMARYKEY': {
        const columns = failedColumns(message);
        const fields = failedFields(columns);
        const first = columns?.[0];
        const table = first === undefined ? undefined : first.slice(0, Math.max(first.lastIndexOf('.'), 0)) || undefined;
        return { kind: 'UniqueConstraintViolation', constraint: fields && { fields }, table };
      }
      case 'SQLITE_CONSTRAINT_NOTNULL': {
        const fields = failedFields(failedColumns(message));
        return { kind: 'NullConstraintViolation', constraint: fields && { fields } };
      }
      case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      case 'SQLITE_CONSTRAINT_TRIGGER':
        return { kind: 'ForeignKeyConstraintViolation', constraint: { foreignKey: {} } };
      default:
        break;
    }
    // SQLITE_BUSY and its extended codes: another process held the lock
    // for longer than `timeout`.
    if ((err.errcode & 0xff) === 5) return { kind: 'SocketTimeout' };
    if (message.startsWith('no such table: ')) return { kind: 'TableDoesNotExist', table: message.slice('no such table: '.length) };
    if (message.startsWith('no such column: ')) return { kind: 'ColumnNotFound', column: message.slice('no such column: '.length) };
    const named = message.indexOf('has no column named ');
    if (named >= 0) return { kind: 'ColumnNotFound', column: message.slice(named + 'has no column named '.length) };
    return { kind: 'sqlite', extendedCode: err.errcode, message };
  }

  /** Runs `fn`; a SQLite error becomes Prisma's DriverAdapterError, anything else passes. */
  async function translated(fn) {
    try {
      return await fn();
    } catch (err) {
      if (err?.code !== 'ERR_SQLITE_ERROR') throw err;
      throw new DriverAdapterError({ ...mapped(err), originalCode: err.sqliteCode, originalMessage: err.message });
    }
  }

  /** Queries on a Database, or on a Transaction handle inside one. */
  class OffloopQueryable {
    provider = 'sqlite';
    adapterName = ADAPTER_NAME;

    constructor(client) {
      this.client = client;
    }

    queryRaw(query) {
      return translated(async () => {
        const stmt = this.client.prepare(query.sql, { returnArrays: true, readBigInts: true });
        const { columns, rows, changes, lastInsertRowid } = await stmt.query(...statementArgs(query));
        const types = columnTypes(columns, rows);
        const result = {
          columnNames: columns.map((c) => c.name),
          columnTypes: types,
          rows: rows.map((row) => row.map((value, i) => resultValue(value, types[i]))),
        };
        if (changes !== 0n) result.lastInsertId = String(lastInsertRowid);
        return result;
      });
    }

    executeRaw(query) {
      return translated(async () => {
        const { changes } = await this.client.prepare(query.sql).query(...statementArgs(query));
        return changes;
      });
    }
  }

  class OffloopTransaction extends OffloopQueryable {
    // Prisma sends no COMMIT or ROLLBACK of its own: commit() and
    // rollback() end the offloop handle.
    options = { usePhantomQuery: true };

    commit() {
      return translated(() => this.client.commit());
    }

    rollback() {
      return translated(() => this.client.rollback());
    }

    createSavepoint(name) {
      return translated(() => this.client.savepoint(name));
    }

    rollbackToSavepoint(name) {
      return translated(() => this.client.rollbackTo(name));
    }

    releaseSavepoint(name) {
      return translated(() => this.client.release(name));
    }
  }

  class OffloopAdapter extends OffloopQueryable {
    #mode;

    constructor(db, mode) {
      super(db);
      this.#mode = mode;
    }

    executeScript(script) {
      return translated(() => this.client.exec(script));
    }

    // SQLite transactions are serializable; no other level can be had.
    async startTransaction(isolationLevel) {
      if (isolationLevel !== undefined && isolationLevel !== 'SERIALIZABLE') {
        throw new DriverAdapterError({ kind: 'InvalidIsolationLevel', level: isolationLevel });
      }
      const tx = await translated(() => this.client.begin({ mode: this.#mode }));
      return new OffloopTransaction(tx);
    }

    /** The database belongs to the caller, who closes it. */
    async dispose() {}
  }

  /**
   * `new PrismaClient({ adapter: new PrismaOffloop(db) })`: Prisma's
   * adapter factory for an offloop Database. `options.transactionMode` is
   * the BEGIN mode of interactive and batch transactions ('immediate' by
   * default).
   */
  class PrismaOffloop {
    provider = 'sqlite';
    adapterName = ADAPTER_NAME;
    #db;
    #mode;

    constructor(db, options = {}) {
      if (db === null || typeof db !== 'object' || typeof db.begin !== 'function') {
        const err = new TypeError('PrismaOffloop takes an offloop Database');
        err.code = 'ERR_INVALID_ARG_TYPE';
        throw err;
      }
      this.#db = db;
      this.#mode = options.transactionMode ?? 'immediate';
    }

    async connect() {
      return new OffloopAdapter(this.#db, this.#mode);
    }
  }

  return { PrismaOffloop };
}

module.exports = { createPrismaAdapter };
