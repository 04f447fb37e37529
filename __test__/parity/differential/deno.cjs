'use strict';

// The differences kept between offloop and Deno's `node:sqlite`, for
// differential.test.mjs's run of run.cjs under Deno. Deno implements
// `node:sqlite` itself, and where it differs from Node's, offloop keeps
// Node 24's behaviour (the arbiter of DESIGN.md): the test checks that
// every case listed here is also one where Deno's `node:sqlite` differs
// from Node 24's, that offloop gives in Deno what it gives in Node 24, and
// that no case differs that is not listed. Measured with Deno 2.9.6
// (scripts/runtimes.mjs pins it); docs/install.md lists the same kinds.
//
// A kind lists the cases of cases.cjs it covers by name, without the
// `known/` and `reader/` prefixes (the same case run on a prepared-before
// statement and on a reader thread), or, where it covers many cases, by
// `matches(deno, offloop)`, a test on the two outcomes.

/** The paths (`.error.message`) at which two encoded outcomes differ, with both values. */
function differences(a, b, at = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const objects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object';
  if (objects && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences(a[k], b[k], `${at}.${k}`));
  }
  return [{ at, deno: a, offloop: b }];
}

const sameMembers = (a, b) =>
  Array.isArray(a) && Array.isArray(b) && a.length === b.length && JSON.stringify([...a].map(String).sort()) === JSON.stringify([...b].map(String).sort());

const KEPT = [
  {
    kind: 'error-key-order',
    why: "a SQLite error's own properties are in another order (`errcode` before `code`)",
    matches: (deno, offloop) =>
      differences(deno, offloop).every((d) => /\.(ownKeys|enumerableKeys)$/.test(d.at) && sameMembers(d.deno, d.offloop)),
  },
  {
    kind: 'bigint-message',
    why: 'a BigInt out of the 64-bit range: the message has no final period',
    matches: (deno, offloop) =>
      differences(deno, offloop).every((d) => /\.error\.(string|message)$/.test(d.at) && /BigInt value is too large to bind$/.test(d.deno)),
  },
  {
    kind: 'error-shape',
    why: 'errors carry an own `Symbol(errorAdditionalPropertyKeys)`, and SQLite errors list `errcode` first',
    cases: ['err/sqlite-error-shape', 'err/constraint-error-shape', 'err/invalid-arg-shape', 'err/bind-error-shape', 'err/range-error-shape', 'err/unknown-named-shape'],
  },
  {
    kind: 'result-key-order',
    why: "`run()`'s result lists `lastInsertRowid` before `changes`; `columns()` entries list `name` first",
    cases: ['run/insert', 'meta/run-result-keys', 'meta/columns-proto'],
  },
  {
    kind: 'booleans',
    why: 'a boolean is refused ("Provided value cannot be bound"), where Node binds 1 or 0',
    cases: ['bind/true', 'bind/false', 'bind2/true', 'named/value-boolean', 'bind/number-into-text-col'],
  },
  {
    kind: 'array-buffers',
    why: 'an `ArrayBuffer` or `SharedArrayBuffer` binds as NULL as the first argument and is refused anywhere else, where Node binds a BLOB',
    cases: ['bind/arraybuffer', 'bind/sharedarraybuffer', 'bind2/arraybuffer', 'bind2/sharedarraybuffer', 'named/value-arraybuffer', 'named/arraybuffer-first-arg'],
  },
  {
    kind: 'text-with-nul',
    why: 'TEXT holding a NUL character is cut at it, read or bound',
    cases: ['read/text-embedded-nul', 'bind/string-nul'],
  },
  {
    kind: 'iteration-errors',
    why: "`iterate()` ends quietly at an unsafe integer or a SQLite error, where Node's throws (ERR_OUT_OF_RANGE, ERR_SQLITE_ERROR)",
    cases: [
      'read/int-unsafe-iterate',
      'err/unique-in-iterate',
      'iter/unsafe-int-lazy',
      'iter/sqlite-error-lazy',
      'iter/unsafe-int-at-row-257',
      'iter/sqlite-error-at-row-257',
      'iter/unsafe-int-at-row-300',
      'iter/sqlite-error-at-row-300',
      'iter/unsafe-int-at-row-513',
      'iter/sqlite-error-at-row-513',
    ],
  },
  {
    kind: 'named-parameters',
    why: "an inherited property binds as a named parameter, and a getter's exception becomes a TypeError (\"Exception during property access\")",
    cases: ['named/inherited-key-ignored', 'named/getter-throws'],
  },
  {
    kind: 'empty-sql',
    why: 'SQL with no statement fails with ERR_SQLITE_ERROR "not an error", where Node says ERR_INVALID_ARG_VALUE "The SQL query contains no statements."',
    cases: ['err/prepare-empty', 'err/prepare-whitespace', 'err/prepare-comment-only', 'err/prepare-semicolon-only'],
  },
  {
    kind: 'argument-checks',
    why: 'arguments are checked otherwise: `null` or `undefined` options and a timeout over 2^31 - 1 accepted, options checked in another order and after the SQL, and a bad path fails with an InvalidArgTypeError or InvalidURLSchemeError, not a TypeError',
    cases: [
      'err/prepare-options-null',
      'err/prepare-options-order',
      'err/prepare-check-order-bad-options-and-syntax',
      'open/options-undefined',
      'open/timeout-too-large',
      'open/no-args',
      'open/path-number',
      'open/path-null-byte',
      'open/path-url-http',
    ],
  },
  {
    kind: 'busy-timeout',
    why: 'the `timeout` option is ignored: the busy timeout stays 5000 ms',
    cases: ['err/timeout-option', 'err/timeout-zero', 'err/timeout-negative', 'open/timeout-max'],
  },
  {
    kind: 'exec-errors',
    why: "`exec()`'s errors have no `errcode` or `errstr`, and a syntax error's message quotes the SQL",
    cases: ['err/exec-syntax', 'err/exec-unique', 'err/exec-partial-commit', 'open/readOnly-write-exec'],
  },
  {
    kind: 'opening',
    why: "paths are opened otherwise: a `file:` URL or URI filename is taken as a plain path, an empty path is refused, a read-only `:memory:` database can be written, and a file that cannot be opened fails with the path in the message and no `errcode` (or, for ATTACH, with \"too many attached databases\")",
    cases: ['open/path-url-memory', 'open/uri-filename', 'open/path-empty-string', 'open/readOnly-memory', 'open/readOnly-missing-file', 'open/open-missing-dir', 'err/attach-missing-dir'],
  },
  {
    kind: 'closed-database',
    why: 'a statement run after its database closed fails with "database is not open", where Node says "statement has been finalized"',
    cases: ['open/stmt-run-after-db-close'],
  },
];

/** A case's name without the `known/` or `reader/` prefix. */
function baseName(name) {
  return name.replace(/^(known|reader)\//, '');
}

/** The kind of kept difference that covers a case whose outcomes differ, or null. */
function keptKind(name, deno, offloop) {
  const base = baseName(name);
  const listed = KEPT.find((k) => k.cases?.includes(base));
  if (listed) return listed.kind;
  return KEPT.find((k) => k.matches?.(deno, offloop))?.kind ?? null;
}

module.exports = { KEPT, keptKind, baseName };
