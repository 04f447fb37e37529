'use strict';

// Under Node 24: db.setAuthorizer() on node:sqlite and on offloop (see
// compare.cjs); authorizer.test.mjs compares the outcomes: what the
// callback is called with, what its answers do, and what a bad answer or a
// throw does.

const { constants } = require('node:sqlite');
const { compare, report } = require('./compare.cjs');

const { SQLITE_OK, SQLITE_DENY, SQLITE_IGNORE, SQLITE_READ, SQLITE_INSERT, SQLITE_FUNCTION } = constants;

async function attempt(fn) {
  try {
    return { value: await fn() };
  } catch (err) {
    return { threw: [err.constructor.name, err.code, err.message, err.errcode, err.errstr] };
  }
}

const scenarios = {
  'the callback sees each action with its arguments': async (db) => {
    await db.exec('CREATE TABLE t(a, b)');
    const calls = [];
    db.setAuthorizer((...args) => {
      calls.push(args);
      return SQLITE_OK;
    });
    await db.prepare('SELECT a, upper(b) FROM t WHERE b = 1').all();
    await db.prepare('INSERT INTO t VALUES (1, 2)').run();
    await db.prepare('UPDATE t SET b = 3 WHERE a = 1').run();
    await db.exec('CREATE TABLE u(x); CREATE INDEX ui ON u(x); DROP TABLE u');
    db.setAuthorizer(null);
    return calls;
  },
  'DENY fails the statement with SQLite’s error': async (db) => {
    await db.exec('CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2)');
    db.setAuthorizer((code, arg1) => (code === SQLITE_READ && arg1 === 't' ? SQLITE_DENY : SQLITE_OK));
    const read = await attempt(() => db.prepare('SELECT a FROM t').all());
    const other = await attempt(() => db.prepare('SELECT 1 AS one').all());
    db.setAuthorizer((code) => (code === SQLITE_INSERT ? SQLITE_DENY : SQLITE_OK));
    const write = await attempt(() => db.prepare('INSERT INTO t VALUES (3, 4)').run());
    db.setAuthorizer(null);
    return [read, other, write, await db.prepare('SELECT count(*) AS n FROM t').get()];
  },
  'IGNORE reads a column as NULL': async (db) => {
    await db.exec('CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2)');
    db.setAuthorizer((code, arg1, arg2) => (code === SQLITE_READ && arg2 === 'b' ? SQLITE_IGNORE : SQLITE_OK));
    const rows = await db.prepare('SELECT a, b FROM t').all();
    db.setAuthorizer(null);
    return [rows, await db.prepare('SELECT a, b FROM t').all()];
  },
  'denying a function by name': async (db) => {
    db.setAuthorizer((code, arg1, arg2) => (code === SQLITE_FUNCTION && arg2 === 'random' ? SQLITE_DENY : SQLITE_OK));
    const out = [await attempt(() => db.prepare('SELECT random() AS r').get()), await attempt(() => db.prepare('SELECT abs(-1) AS r').get())];
    db.setAuthorizer(null);
    return out;
  },
  'an answer that is not SQLITE_OK, DENY or IGNORE throws': async (db) => {
    const out = [];
    for (const answer of [99, -1, 3, 'x', 1.5, undefined, null, true, 1n]) {
      db.setAuthorizer(() => answer);
      out.push(await attempt(() => db.prepare('SELECT 1 AS one').all()));
    }
    db.setAuthorizer(null);
    return out;
  },
  'a callback that throws fails the statement with what it threw': async (db) => {
    const thrown = new Error('not on my watch');
    db.setAuthorizer(() => {
      throw thrown;
    });
    let same;
    try {
      await db.prepare('SELECT 1 AS one').all();
      same = 'resolved';
    } catch (err) {
      same = err === thrown;
    }
    db.setAuthorizer(null);
    return [same, await db.prepare('SELECT 2 AS two').get()];
  },
  'a statement prepared and run before the authorizer is authorized again': async (db) => {
    await db.exec('CREATE TABLE t(a); INSERT INTO t VALUES (1)');
    const stmt = db.prepare('SELECT a FROM t');
    const before = await stmt.all();
    db.setAuthorizer(() => SQLITE_DENY);
    const during = await attempt(() => stmt.all());
    db.setAuthorizer(null);
    return [before, during, await stmt.all()];
  },
  'argument checks': async (db) => {
    const out = [];
    for (const args of [[1], [], [undefined], ['x'], [{}]]) {
      try {
        db.setAuthorizer(...args);
        out.push('accepted');
      } catch (err) {
        out.push([err.constructor.name, err.code, err.message]);
      }
    }
    return out;
  },
  'a closed database': async (db) => {
    await db.close();
    try {
      db.setAuthorizer(null);
      return 'accepted';
    } catch (err) {
      return [err.code, err.message];
    }
  },
};

report(compare(scenarios, { readers: 2 }));
