'use strict';

// Under Node 24: the tag store, the constants export, isTransaction and
// the checks of the open, allowExtension and limits options, on node:sqlite and on offloop (see
// compare.cjs); extras.test.mjs compares the outcomes.

const { DatabaseSync, constants: nodeConstants } = require('node:sqlite');
const { Database, constants } = require('../../index.js');
const { compare, enc, report } = require('./compare.cjs');

async function outcomeOf(fn) {
  try {
    return { value: await fn() };
  } catch (err) {
    return { threw: err };
  }
}

async function rows(iterator) {
  const out = [];
  for await (const row of iterator) out.push(row);
  return out;
}

const scenarios = {
  'tag store: run, get, all, iterate bind the values': async (db) => {
    await db.exec('CREATE TABLE t(a, b)');
    const sql = db.createTagStore(2);
    const name = "x'); DROP TABLE t; --";
    return [
      await sql.run`INSERT INTO t VALUES (${1}, ${name})`,
      await sql.get`SELECT * FROM t WHERE a = ${1}`,
      await sql.all`SELECT * FROM t`,
      await rows(sql.iterate`SELECT b FROM t WHERE a = ${1}`),
      await sql.get`SELECT count(*) AS n FROM t WHERE b = ${name}`,
    ];
  },
  'tag store: size, capacity, db, clear and eviction': async (db) => {
    const sql = db.createTagStore(2);
    const seen = [sql.size, sql.capacity, sql.db === db];
    await sql.get`SELECT ${1} AS x`;
    await sql.get`SELECT ${1} AS x`;
    seen.push(sql.size);
    await sql.get`SELECT ${1} AS y`;
    await sql.get`SELECT ${1} AS z`;
    seen.push(sql.size);
    sql.clear();
    seen.push(sql.size, db.createTagStore().capacity);
    return seen;
  },
  'tag store: argument checks and errors': async (db) => {
    const sql = db.createTagStore();
    const out = [];
    for (const t of [
      () => db.createTagStore('a'),
      () => db.createTagStore(0),
      () => db.createTagStore(-1),
      () => db.createTagStore(1.5),
      () => sql.get('SELECT 1'),
      () => sql.get(['SELECT 1 AS one']),
      () => sql.get`SELECT ${undefined} AS x`,
      () => sql.get`SELECT ${{ a: 1 }} AS x`,
      () => sql.get`SELECT ${2n ** 60n} AS x`,
      () => sql.get`SELECT * FROM nope WHERE a = ${1}`,
    ]) {
      out.push(await outcomeOf(t));
    }
    return out;
  },
  'tag store: on a closed database': async (db) => {
    const sql = db.createTagStore();
    await db.close();
    return [await outcomeOf(() => sql.get`SELECT 1`), await outcomeOf(() => db.createTagStore())];
  },
  'isTransaction follows BEGIN, SAVEPOINT, COMMIT and close': async (db) => {
    const seen = [db.isTransaction];
    await db.exec('BEGIN');
    seen.push(db.isTransaction);
    await db.exec('COMMIT');
    seen.push(db.isTransaction);
    await db.exec('SAVEPOINT a');
    seen.push(db.isTransaction);
    await db.exec('RELEASE a');
    seen.push(db.isTransaction);
    await db.close();
    seen.push(await outcomeOf(() => db.isTransaction));
    return seen;
  },
};

// Options are checked before anything opens: compared on the constructors.
const OPTIONS = [
  { limits: 5 },
  { limits: null },
  { allowExtension: 5 },
  { open: 5 },
  { open: true, allowExtension: false, limits: {} },
];

async function main() {
  const extra = [
    {
      name: 'constants are node:sqlite’s',
      node: { value: Object.entries(nodeConstants) },
      offloop: { value: Object.entries(constants) },
    },
  ];
  for (const options of OPTIONS) {
    const run = (open) => {
      try {
        const db = open();
        if (typeof db.close === 'function') db.close();
        return { value: 'opened' };
      } catch (err) {
        return { threw: enc(err) };
      }
    };
    extra.push({
      name: `options ${JSON.stringify(options)}`,
      node: run(() => new DatabaseSync(':memory:', options)),
      offloop: run(() => new Database(':memory:', options)),
    });
  }
  return extra.concat(await compare(scenarios, { readers: 2 }));
}

report(main());
