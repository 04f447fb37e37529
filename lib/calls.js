'use strict';

// Calls in flight. Each call gets an id; the addon settles it by id from one
// batch per wake-up of the event loop (one call of `drain` serves every
// completion that arrived meanwhile), handed over as one flat array. The
// addon keeps the event loop alive while any job it queued has not been
// drained (src/node/drain.rs), so pending work keeps the process alive and
// an idle database does not; nothing here needs to tell it.

const { setImmediate } = require('node:timers');

const native = require('../native.js');
const { THROWN, errorFromNative } = require('./errors.js');
const { host } = require('./host.js');
const { decodeAll, decodeRun } = require('./rows.js');
const { cancel: CANCEL, error: ERROR, record: RECORD } = require('./protocol.js');

// Calls by id, in a table indexed by the id's low bits: an array read
// where a Map would hash, and a table that never rehashes while the calls
// in flight stay under half its size. An id whose slot is taken (a call
// that outlived its neighbours) is skipped: ids only need to be unique.
// The table grows to keep at least half of it free and shrinks back once
// nothing is in flight. (A Map emptied and refilled per call also
// reallocates its table in the old generation each time it shrinks and
// grows again, which only a full GC frees.)
const MIN_SLOTS = 256;
let slots = new Array(MIN_SLOTS).fill(undefined);
let mask = MIN_SLOTS - 1;
let live = 0;
let nextId = 1;

/** The call in flight with `id`, or undefined. */
function lookup(id) {
  const call = slots[id & mask];
  return call !== undefined && call.id === id ? call : undefined;
}

function resize(size) {
  const old = slots;
  slots = new Array(size).fill(undefined);
  mask = size - 1;
  // Live ids differ in their low bits, so they differ in more of them.
  for (let i = 0; i < old.length; i++) if (old[i] !== undefined) slots[old[i].id & mask] = old[i];
}

/**
 * Registers a call. `decode(payload, context)` turns the addon's payload
 * into the resolved value (null: resolve with the payload as is).
 * `progress(totalPages, remainingPages)` hears a backup's PROGRESS records,
 * which leave the call pending; `timing(thread, waitMs, runMs)` a TIMED
 * call's TIMING record, just before it settles.
 */
function track(decode, context, progress = null, timing = null) {
  if (2 * (live + 1) > slots.length) resize(2 * slots.length);
  let id = nextId;
  while (slots[id & mask] !== undefined) id++;
  nextId = id + 1 > Number.MAX_SAFE_INTEGER ? 1 : id + 1;
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  slots[id & mask] = { id, resolve, reject, decode, context, progress, timing, timer: null, armed: null, abortReason: undefined };
  live++;
  if (lingersFromJs && !lingerQueued) {
    lingerQueued = true;
    setImmediate(lingerTurn);
  }
  return { id, promise };
}

// Where the addon wakes the loop with a thread-safe function (Bun, Deno),
// no hook tells it when the loop is about to block, so JS asks: a call
// schedules an immediate, which runs once the loop has polled without
// blocking, and there the addon looks for a due reply for a few
// microseconds and drains it if it comes (src/node/linger.rs). A reply
// caught there costs no wake-up of the loop; one that comes later wakes it
// as before. In Node, libuv's prepare hook does this and nothing here runs.
let lingersFromJs = false;
let lingerQueued = false;

function lingerTurn() {
  lingerQueued = false;
  if (native.linger() && !lingerQueued) {
    lingerQueued = true;
    setImmediate(lingerTurn);
  }
}

/**
 * Drops call `id`: settled, cancelled before it started, or never sent
 * (its arguments were refused). Returns its record.
 */
function forget(id) {
  const call = lookup(id);
  if (call !== undefined) release(call);
  return call;
}

function release(call) {
  slots[call.id & mask] = undefined;
  if (--live === 0 && slots.length > MIN_SLOTS) resize(MIN_SLOTS);
  if (call.timer !== null) clearTimeout(call.timer);
  if (call.armed !== null) call.armed.live--;
}

/**
 * Makes call `id` abortable by `signal` and bounded by `timeoutMs` (0: no
 * bound). A call still queued rejects at once and never runs. A running one
 * is interrupted and rejects when its thread reports it stopped; if it
 * finished first, its result stands (an abort never hides a commit).
 */
function armCancel(id, cancel, signal, timeoutMs) {
  const call = lookup(id);
  if (call === undefined) return;
  if (timeoutMs > 0) {
    call.timer = setTimeout(
      () => abortCall(id, call, cancel, new DOMException(`The operation did not finish within ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
  }
  if (signal !== undefined) {
    const armed = armedOn(signal);
    call.armed = armed;
    armed.live++;
    armed.ids.push(id, cancel);
    if (armed.ids.length > COMPACT_AT && armed.ids.length > 4 * armed.live) compact(armed);
  }
}

// The calls armed with each signal, behind one 'abort' listener per signal
// for as long as the signal lives: an EventTarget listener added and
// removed per call costs more than the call's own objects, and a caller
// that passes one signal to every call (sqlite3's interrupt()) would pay
// it on each. `ids` holds (id, cancel) pairs, settled ones among them
// until the list is compacted; `live` counts the unsettled. A list rather
// than a Map: a Map emptied and refilled once per call rehashes each time.
const armedBySignal = new WeakMap();
// Below this many entries a list is never compacted.
const COMPACT_AT = 64;

function armedOn(signal) {
  let armed = armedBySignal.get(signal);
  if (armed === undefined) {
    armed = { ids: [], live: 0 };
    armedBySignal.set(signal, armed);
    const calls = armed;
    signal.addEventListener(
      'abort',
      () => {
        const { ids } = calls;
        for (let i = 0; i < ids.length; i += 2) {
          const call = lookup(ids[i]);
          if (call !== undefined && call.armed === calls) abortCall(ids[i], call, ids[i + 1], signal.reason);
        }
      },
      { once: true },
    );
  }
  return armed;
}

// Drops the settled calls from `armed.ids`, in place.
function compact(armed) {
  const { ids } = armed;
  let kept = 0;
  for (let i = 0; i < ids.length; i += 2) {
    const call = lookup(ids[i]);
    if (call !== undefined && call.armed === armed) {
      ids[kept++] = ids[i];
      ids[kept++] = ids[i + 1];
    }
  }
  ids.length = kept;
}

function abortCall(id, call, cancel, reason) {
  if (lookup(id) !== call || call.abortReason !== undefined) return;
  call.abortReason = reason;
  if (cancel(id) === CANCEL.BEFORE_START) {
    forget(id);
    call.reject(reason);
  }
}

const { FAILED, RUN, ROWS, PROGRESS, TIMING } = RECORD;

function drain(batch) {
  let i = 0;
  while (i < batch.length) {
    const kind = batch[i + 1];
    const next =
      kind === ROWS ? i + 4 + batch[i + 3] : kind === RUN || kind === PROGRESS ? i + 4 : kind === TIMING ? i + 5 : i + 3;
    const call = lookup(batch[i]);
    if (call !== undefined && kind === PROGRESS) {
      if (call.progress !== null) call.progress(batch[i + 2], batch[i + 3]);
    } else if (call !== undefined && kind === TIMING) {
      if (call.timing !== null) call.timing(batch[i + 2], batch[i + 3], batch[i + 4]);
    } else if (call !== undefined) {
      release(call);
      settle(call, batch, i, kind);
    }
    i = next;
  }
}

function settle(call, batch, i, kind) {
  if (kind === FAILED) {
    const error = batch[i + 2];
    if (call.abortReason !== undefined && error[ERROR.CODE] === 'ABORT_ERR') call.reject(call.abortReason);
    else if (error[ERROR.CODE] === THROWN) call.reject(errorFromNative(error));
    else rejectInCaller(call, errorFromNative(error));
    return;
  }
  let value;
  try {
    if (kind === RUN) value = decodeRun(batch, i + 1);
    else if (kind === ROWS) value = (call.decode ?? decodeAll)(batch[i + 2], batch, i + 4, batch[i + 3], call.context);
    else value = call.decode === null ? batch[i + 2] : call.decode(batch[i + 2], call.context);
  } catch (err) {
    rejectInCaller(call, err);
    return;
  }
  call.resolve(value);
}

// An error made here, in a completion, has only this file's frames on its
// stack: the caller's are gone. V8 adds the awaiting async functions to the
// stack of an error whose stack is taken in a promise reaction, following
// the promises that wait on it. So a failed call resolves with a promise
// that rejects one reaction later, where `restack` takes the stack again
// and finds the caller's `await` chain. A call that succeeds never comes
// here: the success path costs nothing more. A user's own value (a
// function's throw, an abort reason) is rejected with as it is.
function rejectInCaller(call, err) {
  if (err !== null && typeof err === 'object') made.add(err);
  let fail;
  const failed = new Promise((resolve, reject) => {
    fail = reject;
  });
  // Resolving first makes the call's promise wait on `failed` before
  // `restack` runs, so V8 can follow it from there to the caller.
  call.resolve(failed.then(undefined, restack));
  fail(err);
}

// The errors offloop made in a completion, which `restackAt` may take
// the stack of again.
const made = new WeakSet();

function restack(err) {
  restackAt(err, restack);
  throw err;
}

/**
 * Takes the stack of `err` again here (above `fn`, when given), if offloop
 * made it and a caller is found here: with nobody awaiting yet (or several
 * waiting), the stack found is empty and the one it had stays.
 */
function restackAt(err, fn = restackAt) {
  if (!made.has(err)) return;
  const found = {};
  Error.captureStackTrace(found, fn);
  if (typeof found.stack !== 'string' || found.stack.includes('\n')) Error.captureStackTrace(err, fn);
}

// `(...v) => v` and its joiner: the addon hands every completion over in
// arrays these build, which is far cheaper than setting elements one by
// one through Node-API.
const pack = (...values) => values;
const join = (...arrays) => [].concat(...arrays);

// The runtime and its version: the addon chooses how completions wake the
// event loop by it (src/node/waker.rs), and names it when it cannot work
// there.
native.init(drain, pack, join, ...host());
lingersFromJs = native.waker() === 'threadsafe-function';

module.exports = { native, track, forget, armCancel, restackAt };
