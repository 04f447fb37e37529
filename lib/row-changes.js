'use strict';

// Not public API: SQLite's update hook on the writer, for offloop/sqlite3's
// 'change' event. `want(on)` starts or stops recording the rows the writer
// changes; `take()` returns them, oldest first, as `{ op, database, table,
// rowid }`. This file only reaches the addon; it never emits anything.

const { native } = require('./calls.js');
const { nativeOf } = require('./database.js');

function rowChanges(db) {
  return {
    want(on) {
      const handle = nativeOf(db);
      if (handle !== null) native.wantRowChanges(handle, on);
    },
    take() {
      const handle = nativeOf(db);
      return handle === null ? [] : native.takeRowChanges(handle);
    },
  };
}

module.exports = { rowChanges };
