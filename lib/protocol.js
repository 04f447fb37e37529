'use strict';

// The wire between lib/ and the addon, named once: every number that
// crosses the boundary is here, with the same names, in the same order and
// with the same values as src/node/protocol.rs. `__test__/source/protocol.test.mjs`
// checks the two against the addon's own table (`native.protocol()`).
// Nothing else in lib/ writes one of these numbers as a literal.

/** What a statement call does (`native.call`). */
const call = Object.freeze({ RUN: 0, GET: 1, ALL: 2, ITERATE: 3, COLUMNS: 4, EXPAND: 5, QUERY: 6 });

/**
 * The kind of each record in a drain's flat array; every record starts
 * `id, kind`, then: FAILED `error`; VALUE `payload`; RUN `changes,
 * lastInsertRowid`; ROWS `columns, n, v1 … vn`; PROGRESS `totalPages,
 * remainingPages` (a backup's step; its call is still pending). A batch's flat array holds
 * RUN and ROWS records without the id.
 */
const record = Object.freeze({ FAILED: 0, VALUE: 1, RUN: 2, ROWS: 3, PROGRESS: 4 });

/** Bits of a call's `flags`. */
const flag = Object.freeze({ READ_BIG_INTS: 1, ALLOW_BARE_NAMED: 4, ALLOW_UNKNOWN_NAMED: 8 });

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

module.exports = { call, record, flag, scope, checkpoint, session, cancel, role, limit, error };
