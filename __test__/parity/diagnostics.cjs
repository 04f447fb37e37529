'use strict';

// Under Node 24: the messages of the `sqlite.db.query` diagnostics channel
// from node:sqlite and from offloop for the same calls (see compare.cjs);
// diagnostics.test.mjs compares them. A message is kept as its shape: its
// keys, prototype, SQL, whether it names the database, and the type of its
// duration (a count of nanoseconds, different on every run).

const diagnosticsChannel = require('node:diagnostics_channel');
const { compare, report } = require('./compare.cjs');

const channel = diagnosticsChannel.channel('sqlite.db.query');

/** Runs `calls(db)` while subscribed; resolves to each message's shape. */
async function messages(db, calls) {
  const seen = [];
  const listener = (m) =>
    seen.push({
      keys: Object.keys(m),
      proto: Object.getPrototypeOf(m) === null ? 'null' : 'object',
      sql: m.sql,
      database: m.database === db,
      duration: Number.isInteger(m.duration) && m.duration >= 0,
    });
  channel.subscribe(listener);
  try {
    await calls(db);
  } finally {
    channel.unsubscribe(listener);
  }
  // offloop publishes once a call settles: after a turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

const scenarios = {
  'a statement call publishes its SQL, the database and a duration': async (db) => {
    await db.exec('CREATE TABLE t(x UNIQUE)');
    return messages(db, async (d) => {
      await d.exec('INSERT INTO t VALUES (1)');
      await d.prepare('SELECT x FROM t').all();
      await d.prepare('SELECT count(*) FROM t').get();
    });
  },
  'a call that fails when it runs publishes too': async (db) => {
    await db.exec('CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (1)');
    return messages(db, async (d) => {
      try {
        await d.prepare('INSERT INTO t VALUES (1)').run();
      } catch {}
    });
  },
  'nothing is published without a subscriber': async (db) => {
    await db.exec('CREATE TABLE t(x)');
    const seen = await messages(db, async () => {});
    await db.prepare('SELECT * FROM t').all();
    return seen;
  },
};

report(compare(scenarios, { readers: 2 }));
