'use strict';

// Errors as sqlite3 makes them: an Error whose message starts with the
// result code's name (`SQLITE_CONSTRAINT: UNIQUE constraint failed: t.x`),
// with `errno` (the primary result code, as sqlite3 never turns extended
// codes on) and `code` (that name). This file owns that shape and the
// mapping of offloop's errors onto it; it decides nothing about when an
// error is reported.

const { RESULT, codeName } = require('./constants.js');

/** An Error with sqlite3's shape. */
function sqliteError(errno, message) {
  const code = codeName(errno);
  const err = new Error(`${code}: ${message}`);
  err.errno = errno;
  err.code = code;
  return err;
}

/** sqlite3's form of an error offloop rejected a call with. */
function fromOffloop(err) {
  if (err === null || typeof err !== 'object') return sqliteError(RESULT.ERROR, String(err));
  // Made here already (a refusal of the adapter's own).
  if (typeof err.errno === 'number' && typeof err.code === 'string' && err.code.startsWith('SQLITE_')) return err;
  let out;
  if (err.code === 'ERR_SQLITE_ERROR' && typeof err.errcode === 'number') {
    out = sqliteError(err.errcode & 0xff, err.message);
  } else if (err.name === 'AbortError') {
    // interrupt() aborts the calls in flight, as sqlite3_interrupt does.
    out = sqliteError(RESULT.INTERRUPT, 'interrupted');
  } else if (isEmptySql(err)) {
    // SQL with no statement (empty, blanks, a comment): sqlite3 prepares
    // it, and running it is sqlite3_step()'s misuse of a NULL statement.
    out = sqliteError(RESULT.MISUSE, 'not an error');
  } else if (err.code === 'ERR_INVALID_STATE' && /named parameter/i.test(err.message)) {
    // A name the statement does not have: sqlite3 binds it at index 0.
    out = sqliteError(RESULT.RANGE, 'column index out of range');
  } else {
    out = sqliteError(RESULT.ERROR, err.message);
  }
  // As `new Error(message, { cause })` sets it: not enumerable.
  Object.defineProperty(out, 'cause', { value: err, writable: true, configurable: true });
  return out;
}

/** Whether offloop refused a statement because its SQL holds none (node:sqlite's error). */
function isEmptySql(err) {
  return err !== null && typeof err === 'object' && err.code === 'ERR_INVALID_ARG_VALUE' && /contains no statements/.test(err.message);
}

module.exports = { sqliteError, fromOffloop, isEmptySql };
