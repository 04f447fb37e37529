'use strict';

// The internal side of one open database: its addon handle, its options and
// its state, and the one place where calls are handed to the addon. The
// public Database, Statement, Transaction and iterator objects all go
// through here; a `scope` is null for the database itself or the JS handle
// of a transaction or read snapshot (`{ native, ended }`).

const { native, track, forget, armCancel } = require('./calls.js');
const { codedError, nodeError, notOpen } = require('./errors.js');
const { flagsOf } = require('./options.js');
const {
  call: CALL,
  scope: SCOPE,
  batchEntry: BATCH_ENTRY,
  refusal: REFUSAL,
  batchRefusal: BATCH_REFUSAL,
  flag: FLAG,
} = require('./protocol.js');
const { databasePath, traceOperation } = require('./tracing.js');
const { decodeCheckpoint } = require('./rows.js');
const { remember } = require('./open-databases.js');

const OPENING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

function finalized() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'statement has been finalized');
}

function scopeEnded() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'the transaction has ended');
}

function closedUnder(scope) {
  return nodeError(
    Error,
    'ERR_INVALID_STATE',
    scope.write
      ? 'the database was closed before the transaction ended (closeTimeout): it was rolled back'
      : 'the database was closed before the read snapshot ended (closeTimeout)',
  );
}

/**
 * Hands call `id` to the addon. If the addon throws (an internal error),
 * nothing was queued: forget the call so it does not keep the process alive.
 */
function send(id, queue) {
  try {
    queue();
  } catch (err) {
    forget(id);
    throw err;
  }
}

// Statement calls made outside a transaction or snapshot are held by the
// addon and sent together at the end of the microtask checkpoint they were
// made in (src/node/database.rs, `flush`): completions arrive in batches,
// and the calls their continuations make go out as one burst, which wakes a
// parked SQLite thread once instead of once per call.
// The databases holding calls: a list and a mark on each, not a Set
// cleared per burst, as clearing a long-lived Set allocates its new table
// in the old generation, once per burst (once per call for calls awaited
// one by one), which only a full GC frees.
const unflushed = [];
let unflushedCount = 0;
const HELD = Symbol('held');
let flushQueued = false;
// The flush is a reaction to an already-settled promise: a bare microtask.
// queueMicrotask() makes an AsyncResource for every burst (2-3 times the
// cost here, more with async hooks on), and a lone awaited call is a burst.
const settled = Promise.resolve();

function flushHeld() {
  flushQueued = false;
  // The list is emptied before any flush, which throws only on a panic:
  // then the databases after it are held again by their next call.
  const count = unflushedCount;
  unflushedCount = 0;
  for (let i = 0; i < count; i++) unflushed[i][HELD] = false;
  for (let i = 0; i < count; i++) {
    const nativeDb = unflushed[i];
    unflushed[i] = undefined;
    nativeDb.flush();
  }
}

function hold(nativeDb) {
  if (nativeDb[HELD] !== true) {
    nativeDb[HELD] = true;
    unflushed[unflushedCount++] = nativeDb;
  }
  if (!flushQueued) {
    flushQueued = true;
    settled.then(flushHeld);
  }
}

// The addon's statement calls with their parameters spread as arguments,
// which it reads in one go (src/node/spread.rs), in the orders that
// lib/protocol.js names (`spreadCall`, `spreadBatch`, `batchEntry`).
const [callSpread, batchSpread] = native.spreadFunctions();

// A spread call puts every value on V8's stack: past this many, a batch
// goes as arrays instead.
const MAX_SPREAD = 16384;

/** `calls` is `[handle, args, stmtOptions]` per statement. */
function queueBatch(nativeDb, dispatcher, id, calls, readBigInts, session) {
  let size = 0;
  for (const c of calls) size += BATCH_ENTRY.PARAMS + c[1].length;
  if (size > MAX_SPREAD) {
    return nativeDb.batch(
      id,
      calls.map((c) => c[0]),
      calls.map((c) => c[1]),
      calls.map((c) => flagsOf(c[2])),
      readBigInts,
      session,
    );
  }
  const flat = [];
  for (const [handle, args, options] of calls) {
    // SQL, FLAGS, COUNT, then the PARAMS.
    flat.push(handle, flagsOf(options), args.length);
    for (let i = 0; i < args.length; i++) flat.push(args[i]);
  }
  return batchSpread(dispatcher, id, readBigInts, session, ...flat);
}

// The close() contract: once close() is called, nothing new starts (calls,
// transactions, snapshots), and a statement's calls outside a transaction
// or snapshot reject as finalized, iterators included. A transaction or
// snapshot already open goes on until its callback ends it; close() waits
// for that up to `closeTimeout` ms, then rolls each one still open back, and
// its later calls reject with ERR_INVALID_STATE.
class Core {
  #scopes = new Set();
  #scopesEnded = null;

  constructor(nativeDb, options, location) {
    this.native = nativeDb;
    // What the spread calls take in place of the database (src/node/spread.rs).
    this.dispatcher = nativeDb.dispatcher();
    this.options = options;
    // The public Database this core serves, named in diagnostics messages,
    // and the location it was opened at (lib/tracing.js makes it absolute).
    this.database = null;
    this.location = location;
    this.tracedPath = undefined;
    this.state = OPENING;
    this.cancel = (id) => nativeDb.cancel(id);
    // `durability: 'replica'`: a write resolves once its commit is in the
    // replica (set again by db.replicate() and db.stopReplicating()). A
    // follower's is its promoted writer's from the start, so no write the
    // promotion lets through resolves before the JS side hears of it.
    this.durable = (options.replica ?? options.follow?.writer)?.durable === true;
    // A follower with `maxStaleness`: why a call may not run now, or null.
    this.stale = null;
    remember(this);
  }

  /**
   * With `durability: 'replica'`, `promise` (a write that settled) resolves
   * only once every commit made until then is in the replica: the addon
   * has every such call made during one upload share the next one.
   */
  #inReplica(promise) {
    if (!this.durable) return promise;
    return promise.then((value) => {
      const { id, promise: shipped } = track(null, null);
      send(id, () => this.native.replicaDurable(id));
      return shipped.then(() => value);
    });
  }

  get closing() {
    return this.state >= CLOSING;
  }

  /** Whether `scope` is a transaction or snapshot that has not ended. */
  scopeOpen(scope) {
    return scope !== null && !scope.ended;
  }

  /** Why a call cannot be queued now, or null. */
  refusal(scope) {
    if (scope !== null) {
      if (scope.ended) return scope.error ?? scopeEnded();
      // An open transaction or snapshot works until it ends, even while
      // the database is closing.
      return null;
    }
    if (this.state >= CLOSING) return notOpen();
    if (this.stale !== null) return this.stale(this);
    return null;
  }

  /** `refusal` for a statement's calls: node:sqlite finalizes them at close. */
  statementRefusal(scope) {
    if (scope === null && this.state >= CLOSING) return finalized();
    return this.refusal(scope);
  }

  /**
   * Resolves once every open transaction and snapshot has ended, or after
   * `timeoutMs`, when those still open are rolled back (close()).
   */
  endScopes(timeoutMs) {
    if (this.#scopes.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#scopesEnded = null;
        for (const scope of [...this.#scopes]) {
          this.end(scope, false).catch(() => {});
          scope.error = closedUnder(scope);
        }
        resolve();
      }, timeoutMs);
      this.#scopesEnded = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Forgets `scope`, which ended without reaching a thread (its BEGIN failed). */
  abandon(scope) {
    scope.ended = true;
    this.#release(scope);
  }

  #release(scope) {
    this.#scopes.delete(scope);
    if (this.#scopes.size === 0 && this.#scopesEnded !== null) {
      const ended = this.#scopesEnded;
      this.#scopesEnded = null;
      ended();
    }
  }

  /** Bounds call `id` by `control` (`{ signal, timeout }`) and `queryTimeout`. */
  #arm(id, control) {
    const signal = control?.signal;
    const timeout = control?.timeout ?? this.options.queryTimeout;
    if (signal !== undefined || timeout > 0) armCancel(id, this.cancel, signal, timeout);
  }

  #cancellable(control) {
    return control?.signal !== undefined || (control?.timeout ?? this.options.queryTimeout) > 0;
  }

  /**
   * A statement call. `timing(thread, waitMs, runMs)`, when given, hears
   * where and when it ran, just before it settles.
   */
  call(kind, handle, args, stmtOptions, decode, context, scope, control, timing = null) {
    const refused = this.statementRefusal(scope);
    if (refused !== null) return Promise.reject(refused);
    if (control?.signal?.aborted) return Promise.reject(control.signal.reason);
    const { id, promise } = track(decode, context, null, timing);
    let bad;
    try {
      bad = callSpread(
        this.dispatcher,
        kind,
        id,
        handle,
        timing === null ? flagsOf(stmtOptions) : flagsOf(stmtOptions) | FLAG.TIMED,
        scope?.native ?? null,
        this.#cancellable(control),
        ...args,
      );
    } catch (err) {
      // A getter of a named-parameter object threw: nothing was queued.
      forget(id);
      throw err;
    }
    if (bad !== null) {
      forget(id);
      throw codedError(bad[REFUSAL.CODE], bad[REFUSAL.MESSAGE]);
    }
    if (scope === null) hold(this.native);
    this.#arm(id, control);
    return scope === null && kind === CALL.RUN ? this.#inReplica(promise) : promise;
  }

  /** Runs the script `sql`; traced on `offloop:exec`. */
  exec(sql, scope, control) {
    return traceOperation(
      'exec',
      () => ({ sql, method: 'exec', database: databasePath(this), parent: scope?.trace ?? null }),
      () => this.#exec(sql, scope, control),
    );
  }

  #exec(sql, scope, control) {
    const refused = this.refusal(scope);
    if (refused !== null) return Promise.reject(refused);
    if (control?.signal?.aborted) return Promise.reject(control.signal.reason);
    const { id, promise } = track(null, null);
    send(id, () => this.native.exec(id, sql, scope?.native ?? null, this.#cancellable(control)));
    this.#arm(id, control);
    const done = promise.then(() => undefined);
    return scope === null ? this.#inReplica(done) : done;
  }

  /**
   * `calls` is `[handle, args, stmtOptions]` per statement; traced on
   * `offloop:batch` (`statements`: how many).
   */
  batch(calls, scope, decode) {
    return traceOperation(
      'batch',
      () => ({ method: 'batch', database: databasePath(this), statements: calls.length, parent: scope?.trace ?? null }),
      () => this.#batch(calls, scope, decode),
    );
  }

  #batch(calls, scope, decode) {
    const refused = this.refusal(scope);
    if (refused !== null) return Promise.reject(refused);
    const { id, promise } = track(
      decode,
      calls.map((c) => c[2].returnArrays),
    );
    // Results are converted once for the whole batch, with the database's
    // readBigInts.
    let bad;
    try {
      bad = queueBatch(this.native, this.dispatcher, id, calls, this.options.readBigInts, scope?.native ?? null);
    } catch (err) {
      forget(id);
      throw err;
    }
    if (bad !== null) {
      forget(id);
      const err = codedError(bad[BATCH_REFUSAL.CODE], bad[BATCH_REFUSAL.MESSAGE]);
      err.batchIndex = Number(bad[BATCH_REFUSAL.INDEX]);
      throw err;
    }
    return scope === null ? this.#inReplica(promise) : promise;
  }

  /**
   * The next chunk of `cursor`. `control` is the iteration's own (its
   * statement's signal and timeout): every chunk carries it, so an abort
   * stops the chunk running then, not only the first.
   */
  next(cursor, stmtOptions, scope, control) {
    const refused = this.statementRefusal(scope);
    if (refused !== null) return Promise.reject(refused);
    if (control?.signal?.aborted) return Promise.reject(control.signal.reason);
    const { id, promise } = track(null, null);
    const cancellable = this.#cancellable(control);
    send(id, () => this.native.next(id, cursor[0], cursor[1], flagsOf(stmtOptions), scope?.native ?? null, cancellable));
    this.#arm(id, control);
    return promise;
  }

  closeCursor(cursor, scope) {
    if (this.state === CLOSED) return Promise.resolve();
    const { id, promise } = track(null, null);
    send(id, () => this.native.closeCursor(id, cursor[0], cursor[1], scope?.native ?? null));
    return promise;
  }

  /**
   * A scope (transaction or read snapshot) handle, and with `tracked` a
   * promise of its BEGIN (else null). A read snapshot's BEGIN waits for its
   * first statement, so it is never tracked: an unused snapshot would keep
   * the process alive. An untracked BEGIN's failure still reaches every
   * statement and the end.
   */
  begin(kind, tracked) {
    const idle = this.options.transactionIdleTimeout;
    // `error`: why it ended before its caller ended it (close()).
    const scope = { native: null, ended: false, write: kind !== SCOPE.READ, error: null };
    this.#scopes.add(scope);
    if (!tracked) {
      scope.native = this.native.begin(kind, idle, 0);
      return { scope, begun: null };
    }
    const { id, promise } = track(null, null);
    send(id, () => {
      scope.native = this.native.begin(kind, idle, id);
    });
    return { scope, begun: promise.then(() => undefined) };
  }

  /** A WAL checkpoint in `mode` (its `code`); traced on `offloop:checkpoint`. */
  checkpoint(mode, code) {
    return traceOperation(
      'checkpoint',
      () => ({ method: 'checkpoint', database: databasePath(this), mode }),
      () => {
        const { id, promise } = track(decodeCheckpoint, null);
        send(id, () => this.native.checkpoint(id, code));
        return promise;
      },
    );
  }

  /** Opens a nested transaction in `scope` (a SAVEPOINT the engine names). */
  nest(scope) {
    const refused = this.refusal(scope);
    if (refused !== null) return Promise.reject(refused);
    const { id, promise } = track(null, null);
    send(id, () => this.native.nest(id, scope.native));
    return promise;
  }

  /** Ends the innermost nested transaction of `scope`: kept or undone. */
  unnest(scope, commit) {
    const refused = this.refusal(scope);
    if (refused !== null) return Promise.reject(refused);
    const { id, promise } = track(null, null);
    send(id, () => this.native.unnest(id, scope.native, commit));
    return promise;
  }

  /** COMMIT (or the end of a read snapshot) or ROLLBACK. */
  end(scope, commit) {
    if (scope.ended) {
      // Rolled back by close() while its callback ran: it can commit no more.
      const lost = commit && scope.write && scope.error !== null;
      return lost ? Promise.reject(scope.error) : Promise.resolve();
    }
    scope.ended = true;
    this.#release(scope);
    if (this.state === CLOSED || !this.native.scopeStarted(scope.native)) return Promise.resolve();
    const { id, promise } = track(null, null);
    send(id, () => this.native.end(id, scope.native, commit));
    return commit && scope.write ? this.#inReplica(promise) : promise;
  }
}

module.exports = { send, Core, finalized, OPENING, OPEN, CLOSING, CLOSED };
