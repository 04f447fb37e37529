'use strict';

// Child process of fuzz.test.mjs; needs Node 24 (node:sqlite).
// Makes a seeded stream of random calls: random SQL (templates and token
// soup), random parameter shapes and values of every JS type (huge strings
// and blobs, proxies, throwing getters, detached buffers, sparse arrays),
// and random misuse of the API (batches, exec, options, setters). Each call
// that node:sqlite can make too runs on both, on the same schema and data.
//
// The rules, checked here and reported as one JSON document on stdout:
// - every offloop call settles: it returns or resolves, or throws or
//   rejects an Error with a string `code` (or the fuzzer's own error,
//   thrown by a getter or a proxy trap, passed through as is);
// - where node:sqlite accepts the input, offloop resolves to the same
//   value, type for type;
// - where node:sqlite refuses it, offloop refuses it too.
// Refusals whose codes differ are counted, not failed: node:sqlite
// compiles SQL in prepare() and checks named values key by key, offloop
// refuses an unbindable argument before any SQLite work (see
// parity/differential.test.mjs). OFFLOOP_FUZZ_SHOW_DISAGREEMENTS=1 lists them.
// Arguments: seed, calls.

const util = require('node:util');
const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../../index.js');

const [seed, calls] = [Number(process.argv[2]), Number(process.argv[3])];

const { seededRandom: random } = require('../seeded-random.cjs');
const rnd = random(seed);
const int = (n) => Math.floor(rnd() * n);
const pick = (list) => list[int(list.length)];

/** Thrown by the fuzzer's own getters and traps; passes through unchanged. */
const OWN = new Error('thrown by the fuzzer');

/** `view` with its buffer detached (transferred away). */
function detach(view) {
  const buffer = ArrayBuffer.isView(view) ? view.buffer : view;
  structuredClone(buffer, { transfer: [buffer] });
  return view;
}

const HUGE = 3 * 1024 * 1024;

// Values of every JS type, each made fresh (a detached buffer cannot be
// shared between the two libraries' calls).
const VALUES = [
  () => undefined,
  () => null,
  () => rnd() < 0.5,
  () => 0,
  () => -0,
  () => int(1000) - 500,
  () => rnd() * 1e6 - 5e5,
  () => pick([NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER + 2, 2 ** 63, -(2 ** 63), Number.MIN_VALUE]),
  () => BigInt(int(1000) - 500),
  () => pick([2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n, -(2n ** 100n)]),
  () => '',
  () => pick(['a', 'hello', 'héllo', '日本語', '😀', '\u0000x', 'a\u0000b', '\ud800', 'x\udfffy', "it's", '?', ':a']),
  () => 'x'.repeat(int(5000)),
  () => (rnd() < 0.2 ? 'h'.repeat(HUGE + int(1000)) : 's'.repeat(int(100))),
  () => Symbol('s'),
  () => () => 1,
  () => ({}),
  () => ({ a: 1 }),
  () => [1, 2],
  () => [, 1],
  () => new Array(3),
  () => new Date(0),
  () => new Map([[1, 2]]),
  () => /re/,
  () => Promise.resolve(1),
  () => new Uint8Array([1, 2, 3]),
  () => new Uint8Array(0),
  () => Buffer.from('buf'),
  () => new Int16Array([-1, 2]),
  () => new Float64Array([1.5]),
  () => new BigInt64Array([5n]),
  () => new Uint8ClampedArray([300]),
  () => new DataView(new ArrayBuffer(4), 1, 2),
  () => new ArrayBuffer(3),
  () => new ArrayBuffer(0),
  () => new SharedArrayBuffer(2),
  () => new SharedArrayBuffer(0),
  () => detach(new ArrayBuffer(16)),
  () => detach(new Uint8Array(16)),
  () => new Uint8Array(new ArrayBuffer(8), 2, 4),
  () => (rnd() < 0.2 ? new Uint8Array(HUGE + int(1000)).fill(9) : new Uint8Array(int(64))),
  () => new Proxy({}, {}),
  () => new Proxy(new Uint8Array(2), {}),
  () => ({ get a() { throw OWN; } }),
  () => Object.create(null),
];

const value = () => pick(VALUES)();

const NAMES = ['a', '$a', ':a', '@a', 'b', '$b', 'x', '1', '', 'constructor', '__proto__'];

/** A named-parameter object of random keys, sometimes hostile. */
function named() {
  const kind = int(10);
  if (kind === 0) {
    return new Proxy({ a: 1 }, { ownKeys() { throw OWN; } });
  }
  if (kind === 1) {
    return new Proxy({ a: 1, b: 2 }, {
      get(target, key) {
        if (key === 'b') throw OWN;
        return target[key];
      },
    });
  }
  if (kind === 2) {
    const o = { a: 1 };
    Object.defineProperty(o, 'b', { enumerable: true, get() { throw OWN; } });
    return o;
  }
  const o = {};
  // Own data properties, '__proto__' included (an assignment would set
  // the prototype instead).
  for (let i = int(4); i > 0; i--) {
    Object.defineProperty(o, pick(NAMES), { value: value(), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/** A call's arguments: positional values, or a named object and then values. */
function args() {
  const out = [];
  if (rnd() < 0.35) out.push(named());
  for (let i = int(5); i > 0; i--) out.push(value());
  if (rnd() < 0.05) delete out[int(out.length)]; // a hole
  return out;
}

const TEMPLATES = [
  'SELECT ? AS v',
  'SELECT ?, ?',
  'SELECT ?1 AS x, ?2 AS y, ?1 AS z',
  'SELECT :a AS a',
  'SELECT $a AS a, :b AS b',
  'SELECT :a, $a, @a',
  'SELECT ?, :a AS a, ?',
  'SELECT ?5 AS v',
  'SELECT typeof(?) AS t, length(?) AS l',
  'SELECT hex(?) AS h',
  'SELECT length(?) AS l',
  'SELECT * FROM t WHERE a = ?',
  'SELECT a, b FROM t ORDER BY rowid LIMIT ?',
  'SELECT count(*) AS n FROM t WHERE b > ?',
  'INSERT INTO t(a, b) VALUES (?, ?)',
  'UPDATE t SET b = ? WHERE a = ?',
  'SELECT 1 AS one; SELECT 2',
  'SELECT ?; SELECT ?',
  'VALUES (?), (?)',
  'WITH x(v) AS (SELECT ?) SELECT v FROM x',
  'SELECT 9223372036854775807 AS big',
  "SELECT x'00ff' AS b, 1.5 AS r, NULL AS n, 'txt' AS s",
  'SELECT a FROM t',
  '',
  '   ',
  '-- only a comment',
  'SELEC 1',
  'SELECT * FROM missing',
  'SELECT ?0',
  'SELECT ?40000',
];

const TOKENS = ['SELECT', '?', ':a', '$b', ',', '(', ')', '1', "'s'", 'FROM', 't', 'WHERE', '=', 'AND', '*', 'x', ';', '--', 'NULL', 'ORDER', 'BY', 'a', 'LIMIT', '||', 'CAST', 'AS', 'INTEGER', '"q"', '/*', '*/', '\0'];

function sql() {
  if (rnd() < 0.8) return pick(TEMPLATES);
  return Array.from({ length: 1 + int(8) }, () => pick(TOKENS)).join(' ');
}

// ---------------------------------------------------------------------------
// Outcomes, encoded type by type so they compare.

function enc(v) {
  if (v === undefined) return { $undefined: true };
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Object.is(v, -0) ? { $num: '-0' } : Number.isNaN(v) ? { $num: 'NaN' } : v;
  if (typeof v === 'bigint') return { $bigint: String(v) };
  if (ArrayBuffer.isView(v)) return { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex'), ctor: v.constructor.name };
  if (Array.isArray(v)) return v.map(enc);
  const out = { $proto: Object.getPrototypeOf(v) === null ? 'null' : 'Object' };
  for (const k of Object.keys(v)) out[k] = enc(v[k]);
  return out;
}

function errorOf(err) {
  if (err === OWN) return { own: true };
  // A cancelled call rejects with its signal's reason: a DOMException.
  const coded = typeof err?.code === 'string' || (err instanceof DOMException && ['AbortError', 'TimeoutError'].includes(err.name));
  return { error: true, coded: coded && err instanceof Error, code: err?.code, message: err?.message };
}

function runNode(db, text, method, params) {
  try {
    const stmt = db.prepare(text);
    if (method === 'iterate') return { value: enc([...stmt.iterate(...params)]) };
    if (method === 'columns') return { value: enc(stmt.columns()) };
    return { value: enc(stmt[method](...params)) };
  } catch (err) {
    return errorOf(err);
  }
}

async function runOffloop(db, text, method, params) {
  try {
    const stmt = db.prepare(text);
    if (method === 'iterate') {
      const rows = [];
      for await (const row of stmt.iterate(...params)) rows.push(row);
      return { value: enc(rows) };
    }
    if (method === 'columns') return { value: enc(await stmt.columns()) };
    return { value: enc(await stmt[method](...params)) };
  } catch (err) {
    return errorOf(err);
  }
}

// ---------------------------------------------------------------------------
// Misuse only offloop has (batches, options): it must settle, coded.

async function misuse(db) {
  const kind = int(6);
  if (kind === 0) {
    const entries = [];
    for (let i = int(4); i > 0; i--) {
      entries.push(pick([() => [sql(), args()], () => [sql()], () => sql(), () => value(), () => [value(), value()], () => [db.prepare(sql()), args()]])());
    }
    if (rnd() < 0.2) entries.length += 2; // trailing holes
    if (rnd() < 0.2) delete entries[0];
    return db.batch(pick([entries, entries, value()]));
  }
  if (kind === 1) return db.exec(pick([sql, value])(), pick([undefined, {}, value()]));
  if (kind === 2) return db.prepare(pick([sql, value])(), pick([undefined, {}, named(), value()]));
  if (kind === 3) {
    const stmt = db.prepare(sql());
    const setter = pick(['setReadBigInts', 'setReturnArrays', 'setAllowBareNamedParameters', 'setAllowUnknownNamedParameters']);
    stmt[setter](pick([true, false, value()]));
    return stmt.withOptions(pick([{}, { timeout: int(3) }, { signal: AbortSignal.abort() }, value()])).get(...args());
  }
  if (kind === 4) return db.read(pick([async (r) => r.prepare(sql()).all(...args()), value()]));
  const other = await Database.open(':memory:', pick([{}, { readers: value() }, { timeout: value() }, named(), value()]));
  await other.close();
  return undefined;
}

/** The arguments, for a failure report (a proxy may refuse to be inspected). */
function describe(params) {
  return params.map((p) => {
    try {
      return util.inspect(p, { depth: 1, maxStringLength: 40, maxArrayLength: 8, showProxy: true });
    } catch {
      return typeof p;
    }
  });
}

async function main() {
  const setup = 'CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2), (2, 3.5), (3, \'x\'), (NULL, x\'01\')';
  const node = new DatabaseSync(':memory:');
  node.exec(setup);
  const off = await Database.open(':memory:');
  await off.exec(setup);
  // Misuse has no node:sqlite twin: it gets a database of its own, so what
  // it writes never makes the two compared databases differ.
  const scratch = await Database.open(':memory:');
  await scratch.exec(setup);
  const counts = { calls: 0, compared: 0, valid: 0, refused: 0, misuse: 0, codeAgrees: 0 };
  const failures = [];
  const fail = (what, detail) => {
    if (failures.length < 20) failures.push({ what, ...detail });
  };
  for (let i = 0; i < calls; i++) {
    counts.calls += 1;
    if (rnd() < 0.15) {
      counts.misuse += 1;
      let outcome;
      try {
        outcome = await misuse(scratch).then(() => ({ value: true }), errorOf);
      } catch (err) {
        outcome = errorOf(err);
      }
      if (outcome.error && !outcome.coded) fail('misuse without a coded Error', { outcome });
      continue;
    }
    const text = sql();
    const method = pick(['run', 'get', 'all', 'all', 'iterate', 'columns']);
    const params = method === 'columns' ? [] : args();
    const nodeOutcome = runNode(node, text, method, params);
    const offOutcome = await runOffloop(off, text, method, params);
    counts.compared += 1;
    const where = { i, sql: text, method, params: describe(params) };
    if (offOutcome.error && !offOutcome.coded) {
      fail('an error without a code', { ...where, offloop: offOutcome });
    }
    if ('value' in nodeOutcome) {
      counts.valid += 1;
      if (!('value' in offOutcome) || !util.isDeepStrictEqual(nodeOutcome.value, offOutcome.value)) {
        fail('valid input, different result', { ...where, node: nodeOutcome, offloop: offOutcome });
      }
    } else {
      counts.refused += 1;
      if ('value' in offOutcome) fail('node:sqlite refused, offloop accepted', { ...where, node: nodeOutcome, offloop: offOutcome });
      else if (nodeOutcome.code === offOutcome.code || (nodeOutcome.own && offOutcome.own)) counts.codeAgrees += 1;
      else if (process.env.OFFLOOP_FUZZ_SHOW_DISAGREEMENTS && failures.length < 20) failures.push({ what: 'codes differ', ...where, node: nodeOutcome, offloop: offOutcome });
    }
  }
  await off.close();
  await scratch.close();
  node.close();
  process.stdout.write(JSON.stringify({ seed, counts, failures }, (k, v) => (typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…` : v)));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
