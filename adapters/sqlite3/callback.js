'use strict';

// How sqlite3 hands a result back: a callback called with `this` bound to
// the object it belongs to, inside the async resource its work was created
// as (named `sqlite3.Statement.Run` and so on, which async_hooks and
// AsyncLocalStorage see), or an 'error' event when there is no callback.
// A callback or listener that throws is an uncaught exception, as it is
// for sqlite3, never a rejected promise. This file owns those rules; it
// knows nothing of databases.

const { AsyncResource } = require('node:async_hooks');

function rethrow(err) {
  process.nextTick(() => {
    throw err;
  });
}

/** An async resource named as sqlite3 names its work ('sqlite3.Database.Exec'). */
function work(name) {
  return new AsyncResource(name, { requireManualDestroy: true });
}

/** Calls `fn.apply(self, args)` in `resource`, if `fn` is a function; reports whether it was. */
function invoke(resource, fn, self, args) {
  if (typeof fn !== 'function') return false;
  try {
    if (resource === null) fn.apply(self, args);
    else resource.runInAsyncScope(fn, self, ...args);
  } catch (err) {
    rethrow(err);
  }
  return true;
}

/** Emits `event` on `emitter` (in `resource`); a throw is uncaught. */
function emit(resource, emitter, event, ...args) {
  try {
    if (resource === null) emitter.emit(event, ...args);
    else resource.runInAsyncScope(emitter.emit, emitter, event, ...args);
  } catch (err) {
    rethrow(err);
  }
}

/** Errors go to `callback`, or to `emitter`'s 'error' event when there is none. */
function report(resource, callback, emitter, err) {
  if (!invoke(resource, callback, emitter, [err])) emit(resource, emitter, 'error', err);
}

function done(resource) {
  resource?.emitDestroy();
}

module.exports = { work, invoke, emit, report, done };
