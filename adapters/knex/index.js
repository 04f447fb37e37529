'use strict';

// offloop/knex for CommonJS: the client built on require('knex')'s sqlite3 client.

const { createKnexClient } = require('./client.js');

module.exports = createKnexClient(require('knex/lib/dialects/sqlite3'));
