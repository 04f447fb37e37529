// offloop/sqlite3 and offloop/knex for CommonJS callers.

import sqlite3 = require('offloop/sqlite3');
import OffloopClient = require('offloop/knex');
import knex = require('knex');

const db = new sqlite3.Database(':memory:');
db.get('SELECT 1 AS one', (err: sqlite3.SqliteError | null, row: { one: number }) => console.log(err?.code, row.one));
db.close();
const k = knex.knex({ client: OffloopClient, connection: { filename: ':memory:' }, useNullAsDefault: true });
void k.destroy();
