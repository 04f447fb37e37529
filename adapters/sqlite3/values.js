'use strict';

// Values between sqlite3's conventions and offloop's. This file owns the
// two conversions: the parameters a sqlite3 call takes (every form it
// accepts) into the arguments of an offloop statement call, and offloop's
// rows into the rows sqlite3 hands out. It never touches a database.
//
// sqlite3 binds a number that is a 32-bit integer as INTEGER and any other
// number as REAL; offloop binds numbers as REAL and BigInts as INTEGER, so
// the 32-bit integers become BigInts here. A value sqlite3 cannot bind
// (undefined, a BigInt, a symbol) is skipped: its parameter stays unbound,
// which is NULL, and it counts for nothing when it comes last. Any other
// object binds as the text '[object Object]', as sqlite3 does.

const SKIP = Symbol('skip');

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function bindValue(value) {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX ? BigInt(value) : value;
    case 'boolean':
      return value ? 1n : 0n;
    case 'object':
      if (value === null) return null;
      if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
      if (value instanceof RegExp) return String(value);
      if (value instanceof Date) return value.getTime();
      return '[object Object]';
    case 'function':
      return '[object Object]';
    default:
      return SKIP;
  }
}

// sqlite3 reads an object key that is an integer as a parameter's index.
function indexOf(key) {
  const n = Number(key);
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && String(n) === key ? n : null;
}

/**
 * The arguments of one offloop call for sqlite3 parameters `params` (the
 * call's arguments without its callbacks), or null when there are none
 * (sqlite3 then keeps the statement's earlier bindings).
 */
function bindArgs(params) {
  if (params.length === 0) return null;
  const first = params[0];
  let positional;
  if (Array.isArray(first)) positional = first;
  else if (first === null || typeof first !== 'object' || first instanceof RegExp || first instanceof Date || ArrayBuffer.isView(first)) {
    positional = params;
  } else {
    return namedArgs(first);
  }
  return withoutSkips(positional.map(bindValue));
}

// Skipped values at the end are dropped; those before a bound one are NULL.
function withoutSkips(values) {
  let end = values.length;
  while (end > 0 && values[end - 1] === SKIP) end--;
  const out = values.slice(0, end);
  for (let i = 0; i < out.length; i++) if (out[i] === SKIP || out[i] === undefined) out[i] = null;
  return out;
}

// An object of `$name` / `:name` / `@name` keys, and integer keys for
// positions. offloop takes the names in one leading object and the
// positions after it.
function namedArgs(object) {
  let named = null;
  let positions = null;
  for (const key of Object.keys(object)) {
    const value = bindValue(object[key]);
    if (value === SKIP) continue;
    const index = indexOf(key);
    if (index === null) {
      named ??= {};
      named[key] = value;
    } else {
      positions ??= [];
      positions[index - 1] = value;
    }
  }
  const args = named === null ? [] : [named];
  if (positions !== null) args.push(...withoutSkips(Array.from(positions)));
  return args;
}

/**
 * offloop arguments `args` (bindArgs') for a statement whose slots are
 * named `names` (parameters.js, null: no named slot), with sqlite3's rule
 * that a positional value binds by index: one at the index of a named slot
 * goes into the named object under that name, as offloop reaches such a
 * slot only by name. The anonymous values left fill the `?` slots in order,
 * as before.
 */
function byIndex(args, names) {
  if (names === null || args.length === 0) return args;
  const first = args[0];
  const hasNamed = first !== null && typeof first === 'object' && !(first instanceof Uint8Array);
  const positional = hasNamed ? args.slice(1) : args;
  if (positional.length === 0) return args;
  const named = hasNamed ? { ...first } : {};
  const anonymous = [];
  for (let i = 0; i < positional.length; i++) {
    const name = i < names.length ? names[i] : null;
    if (name === null) anonymous.push(positional[i]);
    else if (!(name in named)) named[name] = positional[i];
  }
  return [named, ...anonymous];
}

/**
 * A row as sqlite3 makes it: a plain object, integers as numbers (offloop
 * reads them as BigInts so that none is refused), blobs as Buffers.
 */
function toRow(row) {
  const out = {};
  for (const key in row) {
    const value = row[key];
    if (typeof value === 'bigint') out[key] = Number(value);
    else if (value instanceof Uint8Array) out[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else out[key] = value;
  }
  return out;
}

module.exports = { bindArgs, byIndex, toRow };
