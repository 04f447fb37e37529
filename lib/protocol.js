'use strict';

// The wire between lib/ and the addon, named once: every number that
// crosses the boundary is here, with the same names, in the same order and
// with the same values as src/node/protocol.rs.
// `__test__/source/protocol.test.mjs` checks the two against the addon's own
// table (`native.protocol()`).
// Nothing else in lib/ writes one of these numbers as a literal, except the
// drain in calls.js, which still reads each record's fields at their offset
// from the call id (`id, kind, …`, as `record` describes).

/** What a statement call does (`native.call`). */
const call = Object.freeze({ RUN: 0, GET: 1, ALL: 2, ITERATE: 3, COLUMNS: 4, EXPAND: 5, QUERY: 6 });

/**
 * The kind of each record in a drain's flat array; every record starts
 * `id, kind`, then: FAILED `error`; VALUE `payload`; RUN `changes,
 * lastInsertRowid`; ROWS `columns, n, v1 … vn`; PROGRESS `totalPages,
 * remainingPages` (a backup's step; its call is still pending); TIMING
 * `thread, waitMs, runMs` (where and when a TIMED call ran, just before its
 * own record). A batch's flat array holds RUN and ROWS records without the id.
 */
const record = Object.freeze({ FAILED: 0, VALUE: 1, RUN: 2, ROWS: 3, PROGRESS: 4, TIMING: 5 });

/** Bits of a call's `flags`. */
const flag = Object.freeze({ READ_BIG_INTS: 1, ALLOW_BARE_NAMED: 4, ALLOW_UNKNOWN_NAMED: 8, TIMED: 16 });

/** What a scope begins with (`native.begin`). */
const scope = Object.freeze({ READ: 0, DEFERRED: 1, IMMEDIATE: 2, EXCLUSIVE: 3 });

/** `db.checkpoint(mode)`'s modes. */
const checkpoint = Object.freeze({ PASSIVE: 0, FULL: 1, RESTART: 2, TRUNCATE: 3 });

/** A session's calls (`native.sessionCall`). */
const session = Object.freeze({ CHANGESET: 0, PATCHSET: 1, CLOSE: 2 });

/** What `native.cancel(id)` reports. */
const cancel = Object.freeze({ TOO_LATE: 0, BEFORE_START: 1, WHILE_RUNNING: 2 });

/** The thread holding a cursor: a reader's index, or WRITER. */
const role = Object.freeze({ WRITER: -1 });

/** SQLite's limits (its own numbers), in `db.limits`' order; COUNT of them. */
const limit = Object.freeze({
  LENGTH: 0,
  SQL_LENGTH: 1,
  COLUMN: 2,
  EXPR_DEPTH: 3,
  COMPOUND_SELECT: 4,
  VDBE_OP: 5,
  FUNCTION_ARG: 6,
  ATTACHED: 7,
  LIKE_PATTERN_LENGTH: 8,
  VARIABLE_NUMBER: 9,
  TRIGGER_DEPTH: 10,
  COUNT: 11,
});

/** Positions in an error tuple. */
const error = Object.freeze({ CODE: 0, MESSAGE: 1, ERRCODE: 2, ERRSTR: 3, SQLITE_CODE: 4, BATCH_INDEX: 5 });

// Positions in the arrays that cross. A group of more than one word is
// camelCase here and snake_case in Rust (`spreadCall`, `spread_call`).

/** `callSpread`'s arguments, in this order; the SQL parameters follow from PARAMS on. */
const spreadCall = Object.freeze({ DISPATCHER: 0, KIND: 1, ID: 2, SQL: 3, FLAGS: 4, SCOPE: 5, CANCELLABLE: 6, PARAMS: 7 });

/** `batchSpread`'s arguments, in this order; the statements follow from ENTRIES on. */
const spreadBatch = Object.freeze({ DISPATCHER: 0, ID: 1, READ_BIG_INTS: 2, SCOPE: 3, ENTRIES: 4 });

/** One statement of a spread batch, from its start; its COUNT parameters follow from PARAMS on. */
const batchEntry = Object.freeze({ SQL: 0, FLAGS: 1, COUNT: 2, PARAMS: 3 });

/** The argument error a statement call returns instead of queuing. */
const refusal = Object.freeze({ CODE: 0, MESSAGE: 1 });

/** The argument error a batch returns instead of queuing: which statement, and its error. */
const batchRefusal = Object.freeze({ INDEX: 0, CODE: 1, MESSAGE: 2 });

/**
 * An `iterate()` chunk. CURSOR_ROLE and CURSOR_ID are null once the cursor
 * is done; UNREADABLE, present only when a row holds a value JS cannot
 * take, lists `unreadable` pairs.
 */
const chunk = Object.freeze({ COLUMNS: 0, VALUES: 1, CURSOR_ROLE: 2, CURSOR_ID: 3, UNREADABLE: 4 });

/** Each pair of a chunk's UNREADABLE list, WIDTH apart: the row's index, the error next() throws. */
const unreadable = Object.freeze({ ROW: 0, ERROR: 1, WIDTH: 2 });

/** Each column's metadata (`stmt.columns()`, `query()`), WIDTH apart in one flat array. */
const column = Object.freeze({ NAME: 0, COLUMN: 1, DATABASE: 2, TABLE: 3, TYPE: 4, WIDTH: 5 });

/** `stmt.query()`'s payload. */
const query = Object.freeze({ COLUMNS: 0, CHANGES: 1, LAST_INSERT_ROWID: 2, NAMES: 3, VALUES: 4 });

/** `db.checkpoint()`'s payload. */
const checkpointResult = Object.freeze({ LOG_FRAMES: 0, CHECKPOINTED_FRAMES: 1 });

/** A RUN record, from its kind (a drain's has the call id before it, a batch's none); the next starts WIDTH on. */
const runRecord = Object.freeze({ KIND: 0, CHANGES: 1, LAST_INSERT_ROWID: 2, WIDTH: 3 });

/** A ROWS record, from its kind; its COUNT values follow from VALUES on, the next record after them. */
const rowsRecord = Object.freeze({ KIND: 0, COLUMNS: 1, COUNT: 2, VALUES: 3 });

module.exports = {
  call,
  record,
  flag,
  scope,
  checkpoint,
  session,
  cancel,
  role,
  limit,
  error,
  spreadCall,
  spreadBatch,
  batchEntry,
  refusal,
  batchRefusal,
  chunk,
  unreadable,
  column,
  query,
  checkpointResult,
  runRecord,
  rowsRecord,
};
