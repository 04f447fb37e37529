'use strict';

// Statement: a SQL text and its options. It holds no SQLite object; each
// call is queued to whichever thread runs it, which prepares (or finds in
// its cache) its own statement.

const { argType } = require('./errors.js');
const { RowIterator } = require('./iterator.js');
const { readCallOptions, readStatementOptions } = require('./options.js');
const { decodeAll, decodeColumns, decodeGet, decodeQuery } = require('./rows.js');
const { finalized } = require('./core.js');
const { native } = require('./calls.js');
const { call: CALL } = require('./protocol.js');
const { observe, published } = require('./diagnostics.js');
const { queryObserved, traceQuery } = require('./tracing.js');

function checkBoolean(value, name) {
  if (typeof value !== 'boolean') throw argType(name, 'a boolean');
}

let internals;

class Statement {
  #core;
  #scope;
  #handle;
  #sql;
  #options;
  #control;
  // Shared with the copies withOptions() makes: they are one statement.
  // `params`: the arguments of the last call, which expandedSQL binds;
  // `closed`: close() was called; `source`: sourceSQL, found once.
  #state;

  constructor(core, scope, handle, sql, options, control, state) {
    this.#core = core;
    this.#scope = scope;
    this.#handle = handle;
    this.#sql = sql;
    this.#options = { ...options };
    this.#control = control;
    this.#state = state ?? { params: [], closed: false, source: null };
  }

  static {
    // For batches: the handle and options of a statement, without making
    // them public.
    internals = (stmt) => ({ core: stmt.#core, handle: stmt.#handle, options: stmt.#options });
  }

  /**
   * The statement's own SQL: the text given to prepare() up to the end of
   * its first statement, which is the one that runs (as node:sqlite).
   */
  get sourceSQL() {
    this.#checkOpen();
    if (this.#state.source === null) this.#state.source = native.firstStatement(this.#sql);
    return this.#state.source;
  }

  /**
   * A promise of the SQL with the values of the last call bound in place of
   * its parameters (`NULL` before any call), as SQLite expands them.
   */
  get expandedSQL() {
    if (this.#gone()) return Promise.reject(finalized());
    return this.#core.call(CALL.EXPAND, this.#handle, this.#state.params, this.#options, null, null, this.#scope, undefined);
  }

  /**
   * Finalizes the statement: every later call rejects, and every accessor
   * throws, with ERR_INVALID_STATE. Closing it twice throws, as in
   * node:sqlite. Calls already made finish.
   */
  close() {
    this.#checkOpen();
    this.#state.closed = true;
  }

  [Symbol.dispose]() {
    if (!this.#gone()) this.close();
  }

  #gone() {
    return this.#state.closed || (this.#core.closing && !this.#core.scopeOpen(this.#scope));
  }

  // After close(), or once the database closed, node:sqlite's statements
  // are finalized.
  #checkOpen() {
    if (this.#gone()) throw finalized();
  }

  /**
   * The same statement with `{ signal, timeout }` applied to its calls: an
   * aborted or timed-out call rejects at once; queued, it never runs;
   * running, it is interrupted. `timeout` (ms, 0 for none) overrides the
   * database's `queryTimeout`.
   */
  withOptions(options) {
    const control = readCallOptions(options) ?? {};
    const merged = { signal: control.signal ?? this.#control?.signal, timeout: control.timeout ?? this.#control?.timeout };
    return new Statement(this.#core, this.#scope, this.#handle, this.#sql, this.#options, merged, this.#state);
  }

  #call(kind, method, params, decode, context) {
    if (this.#state.closed) return Promise.reject(finalized());
    this.#state.params = params;
    // Unobserved, a call makes no closure of its own.
    if (!queryObserved() && !published()) {
      return this.#core.call(kind, this.#handle, params, this.#options, decode, context, this.#scope, this.#control);
    }
    const source = () => (this.#state.source ??= native.firstStatement(this.#sql));
    const call = queryObserved()
      ? traceQuery(method, source(), params, this.#core, this, this.#scope, (timing) =>
          this.#core.call(kind, this.#handle, params, this.#options, decode, context, this.#scope, this.#control, timing),
        )
      : this.#core.call(kind, this.#handle, params, this.#options, decode, context, this.#scope, this.#control);
    return observe(call, source, this.#core.database);
  }

  /** Runs the statement; resolves to `{ changes, lastInsertRowid }`. */
  run(...params) {
    // The addon reports a run as its own record (lib/calls.js decodes it).
    return this.#call(CALL.RUN, 'run', params, null, null);
  }

  /** Resolves to the first row, or undefined when there is none. */
  get(...params) {
    return this.#call(CALL.GET, 'get', params, decodeGet, this.#options.returnArrays);
  }

  /** Resolves to an array of every row. */
  all(...params) {
    return this.#call(CALL.ALL, 'all', params, decodeAll, this.#options.returnArrays);
  }

  /**
   * An async iterator over the rows, fetched in chunks from the thread that
   * runs the query.
   */
  iterate(...params) {
    const options = { ...this.#options };
    const first = this.#call(CALL.ITERATE, 'iterate', params, null, null);
    return new RowIterator(this.#core, this.#scope, first, options, this.#control?.signal);
  }

  /**
   * Runs a statement of any kind and resolves to everything it produced, in
   * one round trip: `{ columns, rows, changes, lastInsertRowid }`. For SQL
   * whose kind the caller does not know (query builders' raw SQL).
   */
  query(...params) {
    return this.#call(CALL.QUERY, 'query', params, decodeQuery, this.#options.returnArrays);
  }

  /** Resolves to the result columns' metadata, as node:sqlite's columns(). */
  columns() {
    if (this.#state.closed) return Promise.reject(finalized());
    return this.#core.call(CALL.COLUMNS, this.#handle, [], this.#options, decodeColumns, null, this.#scope, this.#control);
  }

  setReadBigInts(enabled) {
    this.#checkOpen();
    checkBoolean(enabled, 'readBigInts');
    this.#options.readBigInts = enabled;
  }

  setReturnArrays(enabled) {
    this.#checkOpen();
    checkBoolean(enabled, 'returnArrays');
    this.#options.returnArrays = enabled;
  }

  setAllowBareNamedParameters(enabled) {
    this.#checkOpen();
    checkBoolean(enabled, 'allowBareNamedParameters');
    this.#options.allowBareNamedParameters = enabled;
  }

  setAllowUnknownNamedParameters(enabled) {
    this.#checkOpen();
    checkBoolean(enabled, 'enabled');
    this.#options.allowUnknownNamedParameters = enabled;
  }
}

/** A statement of `core` in `scope` for `sql`, as `prepare()` makes it. */
function prepare(core, scope, sql, options) {
  if (typeof sql !== 'string') throw argType('sql', 'a string');
  const stmtOptions = readStatementOptions(core.options, options);
  return new Statement(core, scope, core.native.sql(sql), sql, stmtOptions, undefined);
}

/**
 * `[[stmtOrSql, params?], ...]` to `[handle, args, options]` triples. A
 * params value that is an array is spread as the call's arguments; any
 * other value is the single argument (a named-parameter object or one
 * positional value).
 */
function batchCalls(core, scope, entries) {
  if (!Array.isArray(entries)) throw argType('statements', 'an array');
  // An index loop, not map(): map() skips the holes of a sparse array,
  // which must be refused like any other missing statement.
  const calls = new Array(entries.length);
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    const target = Array.isArray(entry) ? entry[0] : entry;
    const params = Array.isArray(entry) ? entry[1] : undefined;
    let stmt = target;
    if (typeof target === 'string') stmt = prepare(core, scope, target);
    else if (!(target instanceof Statement)) {
      throw argType(`statements[${index}][0]`, 'a Statement or a string');
    }
    const inner = internals(stmt);
    if (inner.core !== core) throw argType(`statements[${index}][0]`, 'a statement of this database');
    const args = params === undefined ? [] : Array.isArray(params) ? params : [params];
    calls[index] = [inner.handle, args, inner.options];
  }
  return calls;
}

module.exports = { Statement, prepare, batchCalls };
