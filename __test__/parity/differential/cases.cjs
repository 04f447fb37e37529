'use strict';

// Differential cases: each runs on node:sqlite and on offloop (run.cjs) and
// the outcomes must be equal. A case is either
//   { name, db?, location?, setup?, sql, prepare?, calls?, method?, args?, post?, warm? }
//     db       options object for the database (absent: opened with a path only)
//     location (tmpDir) => path; absent: ':memory:'
//     setup    SQL strings run with db.exec() first
//     sql      prepared with db.prepare(sql[, prepare])
//     calls    [[methodName, ...args]] called on the statement before the call
//     method   'get' | 'all' (default) | 'run' | 'iterate' | 'columns'
//     args     () => [...arguments]  (a function, so each library gets fresh values)
//     post     async ({ db, stmt, result }) => extra value to compare
//     warm     call once first with the same arguments and ignore the outcome
//     prime    call all() once first with no arguments and ignore the outcome
// or
//   { name, db?, location?, setup?, script: async ({ db, tmp, collect, open, create, Database, lib }) => value }
//     `await` every database call: it is a no-op for node:sqlite.
// Every case gets a `group` (the part of its name before the first '/').

const cases = [];
const add = (c) => {
  cases.push({ group: c.name.split('/')[0], ...c });
};

const T = 'CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)';
const count = (table) => async ({ db }) => db.prepare(`SELECT count(*) AS n FROM ${table}`).get();
const fileDb = (tmp) => `${tmp}/db.sqlite`;

// ---------------------------------------------------------------------------
// Reading values

add({ name: 'read/int-small', sql: 'SELECT 42 AS v', method: 'get' });
add({ name: 'read/int-negative', sql: 'SELECT -7 AS v', method: 'get' });
add({ name: 'read/int-zero', sql: 'SELECT 0 AS v, -0 AS w', method: 'get' });
add({ name: 'read/int-max-safe', sql: 'SELECT 9007199254740991 AS v', method: 'get' });
add({ name: 'read/int-min-safe', sql: 'SELECT -9007199254740991 AS v', method: 'get' });
add({ name: 'read/int-unsafe-get', sql: 'SELECT 9007199254740992 AS v', method: 'get' });
add({ name: 'read/int-unsafe-negative', sql: 'SELECT -9007199254740992 AS v', method: 'get' });
add({ name: 'read/int-unsafe-all', sql: 'SELECT 1 AS a, 9223372036854775807 AS v', method: 'all' });
add({ name: 'read/int-unsafe-iterate', sql: 'SELECT 9223372036854775807 AS v', method: 'iterate' });
add({ name: 'read/int-unsafe-second-row', sql: 'SELECT 1 AS v UNION ALL SELECT 9007199254740993', method: 'all' });
add({ name: 'read/int-unsafe-second-row-get', sql: 'SELECT 1 AS v UNION ALL SELECT 9007199254740993', method: 'get' });
add({ name: 'read/int-unsafe-in-run', sql: 'SELECT 9007199254740993 AS v', method: 'run' });
add({ name: 'read/int-min-int64-literal-is-real', sql: 'SELECT -9223372036854775808 AS v, typeof(-9223372036854775808) AS t', method: 'get' });
add({ name: 'read/int-min-int64', sql: 'SELECT -9223372036854775807 - 1 AS v', method: 'get' });
add({ name: 'read/int-min-int64-bigint', sql: 'SELECT -9223372036854775807 - 1 AS v', method: 'get', calls: [['setReadBigInts', true]] });
add({
  name: 'read/readBigInts-stmt',
  sql: "SELECT 1 AS a, 9223372036854775807 AS b, -9223372036854775807 - 1 AS c, 1.5 AS d, 'x' AS e, NULL AS f, x'01' AS g, 2.0 AS h",
  calls: [['setReadBigInts', true]],
  method: 'get',
});
add({ name: 'read/readBigInts-all', sql: 'SELECT 1 AS a UNION ALL SELECT 9007199254740993', calls: [['setReadBigInts', true]], method: 'all' });
add({ name: 'read/readBigInts-iterate', sql: 'SELECT 1 AS a UNION ALL SELECT 9007199254740993', calls: [['setReadBigInts', true]], method: 'iterate' });
add({ name: 'read/readBigInts-off-again', sql: 'SELECT 5 AS a', calls: [['setReadBigInts', true], ['setReadBigInts', false]], method: 'get' });
add({ name: 'read/readBigInts-dbopt', db: { readBigInts: true }, sql: 'SELECT 5 AS a, 2.0 AS b', method: 'get' });
add({ name: 'read/readBigInts-prepareopt', sql: 'SELECT 5 AS a', prepare: { readBigInts: true }, method: 'get' });
add({ name: 'read/readBigInts-stmt-overrides-db', db: { readBigInts: true }, sql: 'SELECT 5 AS a', calls: [['setReadBigInts', false]], method: 'get' });
add({ name: 'read/readBigInts-prepare-overrides-db', db: { readBigInts: true }, sql: 'SELECT 5 AS a', prepare: { readBigInts: false }, method: 'get' });
add({ name: 'read/readBigInts-stmt-overrides-prepare', sql: 'SELECT 5 AS a', prepare: { readBigInts: true }, calls: [['setReadBigInts', false]], method: 'get' });
add({ name: 'read/real', sql: 'SELECT 1.5 AS a, 1.0 AS b, -0.0 AS c, 1e308 AS d, 2.5e-324 AS e, -1.25 AS f', method: 'get' });
add({ name: 'read/real-negative-zero-computed', sql: 'SELECT -1.0 * 0.0 AS v, 0.0 * -1 AS w', method: 'get' });
add({ name: 'read/real-integer-valued', sql: 'SELECT CAST(3 AS REAL) AS v, typeof(CAST(3 AS REAL)) AS t', method: 'get' });
add({ name: 'read/real-inf', sql: 'SELECT 9e999 AS a, -9e999 AS b', method: 'get' });
add({ name: 'read/real-nan-is-null', sql: 'SELECT (9e999 - 9e999) AS v, typeof(9e999 - 9e999) AS t', method: 'get' });
add({ name: 'read/real-readBigInts-unaffected', sql: 'SELECT 2.0 AS r, 1e300 AS big', calls: [['setReadBigInts', true]], method: 'get' });
add({ name: 'read/real-beyond-int64', sql: 'SELECT 9223372036854775807 + 1 AS v, typeof(9223372036854775807 + 1) AS t', method: 'get' });
add({ name: 'read/text', sql: "SELECT 'héllo ✓ 😀' AS v", method: 'get' });
add({ name: 'read/text-empty', sql: "SELECT '' AS v", method: 'get' });
add({ name: 'read/text-embedded-nul', sql: "SELECT 'a' || char(0) || 'b' AS v, length('a' || char(0) || 'b') AS n", method: 'get' });
add({ name: 'read/text-invalid-utf8', sql: "SELECT CAST(x'61ff62' AS TEXT) AS v", method: 'get' });
add({ name: 'read/text-truncated-utf8', sql: "SELECT CAST(x'61e282' AS TEXT) AS v, CAST(x'c0af' AS TEXT) AS w, CAST(x'eda080' AS TEXT) AS s", method: 'get' });
add({ name: 'read/text-utf16-db', setup: ["PRAGMA encoding = 'UTF-16le'", 'CREATE TABLE s(v)', "INSERT INTO s VALUES ('héllo 😀')"], sql: 'SELECT v FROM s', method: 'get' });
add({ name: 'read/text-long', sql: "SELECT length(v) AS n, substr(v, 1, 3) AS head, v FROM (SELECT printf('%.*c', 100000, 'y') AS v)", method: 'get' });
add({ name: 'read/blob', sql: "SELECT x'00ff10' AS v", method: 'get' });
add({ name: 'read/blob-empty', sql: "SELECT x'' AS v, zeroblob(0) AS z", method: 'get' });
add({ name: 'read/blob-zeroblob', sql: 'SELECT zeroblob(3) AS v', method: 'get' });
add({ name: 'read/blob-all', sql: "SELECT x'01' AS v UNION ALL SELECT x'0203'", method: 'all' });
add({
  name: 'read/blob-shape',
  sql: "SELECT x'0102' AS b",
  method: 'get',
  post: async ({ result }) => [
    result.b.constructor.name,
    Object.getPrototypeOf(result.b) === Uint8Array.prototype,
    Buffer.isBuffer(result.b),
    result.b.byteOffset,
    result.b.buffer.byteLength,
    result.b.buffer.constructor.name,
  ],
});
add({ name: 'read/null', sql: 'SELECT NULL AS v', method: 'get' });
add({ name: 'read/row-proto', sql: 'SELECT 1 AS a', method: 'all' });
add({ name: 'read/rows-are-distinct-objects', sql: 'SELECT 1 AS a UNION ALL SELECT 1', method: 'all', post: async ({ result }) => result[0] !== result[1] });
add({ name: 'read/returnArrays-stmt', sql: 'SELECT 1 AS a, 2 AS a, NULL AS c', calls: [['setReturnArrays', true]], method: 'all' });
add({ name: 'read/returnArrays-get', sql: 'SELECT 1 AS a, 2 AS b', calls: [['setReturnArrays', true]], method: 'get' });
add({ name: 'read/returnArrays-get-no-row', sql: 'SELECT 1 AS a WHERE 0', calls: [['setReturnArrays', true]], method: 'get' });
add({ name: 'read/returnArrays-iterate', sql: 'SELECT 1 AS a UNION ALL SELECT 2', calls: [['setReturnArrays', true]], method: 'iterate' });
add({ name: 'read/returnArrays-dbopt', db: { returnArrays: true }, sql: 'SELECT 1 AS a', method: 'get' });
add({ name: 'read/returnArrays-prepareopt', sql: 'SELECT 1 AS a', prepare: { returnArrays: true }, method: 'all' });
add({ name: 'read/returnArrays-prepare-overrides-db', db: { returnArrays: true }, sql: 'SELECT 1 AS a', prepare: { returnArrays: false }, method: 'get' });
add({ name: 'read/returnArrays-bigints', sql: 'SELECT 1 AS a, 2.5 AS b', calls: [['setReturnArrays', true], ['setReadBigInts', true]], method: 'iterate' });
add({ name: 'read/returnArrays-run', sql: 'SELECT 1 AS a', calls: [['setReturnArrays', true]], method: 'run' });
add({ name: 'read/duplicate-columns', sql: 'SELECT 1 AS a, 2 AS a, 3 AS b, 4 AS a', method: 'get' });
add({ name: 'read/duplicate-columns-all', sql: 'SELECT 1 AS a, 2 AS a UNION ALL SELECT 3, 4', method: 'all' });
add({
  name: 'read/duplicate-columns-join',
  setup: ["CREATE TABLE x(id, v); CREATE TABLE y(id, v); INSERT INTO x VALUES (1, 'x'); INSERT INTO y VALUES (1, 'y')"],
  sql: 'SELECT * FROM x JOIN y USING (id)',
  method: 'get',
});
add({
  name: 'read/duplicate-columns-join-star',
  setup: ["CREATE TABLE x(id, v); CREATE TABLE y(id, v); INSERT INTO x VALUES (1, 'x'); INSERT INTO y VALUES (2, 'y')"],
  sql: 'SELECT * FROM x, y',
  method: 'get',
});
add({ name: 'read/column-name-expression', db: { enableDoubleQuotedStringLiterals: true }, sql: 'SELECT 1+1, "a" || \'b\', count(*)', method: 'get' });
add({ name: 'read/column-name-numeric-keys-order', sql: 'SELECT 1 AS b, 2 AS "1", 3 AS a, 4 AS "0"', method: 'get', post: async ({ result }) => Object.keys(result) });
add({
  name: 'read/column-name-__proto__',
  sql: 'SELECT 1 AS __proto__, 2 AS constructor, 3 AS toString',
  method: 'get',
  post: async ({ result }) => [Object.getPrototypeOf(result), Object.keys(result), Object.getOwnPropertyDescriptor(result, '__proto__')],
});
add({ name: 'read/column-name-empty', sql: 'SELECT 1 AS ""', method: 'get', post: async ({ result }) => Object.keys(result) });
add({ name: 'read/column-name-unicode', sql: 'SELECT 1 AS "ключ", 2 AS "😀"', method: 'get' });
add({ name: 'read/get-no-row', setup: [T], sql: 'SELECT * FROM t', method: 'get' });
add({ name: 'read/all-no-row', setup: [T], sql: 'SELECT * FROM t', method: 'all' });
add({ name: 'read/iterate-no-row', setup: [T], sql: 'SELECT * FROM t', method: 'iterate' });
add({ name: 'read/get-first-of-many', sql: 'SELECT 1 AS v UNION ALL SELECT 2', method: 'get' });
add({ name: 'read/get-on-insert', setup: [T], sql: 'INSERT INTO t(a) VALUES (1)', method: 'get', post: count('t') });
add({ name: 'read/all-on-insert', setup: [T], sql: 'INSERT INTO t(a) VALUES (1)', method: 'all', post: count('t') });
add({ name: 'read/get-returning', setup: [T], sql: 'INSERT INTO t(a) VALUES (1), (2) RETURNING id, a', method: 'get', post: count('t') });
add({ name: 'read/all-returning', setup: [T], sql: 'INSERT INTO t(a) VALUES (1), (2) RETURNING id, a', method: 'all' });
add({ name: 'read/iterate-returning', setup: [T], sql: 'INSERT INTO t(a) VALUES (1), (2) RETURNING id, a', method: 'iterate', post: count('t') });
add({
  name: 'read/column-affinity',
  setup: ['CREATE TABLE n(i INTEGER, r REAL, t TEXT, b BLOB, x)', "INSERT INTO n VALUES ('12', 3, 45, 's', '1.0')"],
  sql: 'SELECT i, typeof(i) ti, r, typeof(r) tr, t, typeof(t) tt, b, typeof(b) tb, x, typeof(x) tx FROM n',
  method: 'get',
});
add({ name: 'read/many-rows', sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 700) SELECT x, x * 0.5 AS h, hex(x) AS s FROM c', method: 'all' });
add({ name: 'read/many-rows-iterate', sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 700) SELECT x FROM c', method: 'iterate' });
add({ name: 'read/all-error-midway-no-partial', sql: "SELECT json(x) AS j FROM (SELECT '{}' AS x UNION ALL SELECT '{bad')", method: 'all' });
add({ name: 'read/integer-valued-real-vs-int', sql: 'SELECT 2 AS i, 2.0 AS r, 2 = 2.0 AS same', calls: [['setReadBigInts', true]], method: 'get' });
add({ name: 'read/divide-by-zero-is-null', sql: 'SELECT 1 / 0 AS v, 1 % 0 AS m', method: 'get' });
add({ name: 'read/pragma', sql: 'PRAGMA foreign_keys', method: 'get' });
add({ name: 'read/values', sql: 'VALUES (1, 2), (3, 4)', method: 'all' });
add({
  name: 'read/stmt-reusable-after-range-error',
  script: async ({ db }) => {
    const s = db.prepare('SELECT 1 AS v UNION ALL SELECT 9007199254740993');
    let code;
    try {
      await s.all();
    } catch (e) {
      code = e.code;
    }
    s.setReadBigInts(true);
    return [code, await s.all()];
  },
});

// ---------------------------------------------------------------------------
// run() results

add({ name: 'run/insert', setup: [T], sql: 'INSERT INTO t(a) VALUES (?)', method: 'run', args: () => [1], post: async ({ result }) => [Object.getPrototypeOf(result) === Object.prototype, Object.keys(result)] });
add({ name: 'run/insert-multi', setup: [T, 'INSERT INTO t(a) VALUES (0)'], sql: 'INSERT INTO t(a) VALUES (1),(2),(3)', method: 'run' });
add({ name: 'run/insert-readBigInts', setup: [T], sql: 'INSERT INTO t(a) VALUES (1)', calls: [['setReadBigInts', true]], method: 'run' });
add({ name: 'run/insert-readBigInts-dbopt', db: { readBigInts: true }, setup: [T], sql: 'INSERT INTO t(a) VALUES (1)', method: 'run' });
add({ name: 'run/update', setup: [T, 'INSERT INTO t(a) VALUES (1),(2),(3)'], sql: 'UPDATE t SET b = 1 WHERE a >= 2', method: 'run' });
add({ name: 'run/update-readBigInts', setup: [T, 'INSERT INTO t(a) VALUES (1),(2),(3)'], sql: 'UPDATE t SET b = 1', calls: [['setReadBigInts', true]], method: 'run' });
add({ name: 'run/delete-none', setup: [T], sql: 'DELETE FROM t', method: 'run' });
add({ name: 'run/delete-all', setup: [T, 'INSERT INTO t(a) VALUES (1),(2)'], sql: 'DELETE FROM t', method: 'run' });
add({ name: 'run/select-stale-changes', setup: [T, 'INSERT INTO t(a) VALUES (1),(2)'], sql: 'SELECT * FROM t', method: 'run' });
add({ name: 'run/create-table', sql: 'CREATE TABLE z(a)', method: 'run' });
add({ name: 'run/large-rowid', setup: [T, 'INSERT INTO t(id) VALUES (9007199254740993)'], sql: 'INSERT INTO t(a) VALUES (1)', method: 'run' });
add({ name: 'run/large-rowid-bigint', setup: [T, 'INSERT INTO t(id) VALUES (9007199254740993)'], sql: 'INSERT INTO t(a) VALUES (1)', method: 'run', calls: [['setReadBigInts', true]] });
add({ name: 'run/unsafe-rowid-is-lossy', setup: [T], sql: 'INSERT INTO t(id) VALUES (9007199254740993)', method: 'run', post: async ({ result }) => result.lastInsertRowid === 9007199254740992 });
add({ name: 'run/int64-max-rowid', setup: [T], sql: 'INSERT INTO t(id) VALUES (9223372036854775807)', method: 'run' });
add({ name: 'run/negative-rowid', setup: [T], sql: 'INSERT INTO t(id) VALUES (-5)', method: 'run' });
add({ name: 'run/returning', setup: [T], sql: 'INSERT INTO t(a) VALUES (1) RETURNING *', method: 'run' });
add({ name: 'run/returning-multi', setup: [T], sql: 'INSERT INTO t(a) VALUES (1),(2),(3) RETURNING *', method: 'run', post: count('t') });
add({ name: 'run/without-rowid', setup: [T, 'INSERT INTO t(a) VALUES (1)', 'CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID'], sql: "INSERT INTO w VALUES ('k', 1)", method: 'run' });
add({ name: 'run/changes-after-exec', setup: [T, 'INSERT INTO t(a) VALUES (1),(2),(3)'], sql: 'SELECT 1', method: 'run' });
add({ name: 'run/twice', setup: [T], sql: 'INSERT INTO t(a) VALUES (?)', calls: [['run', 1]], method: 'run', args: () => [2] });
add({
  name: 'run/lastInsertRowid-after-failed-insert',
  setup: ['CREATE TABLE u(id INTEGER PRIMARY KEY, x UNIQUE)', 'INSERT INTO u(x) VALUES (1)'],
  script: async ({ db }) => {
    try {
      await db.prepare('INSERT INTO u(x) VALUES (1)').run();
    } catch {}
    return db.prepare('SELECT 1').run();
  },
});

// ---------------------------------------------------------------------------
// Binding one positional value: typeof(?1) and the value read back

const bindCase = (name, args) =>
  add({ name: `bind/${name}`, sql: 'SELECT typeof(?1) AS t, ?1 AS v', method: 'get', args });
bindCase('int-number', () => [1]);
bindCase('negative-int-number', () => [-5]);
bindCase('float-number', () => [1.5]);
bindCase('large-number', () => [2 ** 60]);
bindCase('max-safe-number', () => [Number.MAX_SAFE_INTEGER]);
bindCase('max-value', () => [Number.MAX_VALUE]);
bindCase('min-value', () => [Number.MIN_VALUE]);
bindCase('nan', () => [NaN]);
bindCase('infinity', () => [Infinity]);
bindCase('neg-infinity', () => [-Infinity]);
bindCase('neg-zero', () => [-0]);
bindCase('true', () => [true]);
bindCase('false', () => [false]);
bindCase('bigint', () => [5n]);
bindCase('bigint-zero', () => [0n]);
bindCase('bigint-negative', () => [-5n]);
bindCase('bigint-unsafe', () => [9007199254740993n]);
bindCase('bigint-int64-max', () => [9223372036854775807n]);
bindCase('bigint-int64-min', () => [-9223372036854775808n]);
bindCase('bigint-too-large', () => [9223372036854775808n]);
bindCase('bigint-too-small', () => [-9223372036854775809n]);
bindCase('bigint-huge', () => [2n ** 200n]);
bindCase('string', () => ['héllo']);
bindCase('string-empty', () => ['']);
bindCase('string-nul', () => ['a\u0000b']);
bindCase('string-lone-surrogate', () => ['\ud800x']);
bindCase('string-emoji', () => ['😀']);
bindCase('null', () => [null]);
bindCase('undefined', () => [undefined]);
bindCase('uint8array', () => [new Uint8Array([1, 2, 3])]);
bindCase('uint8array-empty', () => [new Uint8Array(0)]);
bindCase('uint8array-subarray', () => [new Uint8Array([1, 2, 3, 4]).subarray(1, 3)]);
bindCase('buffer', () => [Buffer.from('ab')]);
bindCase('buffer-pooled-slice', () => [Buffer.from('abcdef').subarray(2, 4)]);
bindCase('dataview', () => [new DataView(new Uint8Array([9, 8, 7]).buffer, 1)]);
bindCase('dataview-window', () => [new DataView(new Uint8Array([9, 8, 7, 6]).buffer, 1, 2)]);
bindCase('arraybuffer', () => [new Uint8Array([5, 6]).buffer]);
bindCase('arraybuffer-empty', () => [new ArrayBuffer(0)]);
bindCase('sharedarraybuffer', () => [new SharedArrayBuffer(2)]);
bindCase('int16array', () => [new Int16Array([1, -1])]);
bindCase('int16array-subarray', () => [new Int16Array([1, 2, 3]).subarray(1)]);
bindCase('uint16array', () => [new Uint16Array([258])]);
bindCase('int32array', () => [new Int32Array([-2])]);
bindCase('float32array', () => [new Float32Array([1.5])]);
bindCase('float64array', () => [new Float64Array([1])]);
bindCase('bigint64array', () => [new BigInt64Array([-1n])]);
bindCase('biguint64array', () => [new BigUint64Array([1n])]);
bindCase('uint8clampedarray', () => [new Uint8ClampedArray([255])]);
bindCase('int8array', () => [new Int8Array([-1])]);
// In first position any other object is a named-parameter map.
bindCase('date', () => [new Date(0)]);
bindCase('symbol', () => [Symbol('s')]);
bindCase('function', () => [() => 1]);
bindCase('function-with-key', () => [Object.assign(function f() {}, { x: 1 })]);
bindCase('class', () => [class K {}]);
bindCase('array', () => [[1]]);
bindCase('array-empty', () => [[]]);
bindCase('map', () => [new Map([['a', 1]])]);
bindCase('set', () => [new Set([1])]);
bindCase('regexp', () => [/x/]);
bindCase('error', () => [new Error('x')]);
bindCase('number-object', () => [new Number(1)]);
bindCase('string-object', () => [new String('s')]);
bindCase('string-object-empty', () => [new String('')]);
bindCase('boolean-object', () => [new Boolean(true)]);
bindCase('bigint-object', () => [Object(1n)]);
bindCase('symbol-object', () => [Object(Symbol('s'))]);
bindCase('promise', () => [Promise.resolve(1)]);
bindCase('weakmap', () => [new WeakMap()]);
bindCase('object-empty', () => [{}]);

add({ name: 'bind/object-as-second-arg', sql: 'SELECT typeof(?) AS t, ? AS v', method: 'get', args: () => [1, {}] });
add({ name: 'bind/object-as-second-arg-nonempty', sql: 'SELECT typeof(?) AS t, ? AS v', method: 'get', args: () => [1, { a: 1 }] });
add({ name: 'bind/bad-type-index-reported', sql: 'SELECT ?, ?, ?', method: 'get', args: () => [1, 2, Symbol()] });
add({ name: 'bind/bad-type-index-reported-numbered', sql: 'SELECT ?5', method: 'get', args: () => [1, 2, 3, 4, Symbol()] });
add({ name: 'bind/bad-type-index-after-named', sql: 'SELECT :a, ?, ?', method: 'get', args: () => [1, Symbol()] });
add({ name: 'bind/bad-type-index-after-named-map', sql: 'SELECT :a, ?, ?', method: 'get', args: () => [{ a: 1 }, 2, undefined] });
add({ name: 'bind/bad-type-index-gap', sql: 'SELECT ?3 AS a, :x AS b, ? AS c', method: 'get', args: () => [1, 2, 3, undefined] });
add({ name: 'bind/bad-type-beyond-params', sql: 'SELECT ? AS a', method: 'get', args: () => [1, undefined] });
add({ name: 'bind/bigint-too-large-second', sql: 'SELECT ?, ?', method: 'get', args: () => [1, 2n ** 63n] });
add({ name: 'bind/bigint-too-large-before-bad-type', sql: 'SELECT ?, ?', method: 'get', args: () => [2n ** 63n, Symbol()] });
add({ name: 'bind/bad-type-before-bigint-too-large', sql: 'SELECT ?, ?', method: 'get', args: () => [Symbol(), 2n ** 63n] });
add({ name: 'bind/bad-type-before-too-many', sql: 'SELECT ?', method: 'get', args: () => [1, 2, Symbol()] });
add({
  name: 'bind/into-columns',
  setup: ['CREATE TABLE n(i INTEGER, r REAL, x ANY, tx TEXT)'],
  sql: 'INSERT INTO n VALUES (?, ?, ?, ?)',
  method: 'run',
  args: () => [1, 2, 3, 4],
  post: async ({ db }) => db.prepare('SELECT i, typeof(i) ti, r, typeof(r) tr, x, typeof(x) tx_, tx, typeof(tx) ttx FROM n').get(),
});
add({ name: 'bind/into-strict-integer-column', setup: ['CREATE TABLE n(i INTEGER) STRICT'], sql: 'INSERT INTO n VALUES (?)', method: 'run', args: () => [1.5] });
add({ name: 'bind/into-strict-integer-column-ok', setup: ['CREATE TABLE n(i INTEGER) STRICT'], sql: 'INSERT INTO n VALUES (?)', method: 'run', args: () => [2], post: async ({ db }) => db.prepare('SELECT i, typeof(i) t FROM n').get() });
add({ name: 'bind/nan-into-notnull', setup: ['CREATE TABLE n(v NOT NULL)'], sql: 'INSERT INTO n VALUES (?)', method: 'run', args: () => [NaN] });
add({ name: 'bind/rebind-clears', sql: 'SELECT ? AS a, ? AS b', calls: [['get', 1, 2]], method: 'get' });
add({ name: 'bind/rebind-clears-named', sql: 'SELECT :a AS a, :b AS b', calls: [['get', { a: 1, b: 2 }]], method: 'get', args: () => [{ b: 3 }] });
add({ name: 'bind/float-roundtrip', sql: 'SELECT ? AS v', method: 'get', args: () => [0.1 + 0.2] });
add({ name: 'bind/number-large-int-roundtrip', sql: 'SELECT ? AS v, typeof(?1) t', method: 'get', args: () => [2 ** 53 + 2] });
add({ name: 'bind/first-arg-null-is-positional', sql: 'SELECT ? AS a, ? AS b', method: 'get', args: () => [null, 2] });
add({ name: 'bind/first-arg-undefined', sql: 'SELECT ? AS a', method: 'get', args: () => [undefined] });
add({ name: 'bind/two-objects', sql: 'SELECT :a AS a, ? AS b', method: 'get', args: () => [{ a: 1 }, { b: 2 }] });
add({ name: 'bind/bigint-int64-max-readBigInts', sql: 'SELECT ?1 AS v, typeof(?1) AS t', method: 'get', args: () => [9223372036854775807n], calls: [['setReadBigInts', true]] });
add({ name: 'bind/bigint-int64-min-readBigInts', sql: 'SELECT ?1 AS v', method: 'get', args: () => [-9223372036854775808n], calls: [['setReadBigInts', true]] });
add({
  name: 'bind/number-into-integer-col-becomes-unsafe',
  setup: ['CREATE TABLE n(i INTEGER)'],
  script: async ({ db }) => {
    await db.prepare('INSERT INTO n VALUES (?)').run(2 ** 53 + 2);
    try {
      return await db.prepare('SELECT i, typeof(i) t FROM n').get();
    } catch (e) {
      return [e.code, e.message];
    }
  },
});
add({
  name: 'bind/number-into-text-col',
  setup: ['CREATE TABLE n(s TEXT)'],
  script: async ({ db }) => {
    const s = db.prepare('INSERT INTO n VALUES (?)');
    for (const v of [4, 4.5, 4n, true, false, 1e21, -0, 0.1]) await s.run(v);
    return db.prepare('SELECT s, typeof(s) t FROM n').all();
  },
});
add({ name: 'bind/number-compare-integer', setup: ['CREATE TABLE n(i INTEGER)', 'INSERT INTO n VALUES (1)'], sql: 'SELECT count(*) AS c FROM n WHERE i = ?', method: 'get', args: () => [1] });
add({ name: 'bind/number-compare-untyped-text', setup: ['CREATE TABLE n(x)', "INSERT INTO n VALUES ('1')"], sql: 'SELECT count(*) AS c FROM n WHERE x = ?', method: 'get', args: () => [1] });
add({ name: 'bind/number-limit-clause', sql: 'SELECT 1 AS v UNION ALL SELECT 2 LIMIT ?', method: 'all', args: () => [1] });
add({ name: 'bind/float-limit-clause', sql: 'SELECT 1 AS v UNION ALL SELECT 2 LIMIT ?', method: 'all', args: () => [1.5] });
add({ name: 'bind/long-string', sql: 'SELECT length(?) AS n', method: 'get', args: () => ['x'.repeat(1e6)] });
add({ name: 'bind/long-blob', sql: 'SELECT length(?) AS n, hex(substr(?1, 1, 2)) AS h', method: 'get', args: () => [new Uint8Array(1 << 20).fill(7)] });
add({ name: 'bind/blob-copied-at-call', script: async ({ db }) => {
  const bytes = new Uint8Array([1, 2]);
  const pending = db.prepare('SELECT ? AS v').get(bytes);
  bytes[0] = 9;
  return pending;
} });
add({ name: 'bind/error-no-side-effect', setup: [T], script: async ({ db }) => {
  const s = db.prepare('INSERT INTO t(a, b) VALUES (?, ?)');
  try {
    await s.run(1, Symbol());
  } catch {}
  return db.prepare('SELECT count(*) AS n FROM t').get();
} });
add({ name: 'bind/error-then-reuse', script: async ({ db }) => {
  const s = db.prepare('SELECT ? AS v');
  let e1;
  try {
    await s.get(undefined);
  } catch (e) {
    e1 = e.message;
  }
  return [e1, await s.get(2)];
} });

// Values in non-first position: objects are not maps there.
const bind2 = (name, value) =>
  add({ name: `bind2/${name}`, sql: 'SELECT typeof(?2) AS t, ?2 AS v', method: 'get', args: () => [0, value()] });
bind2('undefined', () => undefined);
bind2('null', () => null);
bind2('true', () => true);
bind2('bigint', () => 7n);
bind2('string', () => 's');
bind2('plain-object', () => ({}));
bind2('array', () => [1]);
bind2('date', () => new Date(0));
bind2('map', () => new Map());
bind2('function', () => () => 1);
bind2('number-object', () => new Number(1));
bind2('string-object', () => new String('s'));
bind2('boolean-object', () => new Boolean(true));
bind2('promise', () => Promise.resolve(1));
bind2('symbol', () => Symbol('s'));
bind2('arraybuffer', () => new ArrayBuffer(2));
bind2('sharedarraybuffer', () => new SharedArrayBuffer(1));
bind2('dataview', () => new DataView(new ArrayBuffer(1)));
bind2('int32array', () => new Int32Array([1]));
bind2('bigint64array', () => new BigInt64Array([1n]));
bind2('buffer', () => Buffer.from('zz'));
bind2('null-proto-object', () => Object.create(null));

// ---------------------------------------------------------------------------
// Positional parameters: count and mapping

add({ name: 'pos/too-many-args', sql: 'SELECT ? AS a', method: 'get', args: () => [1, 2] });
add({ name: 'pos/too-many-args-all', sql: 'SELECT ? AS a', method: 'all', args: () => [1, 2] });
add({ name: 'pos/too-many-args-run', setup: [T], sql: 'INSERT INTO t(a) VALUES (?)', method: 'run', args: () => [1, 2], post: count('t') });
add({ name: 'pos/too-many-args-iterate', sql: 'SELECT ? AS a', method: 'iterate', args: () => [1, 2] });
add({ name: 'pos/too-many-args-no-params', sql: 'SELECT 1 AS a', method: 'get', args: () => [1] });
add({ name: 'pos/too-few-args', sql: 'SELECT ? AS a, ? AS b', method: 'get', args: () => [1] });
add({ name: 'pos/no-args', sql: 'SELECT ? AS a', method: 'get' });
add({ name: 'pos/numbered', sql: 'SELECT ?2 AS a, ?1 AS b', method: 'get', args: () => [1, 2] });
add({ name: 'pos/numbered-reuse', sql: 'SELECT ?1 AS a, ?1 AS b, ? AS c', method: 'get', args: () => [1, 2] });
add({ name: 'pos/numbered-gap', sql: 'SELECT ?3 AS a', method: 'get', args: () => [1, 2, 3] });
add({ name: 'pos/numbered-gap-too-many', sql: 'SELECT ?3 AS a', method: 'get', args: () => [1, 2, 3, 4] });
add({ name: 'pos/mixed-anon-after-numbered', sql: 'SELECT ?5 AS a, ? AS b', method: 'get', args: () => [1, 2, 3, 4, 5, 6] });
add({ name: 'pos/positional-with-named-params', sql: 'SELECT :x AS x, ? AS a, $y AS y, ? AS b', method: 'get', args: () => [1, 2] });
add({ name: 'pos/positional-only-named-params', sql: 'SELECT :x AS x', method: 'get', args: () => [1] });
add({ name: 'pos/named-object-then-positional', sql: 'SELECT :x AS x, ? AS a, ? AS b', method: 'get', args: () => [{ x: 1 }, 2, 3] });
add({ name: 'pos/named-object-then-positional-too-many', sql: 'SELECT :x AS x, ? AS a', method: 'get', args: () => [{ x: 1 }, 2, 3] });
add({ name: 'pos/named-object-then-positional-numbered', sql: 'SELECT :x AS x, ?3 AS a', method: 'get', args: () => [{ x: 1 }, 2, 3, 4] });
add({ name: 'pos/named-map-binds-numbered', sql: 'SELECT ?1 AS a, ? AS b', method: 'get', args: () => [{ '?1': 7 }, 8] });
add({ name: 'pos/array-first-arg', sql: 'SELECT ? AS a', method: 'get', args: () => [[1]] });
add({ name: 'pos/many-params', sql: 'SELECT ' + Array.from({ length: 20 }, (_, i) => `? AS c${i}`).join(', '), method: 'get', args: () => Array.from({ length: 20 }, (_, i) => i) });
add({ name: 'pos/param-index-out-of-range', sql: 'SELECT ?32767 AS a', method: 'get' });
add({ name: 'pos/param-index-max', sql: 'SELECT ?32766 AS a', method: 'get' });
add({ name: 'pos/param-index-too-big', sql: 'SELECT ?250001 AS a', method: 'get' });
add({ name: 'pos/param-zero', sql: 'SELECT ?0 AS a', method: 'get' });

// ---------------------------------------------------------------------------
// Named parameters

const named = (name, sql, args, extra = {}) => add({ name: `named/${name}`, sql, method: 'get', args, ...extra });
named('prefixed-colon', 'SELECT :a AS a', () => [{ ':a': 1 }]);
named('prefixed-dollar', 'SELECT $a AS a', () => [{ $a: 1 }]);
named('prefixed-at', 'SELECT @a AS a', () => [{ '@a': 1 }]);
named('bare-colon', 'SELECT :a AS a', () => [{ a: 1 }]);
named('bare-dollar', 'SELECT $a AS a', () => [{ a: 1 }]);
named('bare-at', 'SELECT @a AS a', () => [{ a: 1 }]);
named('all-prefixes', 'SELECT :a AS a, $b AS b, @c AS c', () => [{ c: 3, ':a': 1, b: 2 }]);
named('wrong-prefix', 'SELECT :a AS a', () => [{ $a: 1 }]);
named('both-bare-and-prefixed', 'SELECT :a AS a', () => [{ a: 1, ':a': 2 }]);
named('both-prefixed-and-bare', 'SELECT :a AS a', () => [{ ':a': 2, a: 1 }]);
named('bare-disabled', 'SELECT :a AS a', () => [{ a: 1 }], { calls: [['setAllowBareNamedParameters', false]] });
named('bare-disabled-prefixed-ok', 'SELECT :a AS a', () => [{ ':a': 1 }], { calls: [['setAllowBareNamedParameters', false]] });
named('bare-disabled-dbopt', 'SELECT :a AS a', () => [{ a: 1 }], { db: { allowBareNamedParameters: false } });
named('bare-disabled-prepareopt', 'SELECT :a AS a', () => [{ a: 1 }], { prepare: { allowBareNamedParameters: false } });
named('bare-reenabled', 'SELECT :a AS a', () => [{ a: 1 }], { db: { allowBareNamedParameters: false }, calls: [['setAllowBareNamedParameters', true]] });
named('bare-disabled-after-use', 'SELECT :a AS a', () => [{ a: 1 }], { calls: [['get', { a: 5 }], ['setAllowBareNamedParameters', false]] });
named('conflicting-bare', 'SELECT :a AS x, $a AS y', () => [{ a: 1 }]);
named('conflicting-bare-prefixed-keys', 'SELECT :a AS x, $a AS y', () => [{ ':a': 1, $a: 2 }]);
named('conflicting-bare-empty-object', 'SELECT :a AS x, $a AS y', () => [{}]);
named('conflicting-bare-three', 'SELECT @a AS x, :b AS y, $a AS z', () => [{ b: 1 }]);
named('conflicting-bare-disabled', 'SELECT :a AS x, $a AS y', () => [{ ':a': 1, $a: 2 }], { calls: [['setAllowBareNamedParameters', false]] });
named('conflicting-bare-disabled-bare-key', 'SELECT :a AS x, $a AS y', () => [{ a: 1 }], { calls: [['setAllowBareNamedParameters', false]] });
named('conflicting-bare-positional-only', 'SELECT :a AS x, $a AS y', () => [1, 2]);
named('conflicting-bare-then-bad-value', 'SELECT :a AS x, $a AS y', () => [{ ':a': Symbol() }]);
named('same-name-twice', 'SELECT :a AS x, :a AS y', () => [{ a: 1 }]);
named('unknown-key', 'SELECT :a AS a', () => [{ a: 1, b: 2 }]);
named('unknown-key-first', 'SELECT :a AS a', () => [{ b: 2, a: 1 }]);
named('unknown-key-prefixed', 'SELECT :a AS a', () => [{ ':b': 2 }]);
named('unknown-key-numeric', 'SELECT :a AS a', () => [{ 0: 1 }]);
named('unknown-allowed', 'SELECT :a AS a', () => [{ a: 1, b: 2 }], { calls: [['setAllowUnknownNamedParameters', true]] });
named('unknown-allowed-dbopt', 'SELECT :a AS a', () => [{ a: 1, b: 2 }], { db: { allowUnknownNamedParameters: true } });
named('unknown-allowed-prepareopt', 'SELECT :a AS a', () => [{ a: 1, b: 2 }], { prepare: { allowUnknownNamedParameters: true } });
named('unknown-allowed-bad-value', 'SELECT :a AS a', () => [{ a: 1, b: Symbol() }], { calls: [['setAllowUnknownNamedParameters', true]] });
named('unknown-allowed-bare-disabled', 'SELECT :a AS a', () => [{ a: 1, ':a': 2 }], { calls: [['setAllowUnknownNamedParameters', true], ['setAllowBareNamedParameters', false]] });
named('unknown-disallowed-again', 'SELECT :a AS a', () => [{ b: 1 }], { db: { allowUnknownNamedParameters: true }, calls: [['setAllowUnknownNamedParameters', false]] });
named('missing-is-null', 'SELECT :a AS a, :b AS b', () => [{ a: 1 }]);
named('empty-object', 'SELECT :a AS a', () => [{}]);
named('object-no-named-params', 'SELECT ? AS a', () => [{}]);
named('object-no-named-params-with-key', 'SELECT ? AS a', () => [{ a: 1 }]);
named('object-no-params', 'SELECT 1 AS a', () => [{}]);
named('numeric-key-for-?NNN', 'SELECT ?1 AS a', () => [{ '?1': 5 }]);
named('numeric-key-bare-for-?NNN', 'SELECT ?1 AS a', () => [{ 1: 5 }]);
named('null-prototype-object', 'SELECT :a AS a', () => [Object.assign(Object.create(null), { a: 1 })]);
named('class-instance', 'SELECT :a AS a', () => [new (class { constructor() { this.a = 7; } })()]);
named('inherited-key-ignored', 'SELECT :a AS a', () => [Object.create({ a: 1 })]);
named('non-enumerable-key', 'SELECT :a AS a', () => [Object.defineProperty({}, 'a', { value: 3, enumerable: false })]);
named('symbol-key-ignored', 'SELECT :a AS a', () => [{ a: 1, [Symbol('a')]: 2 }]);
named('date-as-first-arg', 'SELECT :a AS a', () => [new Date(0)]);
named('array-as-first-arg', 'SELECT ? AS a, ? AS b', () => [[1, 2]]);
named('array-as-first-arg-named', 'SELECT :a AS a', () => [[1]]);
named('value-undefined', 'SELECT :a AS a', () => [{ a: undefined }]);
named('value-bad-type', 'SELECT :x AS a, :a AS b', () => [{ a: Symbol() }]);
named('value-bad-type-object', 'SELECT :a AS a', () => [{ a: {} }]);
named('value-bigint-too-large', 'SELECT :a AS a', () => [{ a: 2n ** 64n }]);
named('value-boolean', 'SELECT :a AS a', () => [{ a: false }]);
named('value-bigint', 'SELECT :a AS a', () => [{ a: 10n }]);
named('value-blob', 'SELECT :a AS a', () => [{ a: new Uint8Array([1]) }]);
named('value-arraybuffer', 'SELECT :a AS a', () => [{ a: new Uint8Array([1, 2]).buffer }]);
named('value-number', 'SELECT :a AS a, typeof(:a) AS t', () => [{ a: 3 }]);
named('value-null', 'SELECT :a AS a', () => [{ a: null }]);
named('uint8array-first-arg-is-positional', 'SELECT ? AS a', () => [new Uint8Array([1])]);
named('buffer-first-arg-is-positional', 'SELECT ? AS a', () => [Buffer.from('hi')]);
named('dataview-first-arg', 'SELECT ? AS a', () => [new DataView(new ArrayBuffer(1))]);
named('arraybuffer-first-arg', 'SELECT ? AS a', () => [new ArrayBuffer(1)]);
named('int16array-first-arg', 'SELECT ? AS a', () => [new Int16Array(1)]);
named('bare-name-with-digits', 'SELECT :a1 AS a', () => [{ a1: 1 }]);
named('tcl-style-dollar', 'SELECT $a::b AS a', () => [{ 'a::b': 1 }]);
named('tcl-style-dollar-paren', 'SELECT $a(x) AS a', () => [{ 'a(x)': 1 }]);
named('case-sensitive', 'SELECT :A AS a', () => [{ a: 1 }]);
named('unicode', 'SELECT :é AS a', () => [{ é: 1 }]);
named('getter-value', 'SELECT :a AS a', () => [{ get a() { return 42; } }]);
named('getter-throws', 'SELECT :a AS a', () => [{ get a() { throw new RangeError('boom'); } }]);
named('proxy', 'SELECT :a AS a', () => [
  new Proxy({}, {
    ownKeys: () => ['a'],
    getOwnPropertyDescriptor: () => ({ value: 9, enumerable: true, configurable: true }),
    get: () => 9,
  }),
]);
named('bind-error-keeps-order', 'SELECT :a AS a, :b AS b', () => [{ b: Symbol(), a: Symbol() }]);
named('unknown-before-bad-value', 'SELECT :a AS a', () => [{ a: Symbol(), zz: 1 }]);
named('unknown-then-bad-value', 'SELECT :a AS a', () => [{ zz: 1, a: Symbol() }]);
named('in-insert', 'INSERT INTO t(a, b) VALUES ($a, $b) RETURNING *', () => [{ a: 'x', b: 2n }], { setup: [T] });

// ---------------------------------------------------------------------------
// SQLite errors and their objects

const errCase = (name, c) => add({ name: `err/${name}`, method: 'run', ...c });
errCase('syntax', { sql: 'SELEC 1', method: 'get' });
errCase('syntax-all', { sql: 'SELEC 1', method: 'all' });
errCase('syntax-iterate', { sql: 'SELEC 1', method: 'iterate' });
errCase('syntax-columns', { sql: 'SELEC 1', method: 'columns' });
errCase('syntax-incomplete', { sql: 'SELECT', method: 'get' });
errCase('syntax-unterminated-string', { sql: "SELECT 'abc", method: 'get' });
errCase('no-such-table', { sql: 'SELECT * FROM nope', method: 'get' });
errCase('no-such-column', { setup: [T], sql: 'SELECT nope FROM t', method: 'get' });
errCase('no-such-function', { sql: 'SELECT nope(1)', method: 'get' });
errCase('unique', { setup: ['CREATE TABLE u(x UNIQUE)', 'INSERT INTO u VALUES (1)'], sql: 'INSERT INTO u VALUES (?)', args: () => [1] });
errCase('unique-composite', { setup: ['CREATE TABLE cu(a, b, UNIQUE(a, b))', 'INSERT INTO cu VALUES (1, 2)'], sql: 'INSERT INTO cu VALUES (1, 2)' });
errCase('unique-index', { setup: ['CREATE TABLE ui(a)', 'CREATE UNIQUE INDEX ui_a ON ui(a)', 'INSERT INTO ui VALUES (1)'], sql: 'INSERT INTO ui VALUES (1)' });
errCase('unique-expression-index', { setup: ['CREATE TABLE ue(a)', 'CREATE UNIQUE INDEX ue_a ON ue(lower(a))', "INSERT INTO ue VALUES ('X')"], sql: "INSERT INTO ue VALUES ('x')" });
errCase('primary-key', { setup: ['CREATE TABLE p(x PRIMARY KEY)', 'INSERT INTO p VALUES (1)'], sql: 'INSERT INTO p VALUES (1)' });
errCase('rowid-primary-key', { setup: [T, 'INSERT INTO t(id) VALUES (1)'], sql: 'INSERT INTO t(id) VALUES (1)' });
errCase('not-null', { setup: ['CREATE TABLE nn(x NOT NULL)'], sql: 'INSERT INTO nn VALUES (NULL)' });
errCase('not-null-bound', { setup: ['CREATE TABLE nn(x NOT NULL)'], sql: 'INSERT INTO nn VALUES (?)', args: () => [null] });
errCase('check', { setup: ['CREATE TABLE ck(x CHECK (x > 0))'], sql: 'INSERT INTO ck VALUES (0)' });
errCase('check-named', { setup: ['CREATE TABLE ck(x, CONSTRAINT positive CHECK (x > 0))'], sql: 'INSERT INTO ck VALUES (0)' });
errCase('foreign-key-default-on', { setup: ['CREATE TABLE par(id INTEGER PRIMARY KEY)', 'CREATE TABLE ch(pid REFERENCES par(id))'], sql: 'INSERT INTO ch VALUES (5)' });
errCase('foreign-key-disabled', { db: { enableForeignKeyConstraints: false }, setup: ['CREATE TABLE par(id INTEGER PRIMARY KEY)', 'CREATE TABLE ch(pid REFERENCES par(id))'], sql: 'INSERT INTO ch VALUES (5)' });
errCase('foreign-key-enabled-explicitly', { db: { enableForeignKeyConstraints: true }, setup: ['CREATE TABLE par(id INTEGER PRIMARY KEY)', 'CREATE TABLE ch(pid REFERENCES par(id))'], sql: 'INSERT INTO ch VALUES (5)' });
errCase('fk-delete-parent', { setup: ['CREATE TABLE par(id INTEGER PRIMARY KEY)', 'CREATE TABLE ch(pid REFERENCES par(id))', 'INSERT INTO par VALUES (1)', 'INSERT INTO ch VALUES (1)'], sql: 'DELETE FROM par' });
errCase('fk-deferred-commit', { setup: ['CREATE TABLE par(id INTEGER PRIMARY KEY)', 'CREATE TABLE ch(pid REFERENCES par(id) DEFERRABLE INITIALLY DEFERRED)', 'BEGIN', 'INSERT INTO ch VALUES (9)'], sql: 'COMMIT' });
errCase('strict-datatype', { setup: ['CREATE TABLE s(x INTEGER) STRICT'], sql: "INSERT INTO s VALUES ('abc')" });
errCase('unique-in-get', { setup: ['CREATE TABLE u(x UNIQUE)', 'INSERT INTO u VALUES (1)'], sql: 'INSERT INTO u VALUES (1) RETURNING x', method: 'get' });
errCase('unique-in-all', { setup: ['CREATE TABLE u(x UNIQUE)', 'INSERT INTO u VALUES (1)'], sql: 'INSERT INTO u VALUES (1) RETURNING x', method: 'all' });
errCase('unique-in-iterate', { setup: ['CREATE TABLE u(x UNIQUE)', 'INSERT INTO u VALUES (1)'], sql: 'INSERT INTO u VALUES (1) RETURNING x', method: 'iterate' });
errCase('runtime-raise', { sql: "SELECT RAISE(ABORT, 'custom msg')", method: 'get' });
errCase('trigger-raise', { setup: [T, "CREATE TRIGGER tr BEFORE INSERT ON t BEGIN SELECT RAISE(FAIL, 'nope from trigger'); END"], sql: 'INSERT INTO t(a) VALUES (1)' });
errCase('trigger-raise-abort', { setup: [T, "CREATE TRIGGER tr BEFORE INSERT ON t BEGIN SELECT RAISE(ABORT, 'aborted'); END"], sql: 'INSERT INTO t(a) VALUES (1)' });
errCase('json-malformed', { sql: "SELECT json('{bad')", method: 'get' });
errCase('too-big-blob', { sql: 'SELECT zeroblob(2000000000)', method: 'get' });
errCase('datatype-mismatch', { sql: 'SELECT 1 LIMIT 1.5', method: 'get' });
errCase('abs-overflow', { sql: 'SELECT abs(-9223372036854775807 - 1) AS v', method: 'get' });
errCase('multiple-statements-prepare', { sql: 'SELECT 1 AS a; SELECT 2 AS b', method: 'all' });
errCase('multiple-statements-second-bad', { sql: 'SELECT 1 AS a; SELEC 2', method: 'all' });
errCase('dqs-default-off', { sql: 'SELECT "abc" AS v', method: 'get' });
errCase('dqs-enabled', { db: { enableDoubleQuotedStringLiterals: true }, sql: 'SELECT "abc" AS v', method: 'get' });
errCase('dqs-disabled-explicitly', { db: { enableDoubleQuotedStringLiterals: false }, sql: 'SELECT "abc" AS v', method: 'get' });
errCase('dqs-ddl-default-off', { sql: 'CREATE TABLE d(x DEFAULT "abc")' });
errCase('dqs-ddl-enabled', { db: { enableDoubleQuotedStringLiterals: true }, sql: 'CREATE TABLE d(x DEFAULT "abc")' });
errCase('dqs-index-default', { setup: [T], sql: 'CREATE INDEX i ON t("nope")' });
errCase('begin-twice', { setup: ['BEGIN'], sql: 'BEGIN' });
errCase('commit-without-begin', { sql: 'COMMIT' });
errCase('rollback-without-begin', { sql: 'ROLLBACK' });
errCase('too-many-columns', { sql: 'SELECT ' + Array.from({ length: 2001 }, (_, i) => i).join(','), method: 'get' });
errCase('readonly-pragma-query-only', { setup: ['PRAGMA query_only = 1'], sql: 'CREATE TABLE q(x)' });
errCase('attach-missing-dir', { sql: "ATTACH '/nonexistent-dir-offloop-differential/a.db' AS x" });
errCase('defensive-default', { setup: ['CREATE TABLE a(x)', 'PRAGMA writable_schema = ON'], sql: 'UPDATE sqlite_schema SET sql = sql' });
errCase('defensive-false', { db: { defensive: false }, setup: ['CREATE TABLE a(x)', 'PRAGMA writable_schema = ON'], sql: 'UPDATE sqlite_schema SET sql = sql' });
errCase('defensive-true', { db: { defensive: true }, setup: ['CREATE TABLE a(x)', 'PRAGMA writable_schema = ON'], sql: 'UPDATE sqlite_schema SET sql = sql' });
add({
  name: 'err/prepare-empty',
  script: async ({ db }) => db.prepare('').get(),
});
add({ name: 'err/prepare-whitespace', script: async ({ db }) => db.prepare('   ').all() });
add({ name: 'err/prepare-comment-only', script: async ({ db }) => db.prepare('-- hi').run() });
add({ name: 'err/prepare-semicolon-only', script: async ({ db }) => db.prepare(';').get() });
add({ name: 'err/prepare-non-string', script: async ({ db }) => db.prepare(1) });
add({ name: 'err/prepare-no-arg', script: async ({ db }) => db.prepare() });
add({ name: 'err/prepare-string-object', script: async ({ db }) => db.prepare(new String('SELECT 1')) });
add({ name: 'err/prepare-options-not-object', script: async ({ db }) => db.prepare('SELECT 1', 1) });
add({ name: 'err/prepare-options-null', script: async ({ db }) => db.prepare('SELECT 1', null) });
add({ name: 'err/prepare-options-undefined', script: async ({ db }) => db.prepare('SELECT 1 AS a', undefined).get() });
add({ name: 'err/prepare-options-unknown-key', script: async ({ db }) => db.prepare('SELECT 1 AS a', { bogus: 1 }).get() });
add({ name: 'err/prepare-options-bad-returnArrays', script: async ({ db }) => db.prepare('SELECT 1', { returnArrays: 1 }) });
add({ name: 'err/prepare-options-bad-readBigInts', script: async ({ db }) => db.prepare('SELECT 1', { readBigInts: 'yes' }) });
add({ name: 'err/prepare-options-bad-allowBare', script: async ({ db }) => db.prepare('SELECT 1', { allowBareNamedParameters: null }) });
add({ name: 'err/prepare-options-bad-allowUnknown', script: async ({ db }) => db.prepare('SELECT 1', { allowUnknownNamedParameters: 0 }) });
add({ name: 'err/prepare-options-order', script: async ({ db }) => db.prepare('SELECT 1', { allowUnknownNamedParameters: 0, readBigInts: 1, returnArrays: 1 }) });
add({ name: 'err/prepare-options-undefined-values', script: async ({ db }) => db.prepare('SELECT 5 AS a', { readBigInts: undefined, returnArrays: undefined }).get() });
add({ name: 'err/prepare-check-order-bad-sql-and-bad-options', script: async ({ db }) => db.prepare(1, 1) });
add({ name: 'err/prepare-check-order-bad-options-and-syntax', script: async ({ db }) => db.prepare('SELEC', 1) });
add({ name: 'err/exec-syntax', script: async ({ db }) => db.exec('CREATE TABLE a(x); INSERT INTO a VALUES (1); SELEC; INSERT INTO a VALUES (2)') });
add({
  name: 'err/exec-partial-commit',
  script: async ({ db }) => {
    try {
      await db.exec('CREATE TABLE a(x); INSERT INTO a VALUES (1); INSERT INTO nope VALUES (2)');
    } catch (e) {
      return [e.message, e.errcode, await db.prepare('SELECT count(*) AS n FROM a').get()];
    }
  },
});
add({ name: 'err/exec-non-string', script: async ({ db }) => db.exec(1) });
add({ name: 'err/exec-no-arg', script: async ({ db }) => db.exec() });
add({ name: 'err/exec-empty', script: async ({ db }) => db.exec('') });
add({ name: 'err/exec-comment-only', script: async ({ db }) => db.exec('-- nothing') });
add({ name: 'err/exec-returns-undefined', script: async ({ db }) => db.exec('CREATE TABLE a(x); INSERT INTO a VALUES (1), (2); SELECT * FROM a; UPDATE a SET x = 3') });
add({ name: 'err/exec-multi-effects', script: async ({ db }) => {
  await db.exec('CREATE TABLE a(x); INSERT INTO a VALUES (1); INSERT INTO a VALUES (2);');
  return db.prepare('SELECT x FROM a').all();
} });
add({ name: 'err/exec-with-parameter', script: async ({ db }) => db.exec('SELECT ?') });
add({ name: 'err/exec-unique', setup: ['CREATE TABLE u(x UNIQUE)'], script: async ({ db }) => db.exec('INSERT INTO u VALUES (1); INSERT INTO u VALUES (1)') });
add({ name: 'err/exec-transaction-stays-open', script: async ({ db }) => {
  await db.exec('BEGIN; CREATE TABLE a(x)');
  try {
    await db.exec('BEGIN');
  } catch (e) {
    return e.message;
  }
} });
add({ name: 'err/setReadBigInts-non-boolean', script: async ({ db }) => db.prepare('SELECT 1').setReadBigInts(1) });
add({ name: 'err/setReadBigInts-no-arg', script: async ({ db }) => db.prepare('SELECT 1').setReadBigInts() });
add({ name: 'err/setReturnArrays-non-boolean', script: async ({ db }) => db.prepare('SELECT 1').setReturnArrays('yes') });
add({ name: 'err/setAllowBareNamedParameters-non-boolean', script: async ({ db }) => db.prepare('SELECT 1').setAllowBareNamedParameters() });
add({ name: 'err/setAllowUnknownNamedParameters-non-boolean', script: async ({ db }) => db.prepare('SELECT 1').setAllowUnknownNamedParameters(0) });
add({ name: 'err/setters-return-value', script: async ({ db }) => {
  const s = db.prepare('SELECT 1');
  return [s.setReadBigInts(true), s.setReturnArrays(true), s.setAllowBareNamedParameters(true), s.setAllowUnknownNamedParameters(true)];
} });
add({ name: 'err/foreign-keys-default', script: async ({ db }) => db.prepare('PRAGMA foreign_keys').get() });
add({ name: 'err/foreign-keys-option-false', db: { enableForeignKeyConstraints: false }, script: async ({ db }) => db.prepare('PRAGMA foreign_keys').get() });
add({ name: 'err/timeout-option', db: { timeout: 1234 }, script: async ({ db }) => db.prepare('PRAGMA busy_timeout').get() });
add({ name: 'err/timeout-zero', db: { timeout: 0 }, script: async ({ db }) => db.prepare('PRAGMA busy_timeout').get() });
add({ name: 'err/timeout-negative', db: { timeout: -5 }, script: async ({ db }) => db.prepare('PRAGMA busy_timeout').get() });
add({
  name: 'err/sqlite-error-shape',
  script: async ({ db }) => {
    try {
      await db.prepare('SELEC').get();
    } catch (e) {
      return {
        isError: e instanceof Error,
        proto: Object.getPrototypeOf(e) === Error.prototype,
        keys: Object.keys(e).filter((k) => k !== 'sqliteCode'),
        own: Reflect.ownKeys(e).filter((k) => k !== 'sqliteCode'),
        desc: Object.getOwnPropertyDescriptor(e, 'code'),
        errcodeDesc: Object.getOwnPropertyDescriptor(e, 'errcode'),
        str: String(e),
        stackHead: e.stack.split('\n')[0],
      };
    }
  },
});
add({
  name: 'err/constraint-error-shape',
  setup: ['CREATE TABLE u(x UNIQUE)', 'INSERT INTO u VALUES (1)'],
  script: async ({ db }) => {
    try {
      await db.prepare('INSERT INTO u VALUES (1)').run();
    } catch (e) {
      return [e.name, String(e), e.stack.split('\n')[0], Object.keys(e).filter((k) => k !== 'sqliteCode'), e.errcode, e.errstr];
    }
  },
});
add({
  name: 'err/invalid-arg-shape',
  script: async ({ db }) => {
    try {
      db.prepare(1);
    } catch (e) {
      return { isTypeError: e instanceof TypeError, keys: Object.keys(e), own: Reflect.ownKeys(e), desc: Object.getOwnPropertyDescriptor(e, 'code'), str: String(e), stackHead: e.stack.split('\n')[0] };
    }
  },
});
add({
  name: 'err/bind-error-shape',
  script: async ({ db }) => {
    try {
      db.prepare('SELECT ?').get(Symbol());
    } catch (e) {
      return { isTypeError: e instanceof TypeError, keys: Object.keys(e), own: Reflect.ownKeys(e), str: String(e), stackHead: e.stack.split('\n')[0] };
    }
  },
});
add({
  name: 'err/range-error-shape',
  script: async ({ db }) => {
    try {
      await db.prepare('SELECT 9007199254740993 AS v').get();
    } catch (e) {
      return [e instanceof RangeError, Reflect.ownKeys(e), Object.keys(e), String(e), e.stack.split('\n')[0]];
    }
  },
});
add({
  name: 'err/unknown-named-shape',
  script: async ({ db }) => {
    try {
      await db.prepare('SELECT :a').get({ b: 1 });
    } catch (e) {
      return [e.constructor.name, Reflect.ownKeys(e), Object.keys(e), String(e)];
    }
  },
});
add({
  name: 'err/stmt-reuse-after-error',
  setup: ['CREATE TABLE u(x UNIQUE)'],
  script: async ({ db }) => {
    const s = db.prepare('INSERT INTO u VALUES (?)');
    await s.run(1);
    let m;
    try {
      await s.run(1);
    } catch (e) {
      m = e.message;
    }
    return [m, await s.run(2), await db.prepare('SELECT x FROM u ORDER BY x').all()];
  },
});
add({
  name: 'err/syntax-error-every-call',
  script: async ({ db }) => {
    const messages = [];
    for (let i = 0; i < 2; i++) {
      try {
        await db.prepare('SELEC 1').get();
      } catch (e) {
        messages.push(e.message);
      }
    }
    return messages;
  },
});

// ---------------------------------------------------------------------------
// columns(), sourceSQL

add({ name: 'meta/columns', setup: ['CREATE TABLE m(id INTEGER PRIMARY KEY, name TEXT, v)'], sql: 'SELECT id, name AS n, v, 1 + 1 AS expr, upper(name) FROM m', method: 'columns' });
add({ name: 'meta/columns-non-select', setup: ['CREATE TABLE m(a)'], sql: 'INSERT INTO m VALUES (1)', method: 'columns', post: count('m') });
add({ name: 'meta/columns-returning', setup: ['CREATE TABLE m(a INT)'], sql: 'INSERT INTO m VALUES (1) RETURNING a, a * 2 AS b', method: 'columns', post: count('m') });
add({ name: 'meta/columns-view-and-alias', setup: ['CREATE TABLE m(a INTEGER)', 'CREATE VIEW vw AS SELECT a AS va FROM m'], sql: 'SELECT va, x.a FROM vw, m AS x', method: 'columns' });
add({ name: 'meta/columns-temp', setup: ['CREATE TEMP TABLE tm(a VARCHAR(10))'], sql: 'SELECT a FROM tm', method: 'columns' });
add({ name: 'meta/columns-star', setup: [T], sql: 'SELECT * FROM t', method: 'columns' });
add({ name: 'meta/columns-duplicate-names', sql: 'SELECT 1 AS a, 2 AS a', method: 'columns' });
add({ name: 'meta/columns-with-params', sql: 'SELECT ? AS a, :b AS b', method: 'columns' });
add({ name: 'meta/columns-proto', sql: 'SELECT 1 AS a', method: 'columns', post: async ({ result }) => [Object.getPrototypeOf(result[0]), Object.keys(result[0]), Array.isArray(result)] });
add({ name: 'meta/columns-pragma', sql: 'PRAGMA table_info(sqlite_schema)', method: 'columns' });
add({ name: 'meta/sourceSQL', sql: '  SELECT ?  AS a -- c\n', method: 'get', args: () => [1], post: async ({ stmt }) => stmt.sourceSQL });
add({ name: 'meta/sourceSQL-multibyte', sql: "SELECT 'é' AS v", method: 'get', post: async ({ stmt }) => stmt.sourceSQL });
add({ name: 'meta/sourceSQL-before-run', script: async ({ db }) => db.prepare('SELECT ? AS a, :b AS b').sourceSQL });
add({ name: 'meta/run-result-keys', setup: [T], sql: 'INSERT INTO t(a) VALUES (1)', method: 'run', post: async ({ result }) => [Object.keys(result), Object.getPrototypeOf(result) === Object.prototype] });
add({ name: 'meta/prepare-many-statements', script: async ({ db }) => {
  for (let i = 0; i < 1000; i++) db.prepare('SELECT ' + i);
  return 'ok';
} });
add({ name: 'meta/same-sql-two-statements', script: async ({ db }) => {
  const a = db.prepare('SELECT ? AS v');
  const b = db.prepare('SELECT ? AS v');
  b.setReadBigInts(true);
  return [await a.get(1n), await b.get(1n), await a.get(2)];
} });

// ---------------------------------------------------------------------------
// iterate() (offloop's is an async iterator: compared through awaited next())

add({ name: 'iter/rows', sql: 'SELECT 1 AS a UNION ALL SELECT 2', method: 'iterate' });
add({ name: 'iter/bind-error-is-eager', script: async ({ db }) => {
  const s = db.prepare('SELECT ? AS a');
  try {
    s.iterate(Symbol());
    return 'no throw';
  } catch (e) {
    return ['thrown at iterate()', e.code, e.message];
  }
} });
add({ name: 'iter/next-after-done', script: async ({ db }) => {
  const it = db.prepare('SELECT 1 AS a').iterate();
  return [await it.next(), await it.next(), await it.next()];
} });
add({ name: 'iter/return', script: async ({ db }) => {
  const it = db.prepare('SELECT 1 AS a UNION ALL SELECT 2').iterate();
  const a = await it.next();
  const r = await it.return();
  const b = await it.next();
  return [a, r, b];
} });
add({ name: 'iter/return-with-value', script: async ({ db }) => db.prepare('SELECT 1 AS a').iterate().return(42) });
add({ name: 'iter/return-before-next', script: async ({ db }) => {
  const it = db.prepare('SELECT 1 AS a').iterate();
  return [await it.return(), await it.next()];
} });
add({ name: 'iter/break-then-reuse', script: async ({ db }) => {
  const s = db.prepare('SELECT 1 AS a UNION ALL SELECT 2');
  for await (const r of s.iterate()) break;
  return s.all();
} });
add({ name: 'iter/unsafe-int-lazy', script: async ({ db }) => {
  const it = db.prepare('SELECT 1 AS a UNION ALL SELECT 9007199254740993').iterate();
  const a = await it.next();
  try {
    await it.next();
    return 'no throw';
  } catch (e) {
    return [a, e.code, e.message, await it.next()];
  }
} });
add({ name: 'iter/sqlite-error-lazy', script: async ({ db }) => {
  const it = db.prepare("SELECT json(x) AS j FROM (SELECT '{}' AS x UNION ALL SELECT '{bad')").iterate();
  const a = await it.next();
  try {
    await it.next();
    return 'no throw';
  } catch (e) {
    // (node:sqlite restarts the query on the next call: not compared)
    return [a, e.code, e.message];
  }
} });
// Errors after the first chunk of rows offloop fetches.
for (const at of [257, 300, 513]) {
  const upTo = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${at + 5})`;
  const lazy = (name, sql) =>
    add({
      name: `iter/${name}-at-row-${at}`,
      script: async ({ db, lib }) => {
        const it = db.prepare(sql).iterate();
        let rows = 0;
        try {
          while (!(await it.next()).done) rows++;
          return [rows, 'no throw'];
        } catch (e) {
          const after = lib === 'node' && e.code === 'ERR_SQLITE_ERROR' ? 'restarts' : await it.next();
          return [rows, e.code, e.message, e.code === 'ERR_SQLITE_ERROR' ? 'restarts' : after];
        }
      },
    });
  lazy('unsafe-int', `${upTo} SELECT CASE x WHEN ${at} THEN 9007199254740993 ELSE x END AS v FROM c`);
  lazy('sqlite-error', `${upTo} SELECT json(CASE x WHEN ${at} THEN '{bad' ELSE '{}' END) AS v FROM c`);
}
add({ name: 'iter/named-params', sql: 'SELECT :a AS a UNION ALL SELECT $b', method: 'iterate', args: () => [{ a: 1, b: 'x' }] });
add({ name: 'iter/too-many-args', sql: 'SELECT 1 AS a', method: 'iterate', args: () => [1] });

// ---------------------------------------------------------------------------
// Database options and lifecycle

const openCase = (name, script, extra = {}) => add({ name: `open/${name}`, script, ...extra });
openCase('no-args', async ({ create }) => create());
openCase('path-number', async ({ create }) => create(1));
openCase('path-null-byte', async ({ create }) => create('a\u0000b'));
openCase('path-buffer', async ({ open }) => (await open(Buffer.from(':memory:'))).location());
openCase('path-url-memory', async ({ open }) => (await open(new URL('file::memory:'))).location());
openCase('path-url-http', async ({ create }) => create(new URL('http://x/y')));
openCase('path-empty-string', async ({ open }) => {
  const d = await open('');
  return [d.location(), d.isOpen];
});
openCase('options-not-object', async ({ create }) => create(':memory:', 1));
openCase('options-null', async ({ create }) => create(':memory:', null));
openCase('options-undefined', async ({ create }) => create(':memory:', undefined));
openCase('options-string', async ({ create }) => create(':memory:', 'x'));
openCase('readOnly-not-boolean', async ({ create }) => create(':memory:', { readOnly: 'yes' }));
openCase('fk-not-boolean', async ({ create }) => create(':memory:', { enableForeignKeyConstraints: null }));
openCase('dqs-not-boolean', async ({ create }) => create(':memory:', { enableDoubleQuotedStringLiterals: 0 }));
openCase('timeout-not-integer', async ({ create }) => create(':memory:', { timeout: 1.5 }));
openCase('timeout-string', async ({ create }) => create(':memory:', { timeout: '5' }));
openCase('timeout-too-large', async ({ create }) => create(':memory:', { timeout: 2 ** 31 }));
openCase('timeout-nan', async ({ create }) => create(':memory:', { timeout: NaN }));
openCase('timeout-max', async ({ open }) => (await open(':memory:', { timeout: 2 ** 31 - 1 })).prepare('PRAGMA busy_timeout').get());
openCase('readBigInts-not-boolean', async ({ create }) => create(':memory:', { readBigInts: 1 }));
openCase('returnArrays-not-boolean', async ({ create }) => create(':memory:', { returnArrays: 1 }));
openCase('allowBareNamedParameters-not-boolean', async ({ create }) => create(':memory:', { allowBareNamedParameters: 1 }));
openCase('allowUnknownNamedParameters-not-boolean', async ({ create }) => create(':memory:', { allowUnknownNamedParameters: 1 }));
openCase('defensive-not-boolean', async ({ create }) => create(':memory:', { defensive: 'no' }));
openCase('unknown-option-ignored', async ({ open }) => (await open(':memory:', { bogus: 1 })).isOpen);
openCase('options-undefined-values', async ({ open }) => (await open(':memory:', { readOnly: undefined, timeout: undefined, readBigInts: undefined })).prepare('SELECT 5 AS a').get());
openCase('option-order-timeout-before-readBigInts', async ({ create }) => create(':memory:', { readBigInts: 'x', timeout: 'x' }));
openCase('option-order-readBigInts-before-defensive', async ({ create }) => create(':memory:', { defensive: 'x', readBigInts: 'x' }));
openCase('option-order-allowUnknown-before-defensive', async ({ create }) => create(':memory:', { defensive: 'x', allowUnknownNamedParameters: 'x' }));
openCase('option-order-readOnly-first', async ({ create }) => create(':memory:', { timeout: 'x', defensive: 'x', readOnly: 'x' }));
openCase('option-order-fk-before-dqs', async ({ create }) => create(':memory:', { enableDoubleQuotedStringLiterals: 'x', enableForeignKeyConstraints: 'x' }));
openCase('close-returns', async ({ open }) => (await open(':memory:')).close());
openCase('isOpen', async ({ open }) => {
  const d = await open(':memory:');
  const a = d.isOpen;
  await d.close();
  return [a, d.isOpen];
});
openCase('prepare-closed', async ({ open }) => {
  const d = await open(':memory:');
  await d.close();
  return d.prepare('SELECT 1');
});
openCase('prepare-closed-bad-arg', async ({ open }) => {
  const d = await open(':memory:');
  await d.close();
  return d.prepare(1);
});
openCase('exec-closed', async ({ open }) => {
  const d = await open(':memory:');
  await d.close();
  return d.exec('SELECT 1');
});
openCase('exec-closed-bad-arg', async ({ open }) => {
  const d = await open(':memory:');
  await d.close();
  return d.exec(1);
});
openCase('location-closed', async ({ open }) => {
  const d = await open(':memory:');
  await d.close();
  return d.location();
});
const afterClose = (name, use) =>
  openCase(`stmt-${name}-after-db-close`, async ({ open }) => {
    const d = await open(':memory:');
    const s = d.prepare('SELECT 1 AS a');
    await s.get();
    await d.close();
    return use(s);
  });
afterClose('run', (s) => s.run());
afterClose('get', (s) => s.get());
afterClose('all', (s) => s.all());
afterClose('iterate', (s) => s.iterate().next());
afterClose('columns', (s) => s.columns());
afterClose('sourceSQL', (s) => s.sourceSQL);
afterClose('setReadBigInts', (s) => s.setReadBigInts(true));
afterClose('setReturnArrays', (s) => s.setReturnArrays(true));
afterClose('setAllowBare', (s) => s.setAllowBareNamedParameters(true));
afterClose('setAllowUnknown', (s) => s.setAllowUnknownNamedParameters(true));
afterClose('get-bad-arg', (s) => s.get(Symbol()));
openCase('location-memory', async ({ db }) => db.location());
openCase('location-file', async ({ open, tmp }) => {
  const d = await open(`${tmp}/loc.db`);
  return d.location() === `${tmp}/loc.db`;
});
openCase('location-relative-file', async ({ open, tmp }) => {
  const f = `${require('node:path').relative(process.cwd(), tmp)}/rel.db`;
  const d = await open(f);
  return d.location() === `${tmp}/rel.db`;
});
openCase('uri-filename', async ({ open, tmp }) => {
  const d = await open(`file:${tmp}/uri.db?mode=rwc`);
  return d.location() === `${tmp}/uri.db`;
});
openCase('readOnly-missing-file', async ({ open, tmp }) => open(`${tmp}/missing.db`, { readOnly: true }));
openCase('readOnly-write', async ({ open, tmp }) => {
  const w = await open(`${tmp}/ro.db`);
  await w.exec('CREATE TABLE a(x)');
  await w.close();
  const d = await open(`${tmp}/ro.db`, { readOnly: true });
  return d.prepare('INSERT INTO a VALUES (1)').run();
});
openCase('readOnly-write-exec', async ({ open, tmp }) => {
  const w = await open(`${tmp}/ro.db`);
  await w.exec('CREATE TABLE a(x)');
  await w.close();
  const d = await open(`${tmp}/ro.db`, { readOnly: true });
  return d.exec('INSERT INTO a VALUES (1)');
});
openCase('readOnly-read', async ({ open, tmp }) => {
  const w = await open(`${tmp}/ro.db`);
  await w.exec('CREATE TABLE a(x); INSERT INTO a VALUES (1)');
  await w.close();
  const d = await open(`${tmp}/ro.db`, { readOnly: true });
  return d.prepare('SELECT x FROM a').all();
});
openCase('readOnly-memory', async ({ open }) => (await open(':memory:', { readOnly: true })).exec('CREATE TABLE a(x)'));
openCase('open-missing-dir', async ({ open }) => open('/nonexistent-dir-offloop-differential/a.db'));
openCase('open-not-a-database', async ({ open, tmp }) => {
  require('node:fs').writeFileSync(`${tmp}/junk.db`, 'x'.repeat(4096));
  const d = await open(`${tmp}/junk.db`);
  return d.prepare('SELECT * FROM sqlite_master').all();
});

// ---------------------------------------------------------------------------
// Variants of the queries above:
// - known/: the statement ran once before (with no arguments), so offloop
//   knows its parameters from SQLite instead of reading them from the text;
// - reader/: on a file database, after one call with the same arguments,
//   so the call runs on a reader thread.

const variantGroups = new Set(['read', 'bind', 'bind2', 'pos', 'named']);
for (const c of [...cases]) {
  if (!variantGroups.has(c.group) || c.script || c.location) continue;
  if (!/^\s*(SELECT|VALUES|WITH)/i.test(c.sql)) continue;
  if ((c.calls ?? []).some(([m]) => !m.startsWith('set'))) continue;
  const { group, ...rest } = c;
  if (c.group !== 'read') add({ ...rest, name: `known/${c.name}`, prime: true });
  // node:sqlite reports conflicting bare names on a statement's first named
  // call only (it keeps the half-built name map); offloop on every call.
  if (c.name.includes('conflicting-bare')) continue;
  add({ ...rest, name: `reader/${c.name}`, location: fileDb, warm: true });
}

module.exports = cases;
