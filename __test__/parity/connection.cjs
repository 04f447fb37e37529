'use strict';

// Under Node 24: open: false and open(), location(dbName), the limits
// option and db.limits, enableDefensive(), and the checks around
// extension loading, on node:sqlite and on offloop (see compare.cjs);
// connection.test.mjs compares the outcomes.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../index.js');
const { compare, enc, report } = require('./compare.cjs');

// A folder both libraries attach their files from, its path resolved as
// SQLite resolves the paths it reports.
const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-connection-parity-')));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));

async function attempt(fn) {
  try {
    return { value: await fn() };
  } catch (err) {
    return { threw: { name: err.name, code: err.code, errcode: err.errcode, message: err.message } };
  }
}

const LONG = `SELECT ${'1'.repeat(110)}`;

const scenarios = {
  'db.limits lists every limit with its default': async (db) => ({ ...db.limits }),
  'a limit set on db.limits is kept, clamped to its ceiling, Infinity restores it': async (db) => {
    const out = [];
    db.limits.sqlLength = 100;
    out.push(db.limits.sqlLength, await attempt(() => db.exec(LONG)), await attempt(() => db.prepare(LONG).get()));
    db.limits.sqlLength = 2e9;
    out.push(db.limits.sqlLength);
    db.limits.sqlLength = 100;
    db.limits.sqlLength = Infinity;
    out.push(db.limits.sqlLength, await attempt(() => db.prepare(LONG).get()));
    for (const bad of [-1, 1.5, 'a', null, -Infinity, NaN, 3e9, -3e9]) {
      out.push(await attempt(() => {
        db.limits.column = bad;
      }));
    }
    out.push(db.limits.column);
    return out;
  },
  'enableDefensive switches the defensive mode on every connection': async (db) => {
    const write = "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = sql WHERE name = 't'";
    await db.exec('CREATE TABLE t(a)');
    const out = [await attempt(() => db.enableDefensive(1))];
    db.enableDefensive(true);
    out.push(await attempt(() => db.exec(write)));
    db.enableDefensive(false);
    out.push(await attempt(() => db.exec(write)));
    return out;
  },
  'extension loading is refused unless the database allows it': async (db) => [
    await attempt(() => db.enableLoadExtension(true)),
    await attempt(() => db.enableLoadExtension('yes')),
    await attempt(() => db.loadExtension('/nonexistent/ext')),
  ],
  'location(dbName) checks its argument': async (db) => [
    await attempt(() => db.location(1)),
    await attempt(() => db.location('temp')),
    await attempt(() => db.location('nope')),
  ],
  'location(dbName) gives an attached file until it is detached': async (db) => {
    const other = path.join(scratch, 'attached.db');
    await db.exec(`ATTACH '${other}' AS aux; ATTACH ':memory:' AS mem`);
    const out = [db.location('aux') === other, db.location('AUX') === other, db.location('mem')];
    await db.exec('DETACH aux');
    out.push(db.location('aux'));
    return out;
  },
};

function sync(fn) {
  try {
    return { value: enc(fn()) };
  } catch (err) {
    return { threw: enc(err) };
  }
}

const OPTION_CASES = [
  { limits: 5 },
  { limits: null },
  { limits: { length: -1 } },
  { limits: { column: Infinity } },
  { limits: { column: 1.5 } },
  { limits: { column: '3' } },
  { limits: { column: 3e9 } },
  { limits: { column: -3e9 } },
];

async function main() {
  const extra = [];
  for (const options of OPTION_CASES) {
    extra.push({
      name: `options ${JSON.stringify(options, (k, v) => (v === Infinity ? 'Infinity' : v))}`,
      node: sync(() => new DatabaseSync(':memory:', options).close()),
      offloop: sync(() => new Database(':memory:', options).close().catch(() => {})),
    });
  }
  // The same steps on both; offloop's that return promises are awaited.
  const steps = async (db) => {
    const out = [db.isOpen, await attempt(() => db.prepare('SELECT 1')), await attempt(() => db.limits.length)];
    out.push(await attempt(() => db.close()));
    await db.open();
    out.push(db.isOpen, await attempt(() => db.open()), await db.prepare('SELECT 1 AS x').get());
    out.push(db.limits.sqlLength, await attempt(() => db.exec(LONG)));
    await db.close();
    out.push(await attempt(() => db.limits.length));
    await db.open();
    out.push(db.isOpen, db.limits.sqlLength, db.limits.column);
    await db.close();
    return out;
  };
  const options = { open: false, limits: { sqlLength: 100, column: 3000 } };
  extra.push({
    name: 'open: false waits for open(); a closed database opens again with its options',
    node: await attempt(() => steps(new DatabaseSync(':memory:', options))).then(enc),
    offloop: await attempt(() => steps(new Database(':memory:', options))).then(enc),
  });
  return extra.concat(await compare(scenarios, { readers: 2 }));
}

report(main());
