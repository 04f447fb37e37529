'use strict';

// Turning the addon's payloads into node:sqlite-shaped values. Rows arrive
// as column names once plus a flat list of values; the objects are built
// here, where V8 makes property stores cheap.

function makeRow(columns, values, offset, arrays) {
  const n = columns.length;
  if (arrays) return values.slice(offset, offset + n);
  const row = { __proto__: null };
  for (let c = 0; c < n; c++) row[columns[c]] = values[offset + c];
  return row;
}

function decodeRun(pair) {
  return { changes: pair[0], lastInsertRowid: pair[1] };
}

function decodeGet([columns, values], arrays) {
  return values.length === 0 ? undefined : makeRow(columns, values, 0, arrays);
}

function decodeAll([columns, values], arrays) {
  const n = columns.length;
  const count = n === 0 ? 0 : values.length / n;
  const rows = new Array(count);
  for (let r = 0; r < count; r++) rows[r] = makeRow(columns, values, r * n, arrays);
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

function decodeCheckpoint([logFrames, checkpointedFrames]) {
  return { logFrames, checkpointedFrames };
}

// `[tag, payload]` per statement: 0 a run result, 1 rows.
function decodeBatch(results, arrays) {
  return results.map(([tag, payload], i) => (tag === 0 ? decodeRun(payload) : decodeAll(payload, arrays[i])));
}

module.exports = { makeRow, decodeRun, decodeGet, decodeAll, decodeColumns, decodeCheckpoint, decodeBatch };
