'use strict';

// Turning the addon's payloads into node:sqlite-shaped values. Rows arrive
// as their column names (one array per column list, reused) and a flat run
// of values inside a larger array (`values`, from `offset`, `count` of
// them); the objects are built here. Node-API can only create objects with
// Object.prototype, and node:sqlite's rows have a null prototype.

function makeRow(columns, values, offset, arrays) {
  const n = columns.length;
  if (arrays) return values.slice(offset, offset + n);
  const row = { __proto__: null };
  // Duplicate names: the last value wins, in the first one's position.
  for (let c = 0; c < n; c++) row[columns[c]] = values[offset + c];
  return row;
}

function decodeRun(values, offset) {
  return { changes: values[offset], lastInsertRowid: values[offset + 1] };
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
  for (let i = 0; i < flat.length; i += 5) {
    out.push({
      __proto__: null,
      column: flat[i + 1],
      database: flat[i + 2],
      name: flat[i],
      table: flat[i + 3],
      type: flat[i + 4],
    });
  }
  return out;
}

/** `query()`'s payload: `[columns' metadata, changes, lastInsertRowid, names, values]`. */
function decodeQuery([meta, changes, lastInsertRowid, names, values], arrays) {
  return {
    columns: decodeColumns(meta),
    rows: decodeAll(names, values, 0, values.length, arrays),
    changes,
    lastInsertRowid,
  };
}

function decodeCheckpoint([logFrames, checkpointedFrames]) {
  return { logFrames, checkpointedFrames };
}

const { RUN, ROWS } = require('./protocol.js').record;

/** Each statement's result, from `RUN …` and `ROWS …` records in order. */
function decodeBatch(flat, arrays) {
  const results = [];
  let i = 0;
  while (i < flat.length) {
    if (flat[i] === RUN) {
      results.push(decodeRun(flat, i + 1));
      i += 3;
    } else {
      const count = flat[i + 2];
      results.push(decodeAll(flat[i + 1], flat, i + 3, count, arrays[results.length]));
      i += 3 + count;
    }
  }
  return results;
}

module.exports = { makeRow, decodeRun, decodeGet, decodeAll, decodeColumns, decodeQuery, decodeCheckpoint, decodeBatch };
