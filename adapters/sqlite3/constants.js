'use strict';

// The numbers the sqlite3 module exports: open flags, result codes, limit
// ids, and the names its errors carry. They are SQLite's own values (its C
// API fixes them), written once here; this file holds no behaviour.

const OPEN = {
  OPEN_READONLY: 0x00000001,
  OPEN_READWRITE: 0x00000002,
  OPEN_CREATE: 0x00000004,
  OPEN_URI: 0x00000040,
  OPEN_FULLMUTEX: 0x00010000,
  OPEN_SHAREDCACHE: 0x00020000,
  OPEN_PRIVATECACHE: 0x00040000,
};

// Primary result codes by the names sqlite3 exports them (OK, ERROR, ...).
const CODES = [
  'OK',
  'ERROR',
  'INTERNAL',
  'PERM',
  'ABORT',
  'BUSY',
  'LOCKED',
  'NOMEM',
  'READONLY',
  'INTERRUPT',
  'IOERR',
  'CORRUPT',
  'NOTFOUND',
  'FULL',
  'CANTOPEN',
  'PROTOCOL',
  'EMPTY',
  'SCHEMA',
  'TOOBIG',
  'CONSTRAINT',
  'MISMATCH',
  'MISUSE',
  'NOLFS',
  'AUTH',
  'FORMAT',
  'RANGE',
  'NOTADB',
];
const RESULT = Object.fromEntries(CODES.map((name, code) => [name, code]));

// The two step results sqlite3 also has names for in its errors.
const SQLITE_ROW = 100;
const SQLITE_DONE = 101;

/** 'SQLITE_CONSTRAINT' for 19: the `code` of sqlite3's errors. */
function codeName(errno) {
  if (errno >= 0 && errno < CODES.length) return `SQLITE_${CODES[errno]}`;
  if (errno === SQLITE_ROW) return 'SQLITE_ROW';
  if (errno === SQLITE_DONE) return 'SQLITE_DONE';
  return 'UNKNOWN';
}

// Limit ids (sqlite3_limit) and the names offloop's `db.limits` uses.
const LIMITS = [
  ['LIMIT_LENGTH', 'length'],
  ['LIMIT_SQL_LENGTH', 'sqlLength'],
  ['LIMIT_COLUMN', 'column'],
  ['LIMIT_EXPR_DEPTH', 'exprDepth'],
  ['LIMIT_COMPOUND_SELECT', 'compoundSelect'],
  ['LIMIT_VDBE_OP', 'vdbeOp'],
  ['LIMIT_FUNCTION_ARG', 'functionArg'],
  ['LIMIT_ATTACHED', 'attach'],
  ['LIMIT_LIKE_PATTERN_LENGTH', 'likePatternLength'],
  ['LIMIT_VARIABLE_NUMBER', 'variableNumber'],
  ['LIMIT_TRIGGER_DEPTH', 'triggerDepth'],
  ['LIMIT_WORKER_THREADS', null],
];
const LIMIT = Object.fromEntries(LIMITS.map(([name], id) => [name, id]));
/** offloop's name of limit `id`, or null for one offloop does not set. */
function limitName(id) {
  return LIMITS[id]?.[1] ?? null;
}

// sqlite3's default mode: read-write, created if missing.
const DEFAULT_MODE = OPEN.OPEN_READWRITE | OPEN.OPEN_CREATE | OPEN.OPEN_FULLMUTEX;

module.exports = { OPEN, RESULT, LIMIT, DEFAULT_MODE, codeName, limitName };
