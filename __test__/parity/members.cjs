'use strict';

// Under Node 24: every public member of node:sqlite (module exports, and
// DatabaseSync, StatementSync, Session and SQLTagStore members, on the
// prototype or on instances), and which of those names offloop's
// counterparts have. members.test.mjs checks
// docs/node-sqlite.md against it.

const sqlite = require('node:sqlite');
const offloop = require('../../index.js');

const keyName = (k) => (typeof k === 'symbol' ? k.toString() : k);

function members(instance) {
  const names = new Set();
  for (const k of Reflect.ownKeys(Object.getPrototypeOf(instance))) names.add(keyName(k));
  for (const k of Reflect.ownKeys(instance)) names.add(keyName(k));
  names.delete('constructor');
  for (const name of [...names]) if (name.startsWith('Symbol(sqlite-')) names.delete(name);
  return [...names];
}

function has(instance, name) {
  if (name === 'Symbol(Symbol.dispose)') return Symbol.dispose in instance;
  if (name === 'Symbol(Symbol.asyncDispose)') return Symbol.asyncDispose in instance;
  return name in instance;
}

async function main() {
  const db = new sqlite.DatabaseSync(':memory:');
  const node = {
    module: Object.keys(sqlite),
    DatabaseSync: members(db),
    StatementSync: members(db.prepare('SELECT 1')),
    Session: members(db.createSession()),
    SQLTagStore: members(db.createTagStore()),
  };
  db.close();
  const odb = await offloop.Database.open(':memory:');
  const counterparts = {
    module: offloop,
    DatabaseSync: odb,
    StatementSync: odb.prepare('SELECT 1'),
    Session: odb.createSession(),
    SQLTagStore: odb.createTagStore(),
  };
  const present = {};
  for (const [cls, names] of Object.entries(node)) {
    present[cls] = names.filter((n) => counterparts[cls] !== null && has(counterparts[cls], n));
  }
  await odb.close();
  process.stdout.write(JSON.stringify({ node, present }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
