'use strict';

// Under Node 24: serialize() and deserialize() on node:sqlite and on
// offloop (see compare.cjs; offloop's side is a file database without
// reader threads, which may take an image); image.test.mjs compares the
// outcomes. Images are compared by what they hold once opened, and an
// in-memory database's image byte for byte.

const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../index.js');
const { compare, enc, report } = require('./compare.cjs');

const SCHEMA = "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t(v) VALUES ('a'), (x'00ff'), (2.5)";

/** An empty in-memory database of the same library as `db`. */
async function memory(db) {
  return db instanceof DatabaseSync ? new DatabaseSync(':memory:') : Database.open(':memory:');
}

async function attempt(fn) {
  try {
    return { value: enc(await fn()) };
  } catch (err) {
    return { threw: enc(err) };
  }
}

const rows = (db, table = 't') => db.prepare(`SELECT * FROM ${table} ORDER BY id`).all();

const scenarios = {
  'an image of main opens in another database with every row': async (db) => {
    await db.exec(SCHEMA);
    const image = await db.serialize();
    const other = await memory(db);
    const done = await other.deserialize(image);
    return [image.constructor.name, image.length, done, await rows(other)];
  },
  'an in-memory database serializes to the same bytes': async (db) => {
    const mem = await memory(db);
    await mem.exec(SCHEMA);
    const image = await mem.serialize();
    const empty = await (await memory(db)).serialize();
    return [image, empty.length];
  },
  'writes after deserialize change the image, not the database it came from': async (db) => {
    await db.exec(SCHEMA);
    const other = await memory(db);
    await other.deserialize(await db.serialize());
    await other.exec("INSERT INTO t(v) VALUES ('new')");
    return [await rows(other), await rows(db)];
  },
  'deserialize replaces main on the database itself': async (db) => {
    const source = await memory(db);
    await source.exec('CREATE TABLE other(x); INSERT INTO other VALUES (7)');
    await db.exec(SCHEMA);
    await db.deserialize(await source.serialize());
    return [await db.prepare('SELECT * FROM other').all(), await attempt(() => rows(db))];
  },
  'an attached schema serializes and takes an image by dbName': async (db) => {
    const source = await memory(db);
    await source.exec(SCHEMA);
    const image = await source.serialize();
    await db.exec("ATTACH ':memory:' AS aux");
    await db.deserialize(image, { dbName: 'aux' });
    const back = await db.serialize('aux');
    return [await rows(db, 'aux.t'), back.length];
  },
  'the temp schema serializes': async (db) => {
    await db.exec('CREATE TEMP TABLE tt(a); INSERT INTO tt VALUES (1)');
    return (await db.serialize('temp')).length;
  },
  'argument errors': async (db) => {
    await db.exec(SCHEMA);
    const image = await db.serialize();
    const out = [];
    for (const name of [1, null, '', 'nope']) out.push(await attempt(() => db.serialize(name)));
    for (const [b, o] of [
      [undefined, undefined],
      ['x', undefined],
      [new DataView(new ArrayBuffer(8)), undefined],
      [new Uint16Array(8), undefined],
      [new Uint8Array(0), undefined],
      [image, null],
      [image, 1],
      [image, { dbName: 1 }],
      [image, { dbName: 'nope' }],
    ]) {
      out.push(await attempt(() => db.deserialize(b, o)));
    }
    return out;
  },
  'an image that is not a database is taken, and fails the next statement': async (db) => {
    const other = await memory(db);
    const taken = await attempt(() => other.deserialize(new Uint8Array(10)));
    return [taken, await attempt(() => other.prepare('SELECT * FROM sqlite_schema').all())];
  },
  'a closed database neither serializes nor deserializes': async (db) => {
    await db.exec(SCHEMA);
    const image = await db.serialize();
    await db.close();
    return [await attempt(() => db.serialize()), await attempt(() => db.deserialize(image))];
  },
};

report(compare(scenarios, { readers: 0 }));
