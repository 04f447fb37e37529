// offloop/sqlite3 and offloop/knex for ES modules: the sqlite3 API as
// callers write it, which must compile; @ts-expect-error lines must not.

import knex from 'knex';
import OffloopClient from 'offloop/knex';
import { Database as OffloopDatabase } from 'offloop';
import sqlite3, { Database, OPEN_READONLY, type RunResult, type SqliteError } from 'offloop/sqlite3';

const db = new Database(':memory:', (err: SqliteError | null) => {
  if (err) console.log(err.errno, err.code);
});
const withMode = new sqlite3.Database('app.db', sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, { readers: 2 }, () => {});
const withOptions = new Database('app.db', { readers: 0, timeout: 5000 });
new Database('app.db', OPEN_READONLY);

db.serialize(() => {
  db.run('CREATE TABLE t(x)', function (this: RunResult, err) {
    console.log(this.lastID, this.changes, err?.message);
  });
  db.run('INSERT INTO t VALUES (?)', 1);
  db.get<{ x: number }>('SELECT x FROM t', (err, row) => console.log(row.x));
  db.all('SELECT x FROM t WHERE x > $min', { $min: 0 }, (err, rows) => console.log(rows.length));
  db.each('SELECT x FROM t', (err, row) => console.log(row), (err, count) => console.log(count));
  db.map('SELECT x, x FROM t', (err, map) => console.log(map));
});
const stmt = db.prepare('SELECT ? AS v');
stmt.bind(1).get((err, row) => console.log(row)).reset().all(5, (err, rows) => console.log(rows));
const same: Database = stmt.finalize();
db.configure('busyTimeout', 1000).configure('limit', sqlite3.LIMIT_SQL_LENGTH, 10000);
db.on('trace', (sql: string) => console.log(sql)).on('profile', (sql: string, ms: number) => console.log(sql, ms));
const backup = db.backup('copy.db');
backup.step(-1, function (err, completed: boolean) {
  console.log(completed, this.remaining, this.pageCount, this.idle, this.failed);
  this.finish();
});
console.log(db.stats().readers.length, db.offloop.isOpen, db.open, sqlite3.VERSION, sqlite3.VERSION_NUMBER, sqlite3.SOURCE_ID, sqlite3.path.length);
sqlite3.verbose().cached.Database('app.db');
const cachedWithNew: Database = new sqlite3.cached.Database('app.db', sqlite3.OPEN_READONLY);
const sourceId: string = OffloopDatabase.sqliteSourceId;
console.log(sourceId);
const tuned = sqlite3.withOptions({ readers: 2 });
new tuned.Database('app.db').close();
// @ts-expect-error withOptions() takes offloop's options
sqlite3.withOptions({ readers: 'many' });
db.close();
withMode.close();
withOptions.close();
console.log(same);

// @ts-expect-error the filename is a string
new Database(5);
// @ts-expect-error configure() knows busyTimeout and limit
db.configure('nothing', 1);

const k = knex({ client: OffloopClient, connection: { filename: 'app.db' }, useNullAsDefault: true });
await k.destroy();
