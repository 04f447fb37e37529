'use strict';

// Runs scenarios side by side under Node 24: each scenario is one async
// function `(db) => result` written against the API both share, run once
// on a node:sqlite DatabaseSync and once on an offloop Database (awaiting
// a value node:sqlite returns synchronously is harmless). Outcomes are
// encoded type by type so the test can compare them as JSON. This file
// only runs and encodes; what must be equal is decided by the test.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../index.js');

function protoName(o) {
  const p = Object.getPrototypeOf(o);
  if (p === null) return 'null';
  return p.constructor?.name ?? '?';
}

/** JSON-safe and type preserving. */
function enc(v) {
  if (v === undefined) return { $undefined: true };
  if (v === null) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : { $num: String(Object.is(v, -0) ? '-0' : v) };
    case 'bigint':
      return { $bigint: v.toString() };
    case 'function':
      return { $function: v.name };
    case 'symbol':
      return { $symbol: String(v) };
  }
  if (v instanceof Error) {
    const out = { $error: v.name, message: v.message };
    for (const key of ['code', 'errcode', 'errstr']) if (v[key] !== undefined) out[key] = enc(v[key]);
    return out;
  }
  if (ArrayBuffer.isView(v)) return { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex'), ctor: protoName(v) };
  if (Array.isArray(v)) return v.map(enc);
  const out = {};
  for (const key of Object.keys(v)) out[key] = enc(v[key]);
  return { $obj: out, proto: protoName(v) };
}

async function outcome(fn) {
  try {
    return { value: enc(await fn()) };
  } catch (err) {
    return { threw: enc(err) };
  }
}

/**
 * Runs every scenario (`{ name: async (db) => result }`) both ways; the
 * offloop side opens a file database with `options` (readers by default),
 * so reads run on reader threads. Resolves to `[{ name, node, offloop }]`.
 */
async function compare(scenarios, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-parity-'));
  const results = [];
  try {
    let n = 0;
    for (const [name, scenario] of Object.entries(scenarios)) {
      const nodeDb = new DatabaseSync(':memory:');
      const node = await outcome(() => scenario(nodeDb));
      if (nodeDb.isOpen) nodeDb.close();
      const db = await Database.open(path.join(dir, `db-${++n}.db`), options);
      const offloop = await outcome(() => scenario(db));
      await db.close();
      results.push({ name, node, offloop });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/** Prints results for the test that runs the script, and fails on error. */
function report(results) {
  results.then(
    (r) => process.stdout.write(JSON.stringify(r)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

module.exports = { compare, enc, report };
