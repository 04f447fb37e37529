'use strict';

// offloop-sqlite3: offloop/sqlite3 under a package of its own, so that an
// application can install it under the name `sqlite3` and every
// require('sqlite3') in its dependency tree gets offloop. It holds nothing
// but this re-export.

module.exports = require('offloop/sqlite3');
