'use strict';

// offloop/sqlite3: the `sqlite3` module's shape (node-sqlite3 6) on offloop.
// This file assembles the module: the classes, verbose(), cached.Database
// and the constants. What each piece does is in its own file.

const path = require('node:path');

const offloop = require('../../index.js');
const native = require('../../native.js');
const { Database } = require('./database.js');
const { Statement } = require('./statement.js');
const { Backup } = require('./backup.js');
const { OPEN, RESULT, LIMIT } = require('./constants.js');
const { extendTrace } = require('./verbose.js');

const sqlite3 = module.exports;

sqlite3.Database = Database;
sqlite3.Statement = Statement;
sqlite3.Backup = Backup;
// sqlite3's classes read their arguments natively: each one's `length` is 0.
for (const cls of [Database, Statement, Backup]) Object.defineProperty(cls, 'length', { value: 0 });

// 3.52.0 is 3052000.
function versionNumber(version) {
  const [major, minor, patch] = version.split('.').map(Number);
  return major * 1000000 + minor * 1000 + (patch || 0);
}

const constants = {
  ...OPEN,
  VERSION: offloop.Database.sqliteVersion,
  SOURCE_ID: offloop.Database.sqliteSourceId,
  VERSION_NUMBER: versionNumber(offloop.Database.sqliteVersion),
  ...RESULT,
  ...LIMIT,
};
for (const [name, value] of Object.entries(constants)) {
  Object.defineProperty(sqlite3, name, { value, enumerable: true, configurable: true });
}

// sqlite3's module names the file of its native addon (`path`, which the
// `bindings` package that loads it sets); this one names offloop's.
sqlite3.path = Object.values(require.cache).find((m) => m.exports === native && m.filename.endsWith('.node'))?.filename ?? '';

/**
 * `cached.Database(filename[, mode][, callback])`: one Database per file
 * path; the callback of a later call runs once that database is open.
 * Called with `new` or without, as sqlite3's is (a plain function, which
 * `new` can call: what it returns is the result).
 */
sqlite3.cached = {
  Database: function cachedDatabase(file, a, b) {
    if (file === '' || file === ':memory:') return new Database(file, a, b);
    const key = path.resolve(file);
    const known = sqlite3.cached.objects[key];
    if (known === undefined) {
      const db = new Database(key, a, b);
      sqlite3.cached.objects[key] = db;
      return db;
    }
    const callback = typeof a === 'number' ? b : a;
    if (typeof callback === 'function') {
      const call = () => callback.call(known, null);
      if (known.open) process.nextTick(call);
      else known.once('open', call);
    }
    return known;
  },
  objects: {},
};

/**
 * The module with `options` as the offloop options of every Database it
 * opens (options given to one open are laid over them): for libraries that
 * take a module and open databases themselves, such as Sequelize's
 * `dialectModule` and TypeORM's `driver`.
 */
sqlite3.withOptions = function withOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
  const defaults = { ...options };
  class OptionedDatabase extends Database {
    constructor(filename, ...rest) {
      const at = typeof rest[0] === 'number' ? 1 : 0;
      const given = rest[at] !== null && typeof rest[at] === 'object' ? rest[at] : null;
      if (given === null) rest.splice(at, 0, defaults);
      else rest[at] = { ...defaults, ...given };
      super(filename, ...rest);
    }
  }
  Object.defineProperty(OptionedDatabase, 'name', { value: 'Database' });
  Object.defineProperty(OptionedDatabase, 'length', { value: 0 });
  const module = Object.create(sqlite3, { Database: { value: OptionedDatabase, enumerable: true } });
  return module;
};

let verbose = false;

/**
 * Errors passed to callbacks get the stack of the call that made them
 * (`--> in Database#run(...)`) after their own. Returns the module.
 */
sqlite3.verbose = function () {
  if (!verbose) {
    for (const name of ['prepare', 'get', 'run', 'all', 'each', 'map', 'close', 'exec']) extendTrace(Database.prototype, name);
    for (const name of ['bind', 'get', 'run', 'all', 'each', 'map', 'reset', 'finalize']) extendTrace(Statement.prototype, name);
    verbose = true;
  }
  return sqlite3;
};
