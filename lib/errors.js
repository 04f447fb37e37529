'use strict';

// Error objects shaped like node:sqlite's (and Node's own misuse errors).

const { error: ERROR } = require('./protocol.js');

const ERROR_CLASSES = {
  ERR_INVALID_ARG_TYPE: TypeError,
  ERR_INVALID_ARG_VALUE: TypeError,
  ERR_OUT_OF_RANGE: RangeError,
};

function nodeError(Ctor, code, message) {
  const err = new Ctor(message);
  err.code = code;
  return err;
}

/** A misuse error by its Node code, with the class Node uses for it. */
function codedError(code, message) {
  return nodeError(ERROR_CLASSES[code] ?? Error, code, message);
}

// The code of a description whose second element is what a user function
// threw (src/node/functions.rs, THROWN_CODE): it is rejected with as it is.
const THROWN = 'OFFLOOP_THROWN';

// SQLITE_CONSTRAINT_COMMITHOOK: a commit that offloop's writer turned into a
// rollback, which it does only when the database is fenced (it may no longer
// hold its replica's lease; no user code can install a commit hook).
const SQLITE_CONSTRAINT_COMMITHOOK = 531;

// `[code, message, errcode, errstr, sqliteCode, batchIndex?]` from the addon.
function errorFromNative(desc) {
  const code = desc[ERROR.CODE];
  const message = desc[ERROR.MESSAGE];
  const errcode = desc[ERROR.ERRCODE];
  const errstr = desc[ERROR.ERRSTR];
  const sqliteCode = desc[ERROR.SQLITE_CODE];
  const batchIndex = desc[ERROR.BATCH_INDEX];
  if (code === THROWN) return message;
  let err;
  if (code === 'ERR_SQLITE_ERROR' && errcode === SQLITE_CONSTRAINT_COMMITHOOK) {
    err = new Error(
      "the database is fenced: it may no longer hold its replica's lease, so this write was rolled back " +
        '(stats().replica.lastError says why)',
    );
    err.code = 'ERR_OFFLOOP_FENCED';
    err.errcode = errcode;
    err.errstr = errstr;
    err.sqliteCode = sqliteCode;
  } else if (code === 'ERR_SQLITE_ERROR') {
    err = new Error(message);
    err.code = code;
    err.errcode = errcode;
    err.errstr = errstr;
    err.sqliteCode = sqliteCode;
  } else if (code === 'ABORT_ERR') {
    err = new DOMException(message, 'AbortError');
  } else {
    err = codedError(code, message);
  }
  if (batchIndex !== undefined) err.batchIndex = batchIndex;
  return err;
}

function notOpen() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'database is not open');
}

function argType(name, what) {
  return nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', `The "${name}" argument must be ${what}.`);
}

function outOfRange(name, min, max, value) {
  return nodeError(
    RangeError,
    'ERR_OUT_OF_RANGE',
    `The value of "${name}" is out of range. It must be >= ${min} && <= ${max}. Received ${value}`,
  );
}

module.exports = { THROWN, nodeError, codedError, errorFromNative, notOpen, argType, outOfRange };
