'use strict';

// offloop: SQLite for Node.js servers, run on threads of its own. The
// public API is in lib/; native.js finds and loads the addon.

const { Database, backup } = require('./lib/database.js');
const { Statement } = require('./lib/statement.js');
const { Transaction, ReadSnapshot } = require('./lib/transaction.js');
const { SQLTagStore } = require('./lib/tag-store.js');
const { Session } = require('./lib/session.js');
const { constants } = require('./lib/constants.js');

module.exports = { Database, backup, Statement, Transaction, ReadSnapshot, Session, SQLTagStore, constants };
