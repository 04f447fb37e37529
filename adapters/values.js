'use strict';

// Parameter values as the query builders' SQLite drivers bind them. This
// file owns that one conversion; it never touches a database.
//
// offloop binds every JS number as REAL, as node:sqlite does. Kysely's and
// Drizzle's SQLite dialects were written against better-sqlite3 and libsql,
// which bind a number that is an integer as INTEGER; where no column
// affinity converts the value back, the difference shows (`SELECT ? / 2`
// with 5 is 2 there and 2.5 here, json_object() writes 5.0, typeof() says
// 'real'). So an integer number within JavaScript's safe range binds as a
// BigInt, which offloop binds as INTEGER.

/** `params`, with safe-integer numbers as BigInts (the same array when none). */
function bindable(params) {
  let out = null;
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (typeof value === 'number' && Number.isSafeInteger(value)) {
      if (out === null) out = Array.from(params);
      out[i] = BigInt(value);
    }
  }
  return out ?? params;
}

module.exports = { bindable };
