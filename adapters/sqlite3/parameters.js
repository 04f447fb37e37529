'use strict';

// The parameter slots of one SQL statement as SQLite numbers them, read from
// the text alone: sqlite3 binds positional values by index, to named
// placeholders (`:a`, `@a`, `$a`) as well, where offloop (as node:sqlite)
// reaches a named slot only by its name. This file owns that numbering,
// with SQLite's tokenizer rules for what is a parameter (not inside a
// string, an identifier or a comment); it never binds a value and never
// touches a database.

/** Whether `c` (a UTF-16 code unit) may continue an identifier or a parameter name, as SQLite's tokenizer reads it. */
function isIdChar(c) {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 0x80;
}

/**
 * The name of each parameter slot of `sql` (one statement), by index - 1:
 * `':a'`, `'@a'`, `'$a'`, or null for an anonymous `?` or `?NNN` slot (and
 * a gap `?NNN` leaves). Null as a whole when there is no named slot.
 */
function parameterNames(sql) {
  const names = [];
  const seen = new Map();
  let named = false;
  let count = 0;
  let i = 0;
  const n = sql.length;
  const skipQuoted = (close) => {
    // From the opening quote: to after its closing one ('' and "" escape).
    i++;
    while (i < n) {
      if (sql.charCodeAt(i) === close) {
        if (close !== 93 && sql.charCodeAt(i + 1) === close) i += 2;
        else return i++;
      } else i++;
    }
    return i;
  };
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 39 || c === 34 || c === 96) skipQuoted(c);
    else if (c === 91) skipQuoted(93);
    else if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      while (i < n && sql.charCodeAt(i) !== 10) i++;
    } else if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === 63) {
      // `?` takes the next index; `?NNN` that index.
      let j = i + 1;
      while (j < n && sql.charCodeAt(j) >= 48 && sql.charCodeAt(j) <= 57) j++;
      const index = j > i + 1 ? Number(sql.slice(i + 1, j)) : count + 1;
      while (names.length < index) names.push(null);
      count = Math.max(count, index);
      i = j;
    } else if (c === 58 || c === 64 || c === 36 || c === 35) {
      let j = i + 1;
      for (;;) {
        if (j < n && isIdChar(sql.charCodeAt(j))) j++;
        else if (c === 36 && sql.charCodeAt(j) === 58 && sql.charCodeAt(j + 1) === 58) j += 2;
        else if (c === 36 && sql.charCodeAt(j) === 40 && j > i + 1) {
          // A TCL-style `$name(...)` suffix is part of the name.
          const close = sql.indexOf(')', j);
          j = close === -1 ? n : close + 1;
          break;
        } else break;
      }
      if (j > i + 1) {
        const name = sql.slice(i, j);
        if (!seen.has(name)) {
          count++;
          while (names.length < count) names.push(null);
          names[count - 1] = name;
          seen.set(name, count);
          named = true;
        }
      }
      i = j;
    } else if (isIdChar(c)) {
      // A whole word: a `$` inside an identifier is no parameter.
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
    } else i++;
  }
  return named ? names : null;
}

module.exports = { parameterNames };
