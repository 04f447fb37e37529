'use strict';

// SQLTagStore: `db.createTagStore(maxSize)`, as node:sqlite's. A tagged
// template's strings become the SQL text (joined by `?`) and its values
// are bound as that statement's parameters: values are never spliced into
// the SQL. The store keeps the last `maxSize` statements by SQL text, least
// recently used out first. It never runs SQL itself: each call is the
// statement's own (a Promise).

const { nodeError, notOpen } = require('./errors.js');

const DEFAULT_CAPACITY = 1000;

/** The `maxSize` argument, checked as node:sqlite checks it. */
function readCapacity(maxSize) {
  if (maxSize === undefined) return DEFAULT_CAPACITY;
  const what = 'The "maxSize" argument must be a positive integer.';
  if (typeof maxSize !== 'number') throw nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', what);
  if (!Number.isInteger(maxSize) || maxSize < 1) throw nodeError(RangeError, 'ERR_OUT_OF_RANGE', what);
  return maxSize;
}

class SQLTagStore {
  #db;
  #closing;
  #capacity;
  #statements = new Map();

  /** Made by `db.createTagStore()`; `closing()` says the database is closing. */
  constructor(db, closing, maxSize) {
    this.#db = db;
    this.#closing = closing;
    this.#capacity = readCapacity(maxSize);
  }

  /**
   * The statement for a template's strings, from the store or new. Values
   * are positional only: a leading object would otherwise be read as named
   * parameters, which node:sqlite's store never does.
   */
  #statement(strings, values) {
    const first = values[0];
    if (typeof first === 'object' && first !== null && !ArrayBuffer.isView(first) && !(first instanceof ArrayBuffer)) {
      throw nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'Provided value cannot be bound to SQLite parameter 1.');
    }
    if (this.#closing()) throw notOpen();
    if (!Array.isArray(strings)) {
      throw nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'First argument must be an array of strings (template literal).');
    }
    const sql = strings.join('?');
    let stmt = this.#statements.get(sql);
    if (stmt !== undefined) {
      // Most recently used last.
      this.#statements.delete(sql);
    } else {
      stmt = this.#db.prepare(sql);
      if (this.#statements.size >= this.#capacity) {
        this.#statements.delete(this.#statements.keys().next().value);
      }
    }
    this.#statements.set(sql, stmt);
    return stmt;
  }

  /** ``store.run`INSERT ... ${value}` `` → `{ changes, lastInsertRowid }`. */
  run(strings, ...values) {
    return this.#statement(strings, values).run(...values);
  }

  /** The first row, or undefined. */
  get(strings, ...values) {
    return this.#statement(strings, values).get(...values);
  }

  /** Every row. */
  all(strings, ...values) {
    return this.#statement(strings, values).all(...values);
  }

  /** An async iterator over the rows. */
  iterate(strings, ...values) {
    return this.#statement(strings, values).iterate(...values);
  }

  /** Forgets every statement. */
  clear() {
    this.#statements.clear();
  }

  /** Statements held now. */
  get size() {
    return this.#statements.size;
  }

  /** Statements held at most (`maxSize`). */
  get capacity() {
    return this.#capacity;
  }

  /** The database the statements belong to. */
  get db() {
    return this.#db;
  }
}

module.exports = { SQLTagStore };
