'use strict';

// Transaction and ReadSnapshot: scopes whose statements run on one pinned
// thread. A transaction holds the writer (other callers' writes wait, in
// order, and never join it); a read snapshot holds one reader, so all its
// reads see one snapshot of the database.

const { argType, nodeError } = require('./errors.js');
const { decodeBatch } = require('./rows.js');
const { prepare, batchCalls } = require('./statement.js');
const { scope: SCOPE } = require('./protocol.js');

const MODES = { __proto__: null, deferred: SCOPE.DEFERRED, immediate: SCOPE.IMMEDIATE, exclusive: SCOPE.EXCLUSIVE };

function readMode(options) {
  if (options === undefined) return MODES.immediate;
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  if (options.mode === undefined) return MODES.immediate;
  const mode = MODES[options.mode];
  if (mode === undefined) {
    throw nodeError(
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      `The property 'options.mode' must be one of: 'deferred', 'immediate', 'exclusive'. Received '${options.mode}'`,
    );
  }
  return mode;
}

function checkCallback(fn) {
  if (typeof fn !== 'function') throw argType('fn', 'a function');
}

class ReadSnapshot {
  #core;
  #scope;

  constructor(core, scope) {
    this.#core = core;
    this.#scope = scope;
  }

  /** A statement whose calls run in this snapshot. */
  prepare(sql, options) {
    return prepare(this.#core, this.#scope, sql, options);
  }
}

class Transaction {
  #core;
  #scope;
  #savepoints = 0;

  constructor(core, scope) {
    this.#core = core;
    this.#scope = scope;
  }

  /** A statement whose calls run inside this transaction. */
  prepare(sql, options) {
    return prepare(this.#core, this.#scope, sql, options);
  }

  /** Runs a script inside this transaction. */
  exec(sql) {
    if (typeof sql !== 'string') throw argType('sql', 'a string');
    return this.#core.exec(sql, this.#scope, undefined);
  }

  /** Runs several statements at once, inside a SAVEPOINT of this transaction. */
  batch(statements) {
    return this.#core.batch(batchCalls(this.#core, this.#scope, statements), this.#scope, decodeBatch);
  }

  /**
   * A nested transaction: a SAVEPOINT, released when `fn` resolves and
   * rolled back to when it rejects. `fn` gets this same transaction.
   */
  async transaction(fn) {
    checkCallback(fn);
    const name = `offloop_savepoint_${++this.#savepoints}`;
    await this.exec(`SAVEPOINT ${name}`);
    let result;
    try {
      result = await fn(this);
    } catch (err) {
      await this.exec(`ROLLBACK TO ${name}; RELEASE ${name}`).catch(() => {});
      throw err;
    }
    await this.exec(`RELEASE ${name}`);
    return result;
  }
}

/**
 * Runs `fn` in a write transaction on `core`: BEGIN (mode), then COMMIT
 * when `fn`'s promise resolves (returning its value) or ROLLBACK when it
 * rejects (rethrowing). `counter` tracks open transactions.
 */
async function runTransaction(core, fn, options, counter) {
  checkCallback(fn);
  const mode = readMode(options);
  const refused = core.refusal(null);
  if (refused !== null) throw refused;
  const scope = core.begin(mode);
  counter.open += 1;
  try {
    let result;
    try {
      result = await fn(new Transaction(core, scope));
    } catch (err) {
      await core.end(scope, false).catch(() => {});
      throw err;
    }
    await core.end(scope, true);
    return result;
  } finally {
    counter.open -= 1;
  }
}

/** Runs `fn` with reads that all see one snapshot. */
async function runRead(core, fn) {
  checkCallback(fn);
  const refused = core.refusal(null);
  if (refused !== null) throw refused;
  const scope = core.begin(SCOPE.READ);
  try {
    return await fn(new ReadSnapshot(core, scope));
  } finally {
    await core.end(scope, true).catch(() => {});
  }
}

module.exports = { Transaction, ReadSnapshot, runTransaction, runRead };
