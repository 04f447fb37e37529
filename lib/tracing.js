'use strict';

// The `offloop:<operation>` tracing channels (node:diagnostics_channel's
// tracingChannel): the context each call publishes, and the order of its
// events (`start` in the caller's async context, `end` once the call has
// returned its promise, then `error` on failure, `asyncStart` and
// `asyncEnd` once it settled). This file owns those contexts and that
// order; it never changes a call's outcome or its value, and an unobserved
// call costs it one `hasSubscribers` read. A subscriber that throws is
// Node's to report (an 'uncaughtException' on a later tick, as for every
// diagnostics channel): the call goes on as if it were unobserved.

const diagnosticsChannel = require('node:diagnostics_channel');
const nodePath = require('node:path');
const { fileURLToPath } = require('node:url');

/** The operations with a channel of their own, `offloop:<operation>`. */
const OPERATIONS = Object.freeze([
  'query',
  'exec',
  'transaction',
  'batch',
  'read',
  'checkpoint',
  'sync',
  'restore',
  'promote',
  'open',
]);

const channels = { __proto__: null };
for (const operation of OPERATIONS) channels[operation] = diagnosticsChannel.tracingChannel(`offloop:${operation}`);

// `TracingChannel.hasSubscribers` came with Node 20.13 and 22.0; before
// that, the five channels are asked one by one.
const observed =
  'hasSubscribers' in Object.getPrototypeOf(channels.query)
    ? (channel) => channel.hasSubscribers
    : (channel) =>
        channel.start.hasSubscribers ||
        channel.end.hasSubscribers ||
        channel.asyncStart.hasSubscribers ||
        channel.asyncEnd.hasSubscribers ||
        channel.error.hasSubscribers;

/**
 * Publishes `start` (with its bound stores in force) in the caller's
 * context, calls `call()` for the call's promise, publishes `end`, and
 * returns a promise of the same outcome that publishes, once it settled,
 * `error` (failure) then `asyncStart` and `asyncEnd`. `describe(ctx,
 * value)` adds what the value tells (rows, changes) before they are
 * published. A `call()` that throws publishes `error` then `end`, and
 * throws on.
 */
function trace(channel, ctx, call, describe) {
  return channel.start.runStores(ctx, () => {
    let promise;
    try {
      promise = call();
    } catch (err) {
      ctx.error = err;
      channel.error.publish(ctx);
      throw err;
    } finally {
      channel.end.publish(ctx);
    }
    return promise.then(
      (value) => {
        ctx.result = value;
        if (describe !== undefined) describe(ctx, value);
        channel.asyncStart.publish(ctx);
        channel.asyncEnd.publish(ctx);
        return value;
      },
      (err) => {
        ctx.error = err;
        channel.error.publish(ctx);
        channel.asyncStart.publish(ctx);
        channel.asyncEnd.publish(ctx);
        throw err;
      },
    );
  });
}

/** What `rows` and `changes` a query's value tells, by method. */
function describeQuery(ctx, value) {
  switch (ctx.method) {
    case 'get':
      ctx.rows = value === undefined ? 0 : 1;
      break;
    case 'all':
      ctx.rows = value.length;
      break;
    case 'run':
      ctx.changes = value.changes;
      break;
    case 'query':
      ctx.rows = value.rows.length;
      ctx.changes = value.changes;
      break;
  }
}

/** Whether `offloop:query` has a subscriber now: the caller then uses traceQuery. */
function queryObserved() {
  return observed(channels.query);
}

/**
 * A statement call, traced on `offloop:query`; `scope` is the internal
 * scope the call runs in (null outside a transaction or snapshot).
 * `call(timing)` makes the call, with `timing` to hear where and when it ran
 * (`thread`, `queueWait` and `runTime` of the context).
 */
function traceQuery(method, sql, parameters, core, statement, scope, call) {
  const ctx = {
    sql,
    parameters,
    method,
    database: databasePath(core),
    statement,
    parent: scope?.trace ?? null,
  };
  const timing = (thread, waitMs, runMs) => {
    ctx.thread = thread;
    ctx.queueWait = waitMs;
    ctx.runTime = runMs;
  };
  return trace(channels.query, ctx, () => call(timing), describeQuery);
}

/**
 * Any other call, traced on `offloop:<operation>` while it has
 * subscribers: `fields()` gives the context (`method`, `database` and the
 * operation's own), and `call(ctx)` the call's promise (ctx: null when
 * unobserved). `describe(ctx, value)` as for `trace`.
 */
function traceOperation(operation, fields, call, describe) {
  const channel = channels[operation];
  if (!observed(channel)) return call(null);
  const ctx = fields();
  return trace(channel, ctx, () => call(ctx), describe);
}

/** Whether `offloop:<operation>` has a subscriber now. */
function isObserved(operation) {
  return observed(channels[operation]);
}

/**
 * The absolute path of the database's file, as the channels name it
 * (':memory:' for an in-memory database), found once per core.
 */
function databasePath(core) {
  if (core.tracedPath === undefined) core.tracedPath = absolutePath(core.location);
  return core.tracedPath;
}

/** `location` (a path or a file: URI, as open() takes it) made absolute. */
function absolutePath(location) {
  if (location === '' || location === ':memory:') return ':memory:';
  if (location.startsWith('file:')) {
    const query = location.indexOf('?');
    const rest = location.slice(5, query < 0 ? undefined : query);
    const params = new URLSearchParams(query < 0 ? '' : location.slice(query + 1));
    if (rest === ':memory:' || params.get('mode') === 'memory') return ':memory:';
    try {
      return rest.startsWith('//') ? fileURLToPath(`file:${rest}`) : nodePath.resolve(decodeURIComponent(rest));
    } catch {
      return location;
    }
  }
  return nodePath.resolve(location);
}

module.exports = { OPERATIONS, queryObserved, traceQuery, traceOperation, isObserved, databasePath, absolutePath };
