'use strict';

// The `sqlite.db.query` diagnostics channel, as node:sqlite publishes it:
// one `{ sql, database, duration }` message per statement call once it
// settled (resolved or rejected), only while the channel has subscribers.
// This file owns the message and when it is sent; it never changes a
// call's outcome, and costs one property read per call without
// subscribers.

const diagnosticsChannel = require('node:diagnostics_channel');

const channel = diagnosticsChannel.channel('sqlite.db.query');

/** Whether the channel has subscribers: else `observe` returns its promise as it is. */
function published() {
  return channel.hasSubscribers;
}

/**
 * Returns `promise` as it is; while the channel has subscribers, a promise
 * of the same outcome that first publishes its SQL (`sql()` is asked only
 * then), `database` and the nanoseconds from this call to its settlement.
 * The call's promise has that one reaction, so the caller's stack still
 * reaches a failed call's error (lib/calls.js).
 */
function observe(promise, sql, database) {
  if (!channel.hasSubscribers) return promise;
  const text = sql();
  const start = process.hrtime.bigint();
  const publish = () => {
    if (!channel.hasSubscribers) return;
    const duration = Number(process.hrtime.bigint() - start);
    channel.publish({ __proto__: null, sql: text, database, duration });
  };
  return promise.then(
    (value) => {
      publish();
      return value;
    },
    (err) => {
      publish();
      throw err;
    },
  );
}

module.exports = { observe, published };
