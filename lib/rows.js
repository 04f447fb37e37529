'use strict';

// Turning the addon's payloads into node:sqlite-shaped values. Rows arrive
// as their column names (one array per column list, reused) and a flat run
// of values inside a larger array (`values`, from `offset`, `count` of
// them); the objects are built here. Node-API can only create objects with
// Object.prototype, and node:sqlite's rows have a null prototype. Every
// position read here is named in lib/protocol.js.

const { record, runRecord, rowsRecord, column, query, checkpointResult } = require('./protocol.js');

// A null-prototype object is a dictionary in V8 however it is made, as
// node:sqlite's rows are. Assigning each name to `{ __proto__: null }`
// grows its dictionary as it goes (through V8's runtime, twice for four
// columns); a literal that already names every column is a copy of a
// dictionary of the right size, whose entries are then only overwritten:
// less than half the work per row (docs/performance.md, CORES). So each
// column list the addon hands over (the same array on every call of a
// statement) gets such a literal, compiled on its second use (a call, or
// a chunk of `iterate()`): a statement run once never pays for the compile.
const makers = new WeakMap();

function assignRow(columns, values, offset) {
  const row = { __proto__: null };
  // Duplicate names: the last value wins, in the first one's position.
  for (let c = 0; c < columns.length; c++) row[columns[c]] = values[offset + c];
  return row;
}

/** `(columns, values, offset) => row` for `columns`; ask once per result. */
function rowMaker(columns) {
  const known = makers.get(columns);
  if (typeof known === 'function') return known;
  if (known === undefined) {
    makers.set(columns, 1);
    return assignRow;
  }
  const maker = compileMaker(columns) ?? assignRow;
  makers.set(columns, maker);
  return maker;
}

/**
 * The literal maker of `columns`, or null where one cannot be made: a
 * column named `__proto__` (a literal would take it for the prototype), or
 * a process that refuses code made from strings
 * (`--disallow-code-generation-from-strings`). Each name is written as a
 * JSON string, which is a JS string literal of exactly that name.
 */
function compileMaker(columns) {
  if (columns.includes('__proto__')) return null;
  const keys = columns.map((name) => JSON.stringify(name));
  const fields = [...new Set(keys)].map((key) => `${key}: null`);
  const stores = keys.map((key, c) => `row[${key}] = values[offset + ${c}];`);
  const body = `const row = { __proto__: null, ${fields.join(', ')} };\n${stores.join('\n')}\nreturn row;`;
  try {
    return new Function('columns', 'values', 'offset', `'use strict';\n${body}`);
  } catch {
    return null;
  }
}

function makeRow(columns, values, offset, arrays) {
  if (arrays) return values.slice(offset, offset + columns.length);
  return rowMaker(columns)(columns, values, offset);
}

/** A RUN record whose kind is at `at`. */
function decodeRun(values, at) {
  return { changes: values[at + runRecord.CHANGES], lastInsertRowid: values[at + runRecord.LAST_INSERT_ROWID] };
}

function decodeGet(columns, values, offset, count, arrays) {
  return count === 0 ? undefined : makeRow(columns, values, offset, arrays);
}

function decodeAll(columns, values, offset, count, arrays) {
  const n = columns.length;
  const rows = new Array(n === 0 ? 0 : count / n);
  if (arrays) {
    for (let r = 0; r < rows.length; r++) rows[r] = values.slice(offset + r * n, offset + (r + 1) * n);
    return rows;
  }
  const make = rowMaker(columns);
  for (let r = 0; r < rows.length; r++) rows[r] = make(columns, values, offset + r * n);
  return rows;
}

function decodeColumns(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += column.WIDTH) {
    out.push({
      __proto__: null,
      column: flat[i + column.COLUMN],
      database: flat[i + column.DATABASE],
      name: flat[i + column.NAME],
      table: flat[i + column.TABLE],
      type: flat[i + column.TYPE],
    });
  }
  return out;
}

/** `query()`'s payload. */
function decodeQuery(payload, arrays) {
  const values = payload[query.VALUES];
  return {
    columns: decodeColumns(payload[query.COLUMNS]),
    rows: decodeAll(payload[query.NAMES], values, 0, values.length, arrays),
    changes: payload[query.CHANGES],
    lastInsertRowid: payload[query.LAST_INSERT_ROWID],
  };
}

function decodeCheckpoint(payload) {
  return {
    logFrames: payload[checkpointResult.LOG_FRAMES],
    checkpointedFrames: payload[checkpointResult.CHECKPOINTED_FRAMES],
  };
}

/** Each statement's result, from RUN and ROWS records in order. */
function decodeBatch(flat, arrays) {
  const results = [];
  let i = 0;
  while (i < flat.length) {
    if (flat[i + runRecord.KIND] === record.RUN) {
      results.push(decodeRun(flat, i));
      i += runRecord.WIDTH;
    } else {
      const count = flat[i + rowsRecord.COUNT];
      const columns = flat[i + rowsRecord.COLUMNS];
      results.push(decodeAll(columns, flat, i + rowsRecord.VALUES, count, arrays[results.length]));
      i += rowsRecord.VALUES + count;
    }
  }
  return results;
}

module.exports = { rowMaker, decodeRun, decodeGet, decodeAll, decodeColumns, decodeQuery, decodeCheckpoint, decodeBatch };
