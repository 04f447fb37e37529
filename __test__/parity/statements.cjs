'use strict';

// Under Node 24: a statement's sourceSQL, expandedSQL, close() and
// Symbol.dispose, on node:sqlite and on offloop (see compare.cjs);
// statements.test.mjs compares the outcomes.

const { compare, report } = require('./compare.cjs');

async function attempt(fn) {
  try {
    return { value: await fn() };
  } catch (err) {
    return { threw: { code: err.code, message: err.message } };
  }
}

const scenarios = {
  'sourceSQL is the first statement of the text': async (db) => {
    await db.exec('CREATE TABLE t(a)');
    const texts = [
      '  SELECT 1; SELECT 2',
      "SELECT ';' ; SELECT 2",
      'SELECT 1 -- ; c\n; SELECT 2',
      'SELECT 1 /* ; */; SELECT 2',
      'CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END; SELECT 3',
      'SELECT 1',
      'SELECT 1;   ',
      ';SELECT 1',
      'SELECT 1 ;;',
    ];
    return texts.map((text) => db.prepare(text).sourceSQL);
  },
  'expandedSQL binds the last call’s values, NULL before any call': async (db) => {
    await db.exec('CREATE TABLE t(a, b, c)');
    const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?); SELECT 2');
    const out = [await ins.expandedSQL];
    await ins.run(1, "it's", new Uint8Array([1, 2]));
    out.push(await ins.expandedSQL);
    await ins.run(10n, null, 2.5);
    out.push(await ins.expandedSQL);
    const named = db.prepare('SELECT * FROM t WHERE a = :a OR b = $b');
    await named.all({ a: 1, b: 'x' });
    out.push(await named.expandedSQL);
    return out;
  },
  'a closed statement refuses every call and accessor; closing twice throws': async (db) => {
    const stmt = db.prepare('SELECT 1 AS x');
    const out = [await stmt.get()];
    stmt.close();
    for (const fn of [
      () => stmt.get(),
      () => stmt.all(),
      () => stmt.run(),
      () => stmt.sourceSQL,
      () => stmt.expandedSQL,
      () => stmt.setReadBigInts(true),
      () => stmt.close(),
    ]) {
      out.push(await attempt(fn));
    }
    return out;
  },
  'Symbol.dispose closes a statement and is harmless twice': async (db) => {
    const stmt = db.prepare('SELECT 1 AS x');
    stmt[Symbol.dispose]();
    stmt[Symbol.dispose]();
    return attempt(() => stmt.get());
  },
  'closing one statement leaves another of the same SQL working': async (db) => {
    const a = db.prepare('SELECT 1 AS x');
    const b = db.prepare('SELECT 1 AS x');
    a.close();
    return [await attempt(() => a.get()), await b.get()];
  },
  'SELECT * returns the columns ALTER TABLE added, from its first call after': async (db) => {
    await db.exec('CREATE TABLE t(a); INSERT INTO t VALUES (1), (2)');
    const stmt = db.prepare('SELECT * FROM t ORDER BY a');
    const calls = () => Promise.all([
      ...Array.from({ length: 6 }, () => stmt.get()),
      stmt.all(),
      stmt.columns(),
    ]);
    // Several calls at once: on offloop every reader prepares it.
    const out = [await calls()];
    await db.exec('ALTER TABLE t ADD COLUMN b DEFAULT 7');
    out.push(await calls());
    const iterated = [];
    for await (const row of stmt.iterate()) iterated.push(row);
    out.push(iterated);
    await db.exec('ALTER TABLE t ADD COLUMN c DEFAULT 8');
    const again = [];
    for await (const row of stmt.iterate()) again.push(row);
    out.push(again, await calls());
    return out;
  },
};

report(compare(scenarios, { readers: 2 }));
