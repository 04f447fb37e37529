'use strict';

// Turning the addon's payloads into node:sqlite-shaped values. Rows arrive
// as their column names (one array per column list, reused) and a flat run
// of values inside a larger array (`values`, from `offset`, `count` of
// them); the objects are built here. Node-API can only create objects with
// Object.prototype, and node:sqlite's rows have a null prototype. Every
// position read here is named in lib/protocol.js.

const { record, runRecord, rowsRecord, column, query, checkpointResult } = require('./protocol.js');

function makeRow(columns, values, offset, arrays) {
  const n = columns.length;
  if (arrays) return values.slice(offset, offset + n);
  const row = { __proto__: null };
  // Duplicate names: the last value wins, in the first one's position.
  for (let c = 0; c < n; c++) row[columns[c]] = values[offset + c];
  return row;
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
  for (let r = 0; r < rows.length; r++) rows[r] = makeRow(columns, values, offset + r * n, arrays);
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

module.exports = { makeRow, decodeRun, decodeGet, decodeAll, decodeColumns, decodeQuery, decodeCheckpoint, decodeBatch };
