'use strict';

// Transaction and ReadSnapshot: scopes whose statements run on one pinned
// thread. A transaction holds the writer (other callers' writes wait, in
// order, and never join it); a read snapshot holds one reader, so all its
// reads see one snapshot of the database. `db.begin()` hands a transaction
// out to be ended by its caller; `db.transaction(fn)` is the same handle,
// committed or rolled back by what `fn` does. Neither ever sends BEGIN or
// COMMIT through the shared queue: they travel on the session itself.

const { argType, nodeError } = require('./errors.js');
const { decodeBatch } = require('./rows.js');
const { prepare, batchCalls } = require('./statement.js');
const { scope: SCOPE } = require('./protocol.js');
const { databasePath, isObserved, traceOperation } = require('./tracing.js');

const MODES = { __proto__: null, deferred: SCOPE.DEFERRED, immediate: SCOPE.IMMEDIATE, exclusive: SCOPE.EXCLUSIVE };

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

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

/** A savepoint name as an SQL identifier: any string, quoted. */
function savepointName(name) {
  if (typeof name !== 'string' || name === '') throw argType('name', 'a non-empty string');
  return `"${name.replaceAll('"', '""')}"`;
}

function ended() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'the transaction has ended');
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

// A transaction handle dropped without being ended: the addon rolls it back
// when its session is collected; the database stops counting it then.
const dropped = new FinalizationRegistry((counter) => {
  counter.open -= 1;
});

let isEnded;
let endedWith;

class Transaction {
  #core;
  #scope;
  #counter;

  constructor(core, scope, counter) {
    this.#core = core;
    this.#scope = scope;
    this.#counter = counter;
    counter.open += 1;
    dropped.register(this, counter, this);
  }

  static {
    // Whether the caller ended the transaction, for runTransaction.
    isEnded = (tx) => tx.#scope.ended;
    endedWith = (tx) => tx.#scope.error;
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

  /** SAVEPOINT `name`. */
  savepoint(name) {
    return this.exec(`SAVEPOINT ${savepointName(name)}`);
  }

  /** RELEASE `name`: its changes become part of the enclosing transaction. */
  release(name) {
    return this.exec(`RELEASE ${savepointName(name)}`);
  }

  /** ROLLBACK TO `name`: undoes what followed it; the savepoint stays open. */
  rollbackTo(name) {
    return this.exec(`ROLLBACK TO ${savepointName(name)}`);
  }

  /**
   * A nested transaction: a SAVEPOINT, released when `fn` resolves and
   * rolled back to when it rejects. `fn` gets this same transaction.
   */
  async transaction(fn) {
    checkCallback(fn);
    await this.#core.nest(this.#scope);
    let result;
    try {
      result = await fn(this);
    } catch (err) {
      await this.#core.unnest(this.#scope, false).catch(() => {});
      throw err;
    }
    await this.#core.unnest(this.#scope, true);
    return result;
  }

  #end() {
    this.#counter.open -= 1;
    dropped.unregister(this);
  }

  /**
   * COMMIT, after every statement queued before it. A COMMIT that fails
   * (a deferred foreign key) rolls back and rejects. Rejects with
   * ERR_INVALID_STATE once the transaction has ended.
   */
  commit() {
    if (this.#scope.ended) return Promise.reject(ended());
    this.#end();
    return traceEnd(this.#scope, this.#core.end(this.#scope, true));
  }

  /**
   * ROLLBACK, after every statement queued before it. Resolves, without
   * doing anything, when the transaction is over already (committed, rolled
   * back, or ended by the idle timeout or a failed COMMIT).
   */
  rollback() {
    if (this.#scope.ended) return Promise.resolve();
    this.#end();
    const rolledBack = this.#core.end(this.#scope, false).catch((err) => {
      // The session had ended on its own: it is rolled back.
      if (err?.code !== 'ERR_INVALID_STATE') throw err;
    });
    return traceEnd(this.#scope, rolledBack);
  }

  /** `await using tx = await db.begin()`: rolled back unless committed. */
  [asyncDispose]() {
    return this.rollback();
  }
}

/**
 * A write transaction on `core`, its BEGIN queued on the writer; `begun`
 * settles when BEGIN ran. Statements queued meanwhile wait behind it.
 * `trace`: the context published on `offloop:transaction` (or null), which
 * the transaction's statements name as theirs.
 */
function openTransaction(core, options, counter, trace) {
  const mode = readMode(options);
  const refused = core.refusal(null);
  if (refused !== null) throw refused;
  const { scope, begun } = core.begin(mode, true);
  scope.trace = trace;
  return { tx: new Transaction(core, scope, counter), scope, begun };
}

/** The context of a transaction's trace on `offloop:transaction`. */
function transactionFields(core, method, options) {
  const mode = typeof options?.mode === 'string' ? options.mode : 'immediate';
  return { method, database: databasePath(core), mode, transaction: null };
}

/**
 * Settles the trace of a transaction from `db.begin()` (its `finish`) with
 * `ending`'s outcome, the COMMIT or ROLLBACK its caller asked for; returns
 * `ending` as it is.
 */
function traceEnd(scope, ending) {
  const finish = scope.finish;
  if (finish !== undefined && finish !== null) {
    scope.finish = null;
    ending.then(finish.resolve, finish.reject);
  }
  return ending;
}

/**
 * `db.begin()`: resolves to the transaction once BEGIN has run. Traced on
 * `offloop:transaction` from this call to the COMMIT or ROLLBACK its
 * caller makes.
 */
function beginTransaction(core, options, counter) {
  if (!isObserved('transaction')) return begin(core, options, counter, null, null);
  let begun;
  const whole = traceOperation(
    'transaction',
    () => transactionFields(core, 'begin', options),
    (ctx) =>
      new Promise((resolve, reject) => {
        begun = begin(core, options, counter, ctx, { resolve, reject });
      }),
  );
  whole.catch(() => {});
  return begun;
}

async function begin(core, options, counter, trace, finish) {
  const { tx, scope, begun } = openTransaction(core, options, counter, trace);
  scope.finish = finish;
  if (trace !== null) trace.transaction = tx;
  try {
    await begun;
  } catch (err) {
    // The scope ended with the error; there is nothing to roll back.
    core.abandon(scope);
    counter.open -= 1;
    dropped.unregister(tx);
    finish?.reject(err);
    throw err;
  }
  return tx;
}

/**
 * `db.transaction(fn)`: a transaction handle whose end `fn` decides:
 * COMMIT when `fn`'s promise resolves (returning its value) or ROLLBACK when
 * it rejects (rethrowing). `fn` starts at once; its statements queue behind
 * BEGIN, whose failure they and the COMMIT report. Traced on
 * `offloop:transaction` from this call to the end of COMMIT or ROLLBACK.
 */
function runTransaction(core, fn, options, counter) {
  return traceOperation(
    'transaction',
    () => transactionFields(core, 'transaction', options),
    (trace) => transact(core, fn, options, counter, trace),
  );
}

async function transact(core, fn, options, counter, trace) {
  checkCallback(fn);
  const { tx, begun } = openTransaction(core, options, counter, trace);
  if (trace !== null) trace.transaction = tx;
  begun.catch(() => {});
  let result;
  try {
    result = await fn(tx);
  } catch (err) {
    await tx.rollback().catch(() => {});
    throw err;
  }
  // `fn` may have ended the transaction itself through the handle.
  if (!isEnded(tx)) await tx.commit();
  // Ended for it (close() rolled it back): nothing was committed.
  else if (endedWith(tx)) throw endedWith(tx);
  return result;
}

/**
 * Runs `fn` with reads that all see one snapshot; traced on `offloop:read`
 * from this call to the snapshot's end.
 */
function runRead(core, fn) {
  return traceOperation(
    'read',
    () => ({ method: 'read', database: databasePath(core), transaction: null }),
    (trace) => read(core, fn, trace),
  );
}

async function read(core, fn, trace) {
  checkCallback(fn);
  const refused = core.refusal(null);
  if (refused !== null) throw refused;
  const { scope } = core.begin(SCOPE.READ, false);
  scope.trace = trace;
  const snapshot = new ReadSnapshot(core, scope);
  if (trace !== null) trace.transaction = snapshot;
  try {
    return await fn(snapshot);
  } finally {
    await core.end(scope, true).catch(() => {});
  }
}

module.exports = { Transaction, ReadSnapshot, beginTransaction, runTransaction, runRead };
