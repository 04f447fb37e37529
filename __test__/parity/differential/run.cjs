'use strict';

// Child process of differential.test.mjs; needs a Node with `node:sqlite`
// (Node 24). Runs every case of cases.cjs once on node:sqlite and once on
// offloop, encodes both outcomes type-preservingly, normalises the intended
// differences (listed in differential.test.mjs) and prints one JSON document:
//   { node, sqlite, results: [{ name, group, node, offloop }] }
// Argument: an optional substring; only cases whose name contains it run.
// OFFLOOP_DIFFERENTIAL_TRACE=1 prints each case's name to stderr first.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../../index.js');
const cases = require('./cases.cjs');

// ---------------------------------------------------------------------------
// Encoding: JSON-safe and type preserving.
//   string / boolean / null / finite non-(-0) number: as is
//   {$undefined} {$num: 'NaN'|'Infinity'|'-Infinity'|'-0'} {$bigint: '12'}
//   {$bytes: hex, ctor, byteOffset, bufferLength}   any ArrayBufferView
//   {$arraybuffer: hex}                             ArrayBuffer
//   arrays element-wise (with their prototype when it is not Array's)
//   {$obj: {...own string keys in order}, proto: 'null'|'Object'|ctor name}

function protoName(o) {
  const p = Object.getPrototypeOf(o);
  if (p === null) return 'null';
  if (p === Object.prototype) return 'Object';
  if (p === Array.prototype) return 'Array';
  return (p.constructor && p.constructor.name) || '?';
}

function enc(v, seen = new Set()) {
  if (v === undefined) return { $undefined: true };
  if (v === null) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (Number.isNaN(v)) return { $num: 'NaN' };
      if (v === Infinity) return { $num: 'Infinity' };
      if (v === -Infinity) return { $num: '-Infinity' };
      if (Object.is(v, -0)) return { $num: '-0' };
      return v;
    case 'bigint':
      return { $bigint: v.toString() };
    case 'symbol':
      return { $symbol: String(v) };
    case 'function':
      return { $function: v.name };
  }
  if (v instanceof Error) return { $error: encError(v) };
  if (ArrayBuffer.isView(v)) {
    return {
      $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex'),
      ctor: protoName(v),
      byteOffset: v.byteOffset,
      bufferLength: v.buffer.byteLength,
    };
  }
  if (v instanceof ArrayBuffer) return { $arraybuffer: Buffer.from(v).toString('hex') };
  if (seen.has(v)) return { $cycle: true };
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      const items = v.map((x) => enc(x, seen));
      return protoName(v) === 'Array' ? items : { $array: items, proto: protoName(v) };
    }
    // A null-prototype holder keeps an own "__proto__" key as data.
    const out = Object.create(null);
    for (const k of Reflect.ownKeys(v)) {
      if (typeof k === 'symbol') continue;
      const d = Object.getOwnPropertyDescriptor(v, k);
      out[k] = 'value' in d ? enc(d.value, seen) : { $accessor: true };
    }
    return { $obj: out, proto: protoName(v) };
  } finally {
    seen.delete(v);
  }
}

// offloop-only error properties, not compared (see the test's header).
const EXTRA_ERROR_KEYS = new Set(['sqliteCode']);

function encError(e) {
  if (!(e instanceof Error)) return { thrownNonError: enc(e) };
  const out = {
    string: String(e),
    name: e.name,
    ctor: e.constructor && e.constructor.name,
    isErrorPrototype: Object.getPrototypeOf(e) === Error.prototype,
    code: e.code === undefined ? { $undefined: true } : e.code,
    message: e.message,
  };
  if ('errcode' in e) out.errcode = e.errcode;
  if ('errstr' in e) out.errstr = e.errstr;
  out.ownKeys = Reflect.ownKeys(e).filter((k) => typeof k === 'string' && !EXTRA_ERROR_KEYS.has(k));
  out.enumerableKeys = Object.keys(e).filter((k) => !EXTRA_ERROR_KEYS.has(k));
  return out;
}

// ---------------------------------------------------------------------------
// The two libraries behind one small interface. Scripts and cases await
// every call, which is a no-op on node:sqlite's plain return values.

function nodeLib() {
  const opened = [];
  return {
    name: 'node',
    Database: DatabaseSync,
    async open(...args) {
      const db = new DatabaseSync(...args);
      opened.push(db);
      return db;
    },
    create(...args) {
      const db = new DatabaseSync(...args);
      opened.push(db);
      return db;
    },
    async closeAll() {
      for (const db of opened) {
        try {
          if (db.isOpen) db.close();
        } catch {}
      }
    },
  };
}

function offloopLib() {
  const opened = [];
  return {
    name: 'offloop',
    Database,
    async open(...args) {
      const db = new Database(...args);
      opened.push(db);
      return db.ready;
    },
    create(...args) {
      const db = new Database(...args);
      opened.push(db);
      return db;
    },
    async closeAll() {
      for (const db of opened) await db.close().catch(() => {});
    },
  };
}

/** Rows of a sync (node:sqlite) or async (offloop) iterator. */
async function collect(iterator) {
  const rows = [];
  for (;;) {
    const step = await iterator.next();
    if (step.done) return rows;
    rows.push(step.value);
  }
}

async function runScript(lib, c, tmp) {
  let phase = 'open';
  try {
    const location = c.location ? c.location(tmp) : ':memory:';
    const db = c.db !== undefined ? await lib.open(location, c.db) : await lib.open(location);
    phase = 'setup';
    for (const sql of c.setup ?? []) await db.exec(sql);
    phase = 'execute';
    const result = await c.script({
      db,
      tmp,
      collect,
      Database: lib.Database,
      open: lib.open,
      create: lib.create,
      lib: lib.name,
    });
    return { ok: true, result: enc(result) };
  } catch (error) {
    return { ok: false, phase, error: encError(error) };
  }
}

async function runStatement(lib, c, tmp) {
  let phase = 'open';
  let sync = null;
  try {
    const location = c.location ? c.location(tmp) : ':memory:';
    const db = c.db !== undefined ? await lib.open(location, c.db) : await lib.open(location);
    phase = 'setup';
    for (const sql of c.setup ?? []) await db.exec(sql);
    phase = 'prepare';
    const stmt = c.prepare !== undefined ? db.prepare(c.sql, c.prepare) : db.prepare(c.sql);
    const method = c.method ?? 'all';
    const call = async () => {
      const args = c.args ? c.args() : [];
      sync = true;
      if (method === 'iterate') {
        const it = stmt.iterate(...args);
        sync = false;
        return collect(it);
      }
      const pending = stmt[method](...args);
      sync = false;
      return await pending;
    };
    if (c.warm) {
      // Run once and ignore the outcome: on a file database the second call
      // of a query goes to a reader thread.
      await call().catch(() => {});
    }
    if (c.prime) {
      // Run once with no arguments, so the statement has been prepared.
      try {
        await stmt.all();
      } catch {}
    }
    phase = 'configure';
    for (const [name, ...args] of c.calls ?? []) await stmt[name](...args);
    phase = 'execute';
    const result = await call();
    const out = { ok: true, result: enc(result) };
    if (c.post) {
      phase = 'post';
      sync = null;
      out.post = enc(await c.post({ db, stmt, result }));
    }
    return out;
  } catch (error) {
    const out = { ok: false, phase, error: encError(error) };
    if (phase === 'execute') out.sync = sync;
    return out;
  }
}

// ---------------------------------------------------------------------------
// Normalising node:sqlite's outcome to what offloop promises:
// - SQL is compiled on the first call, so an error node:sqlite throws from
//   prepare() (a SQLite error, or "contains no statements") is offloop's
//   rejected first call.
// - Calls return promises. Argument errors of run/get/all/iterate
//   (ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE) throw synchronously;
//   every other execute error is a rejection.

const NO_STATEMENTS = 'The SQL query contains no statements.';
const SYNC_CODES = new Set(['ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE']);

function normaliseNode(out, c) {
  if (out.ok || c.script) return out;
  const err = out.error;
  if (out.phase === 'prepare' && (err.code === 'ERR_SQLITE_ERROR' || err.message === NO_STATEMENTS)) {
    return { ...out, phase: 'execute', sync: false };
  }
  // Exceptions of user code (a getter of a named-parameter object) pass
  // through both libraries, synchronously.
  if (out.phase === 'execute') return { ...out, sync: SYNC_CODES.has(err.code) || err.code?.$undefined === true };
  return out;
}

async function main() {
  const filter = process.argv[2] ?? '';
  const results = [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-differential-'));
  try {
    let n = 0;
    for (const c of cases) {
      if (!c.name.includes(filter)) continue;
      const run = c.script ? runScript : runStatement;
      const outcomes = {};
      if (process.env.OFFLOOP_DIFFERENTIAL_TRACE) process.stderr.write(`${c.name}\n`);
      for (const lib of [nodeLib(), offloopLib()]) {
        const tmp = path.join(root, `${n++}`);
        fs.mkdirSync(tmp);
        outcomes[lib.name] = await run(lib, c, tmp);
        await lib.closeAll();
      }
      results.push({
        name: c.name,
        group: c.group,
        node: normaliseNode(outcomes.node, c),
        offloop: outcomes.offloop,
      });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  process.stdout.write(
    JSON.stringify({ node: process.version, sqlite: process.versions.sqlite, results }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
