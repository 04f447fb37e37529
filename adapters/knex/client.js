'use strict';

// offloop/knex: Knex's own sqlite3 client with offloop/sqlite3 as its
// driver, for `knex({ client: require('offloop/knex'), connection })`.
// Knex compiles and runs queries as it does on sqlite3; this file owns
// only which driver it loads and how offloop's options reach the open
// (`connection.offloop`). It never runs a query itself.
//
// Knex's sqlite3 client class is passed in (index.js passes the one of the
// caller's Knex), so the client extends the Knex that uses it.

const sqlite3 = require('../sqlite3/index.js');

/** The offloop client class, built on Knex's `Client_SQLite3`. */
function createKnexClient(Client_SQLite3) {
  class Client_Offloop extends Client_SQLite3 {
    _driver() {
      return sqlite3;
    }

    // Knex's open, with offloop's options (`connection.offloop`) after the mode.
    acquireRawConnection() {
      const { filename, flags: names = [], offloop = {} } = this.connectionSettings;
      if (!Array.isArray(names)) throw new Error('flags must be an array of strings');
      let flags = this.driver.OPEN_READWRITE | this.driver.OPEN_CREATE;
      for (const name of names) {
        if (!name.startsWith('OPEN_') || !this.driver[name]) throw new Error(`flag ${name} not supported by node-sqlite3`);
        flags |= this.driver[name];
      }
      return new Promise((resolve, reject) => {
        const db = new this.driver.Database(filename, flags, offloop, (err) => (err ? reject(err) : resolve(db)));
      });
    }
  }
  Object.assign(Client_Offloop.prototype, { driverName: 'offloop/sqlite3' });
  return Client_Offloop;
}

module.exports = { createKnexClient };
