'use strict';

// SQLite's limits by node:sqlite's names: the `limits` option and the live
// `db.limits` object. This file owns the names, the checks (with
// node:sqlite's messages) and the values a database's connections have;
// it never asks a connection (the JS thread runs no SQLite): every value it
// sets goes to the addon, which changes every connection before its next
// job, and the value it reports is the one SQLite keeps (clamped to the
// limit's ceiling, which is also its default).

const { native } = require('./calls.js');
const { argType, nodeError } = require('./errors.js');
const { limit: LIMIT } = require('./protocol.js');

const NAMES = [
  ['length', LIMIT.LENGTH],
  ['sqlLength', LIMIT.SQL_LENGTH],
  ['column', LIMIT.COLUMN],
  ['exprDepth', LIMIT.EXPR_DEPTH],
  ['compoundSelect', LIMIT.COMPOUND_SELECT],
  ['vdbeOp', LIMIT.VDBE_OP],
  ['functionArg', LIMIT.FUNCTION_ARG],
  ['attach', LIMIT.ATTACHED],
  ['likePatternLength', LIMIT.LIKE_PATTERN_LENGTH],
  ['variableNumber', LIMIT.VARIABLE_NUMBER],
  ['triggerDepth', LIMIT.TRIGGER_DEPTH],
];

// node:sqlite takes a limit as a 32-bit integer, as sqlite3_limit does.
function isInt32(value) {
  return Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff;
}

// Each limit's value on a new connection, by number: read from SQLite once.
let defaults = null;
function limitDefaults() {
  defaults ??= native.limitDefaults();
  return defaults;
}

/** `options.limits` as `[[number, value], ...]`, checked as node:sqlite does. */
function readLimitOptions(limits) {
  if (limits === undefined) return [];
  if (limits === null || typeof limits !== 'object') throw argType('options.limits', 'an object');
  const out = [];
  for (const [name, id] of NAMES) {
    const value = limits[name];
    if (value === undefined) continue;
    if (!isInt32(value)) throw argType(`options.limits.${name}`, 'an integer');
    if (value < 0) {
      throw nodeError(RangeError, 'ERR_OUT_OF_RANGE', `The "options.limits.${name}" argument must be non-negative.`);
    }
    out.push([id, value]);
  }
  return out;
}

/** What SQLite keeps when limit `id` is set to `value` (Infinity: its default). */
function clamp(id, value) {
  return Math.min(value, limitDefaults()[id]);
}

function checkValue(value) {
  if (value !== Infinity && !isInt32(value)) {
    throw nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'Limit value must be a non-negative integer or Infinity.');
  }
  if (value < 0) throw nodeError(RangeError, 'ERR_OUT_OF_RANGE', 'Limit value must be non-negative.');
}

/**
 * The values of a database's limits, starting from the defaults with
 * `initial` (`readLimitOptions`) applied. `send(id, value)` hands a value
 * to every connection.
 */
function limitValues(initial, send) {
  const values = [...limitDefaults()];
  for (const [id, value] of initial) {
    values[id] = clamp(id, value);
    send(id, values[id]);
  }
  return values;
}

/**
 * `db.limits`: one accessor per limit. `current()` is the open database's
 * values (`limitValues`) and `send` (as for limitValues), or throws when
 * the database is not open.
 */
function createLimits(current) {
  const limits = {};
  for (const [name, id] of NAMES) {
    Object.defineProperty(limits, name, {
      enumerable: true,
      get() {
        return current().values[id];
      },
      set(value) {
        const { values, send } = current();
        checkValue(value);
        values[id] = clamp(id, value);
        send(id, values[id]);
      },
    });
  }
  return limits;
}

module.exports = { readLimitOptions, limitValues, createLimits };
