// offloop/kysely with the real Kysely: migrations, queries, transactions,
// savepoints, streaming and concurrency, through `new Kysely({ dialect })`.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';

import { CompiledQuery, Kysely, Migrator, SqliteDriver, sql } from 'kysely';
import { OffloopDialect } from 'offloop/kysely';

import { Database, readerExecuted, tempDir } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const tmp = tempDir('kysely');
after(() => tmp.cleanup());

const migrations = {
  '0001_users': {
    async up(db) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db) {
      await db.schema.dropTable('users').execute();
    },
  },
  '0002_posts': {
    async up(db) {
      await db.schema
        .createTable('posts')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
        .addColumn('title', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db) {
      await db.schema.dropTable('posts').execute();
    },
  },
};

function migrator(db) {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

/** A migrated database and Kysely on it; `close()` destroys Kysely, which closes the database. */
async function open(options = {}) {
  const database = await Database.open(tmp.file(), options.database ?? {});
  const db = new Kysely({ dialect: new OffloopDialect({ database, ...options.dialect }), ...options.kysely });
  const { error } = await migrator(db).migrateToLatest();
  assert.equal(error, undefined);
  return { database, db, close: () => db.destroy() };
}

test('migrations apply once; running them again does nothing', async () => {
  const database = await Database.open(tmp.file());
  const db = new Kysely({ dialect: new OffloopDialect({ database }) });
  try {
    const first = await migrator(db).migrateToLatest();
    assert.equal(first.error, undefined);
    assert.deepEqual(
      first.results.map((r) => [r.migrationName, r.status]),
      [
        ['0001_users', 'Success'],
        ['0002_posts', 'Success'],
      ],
    );
    const again = await migrator(db).migrateToLatest();
    assert.equal(again.error, undefined);
    assert.deepEqual(again.results, []);
    const tables = await db.introspection.getTables();
    assert.deepEqual(tables.map((t) => t.name).sort(), ['posts', 'users']);
  } finally {
    await db.destroy();
  }
});

test('two migrators started at once apply each migration once', async () => {
  const database = await Database.open(tmp.file());
  const db = new Kysely({ dialect: new OffloopDialect({ database }) });
  try {
    const [a, b] = await Promise.all([migrator(db).migrateToLatest(), migrator(db).migrateToLatest()]);
    assert.equal(a.error, undefined);
    assert.equal(b.error, undefined);
    assert.equal(a.results.length + b.results.length, 2);
    const applied = await db.selectFrom('kysely_migration').select('name').orderBy('name').execute();
    assert.deepEqual(
      applied.map((r) => r.name),
      ['0001_users', '0002_posts'],
    );
  } finally {
    await db.destroy();
  }
});

test('inserts with RETURNING, updates, a join and raw SQL', async () => {
  const { db, close } = await open();
  try {
    const ada = await db
      .insertInto('users')
      .values({ email: 'ada@example.com', name: 'Ada' })
      .returning(['id', 'email'])
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...ada }, { id: 1, email: 'ada@example.com' });
    const inserted = await db.insertInto('users').values({ email: 'bob@example.com', name: 'Bob' }).executeTakeFirst();
    assert.equal(inserted.insertId, 2n);
    assert.equal(inserted.numInsertedOrUpdatedRows, 1n);
    await db
      .insertInto('posts')
      .values([
        { user_id: 1, title: 'one' },
        { user_id: 1, title: 'two' },
        { user_id: 2, title: 'three' },
      ])
      .execute();

    const updated = await db.updateTable('users').set({ name: 'Ada L.' }).where('id', '=', 1).executeTakeFirst();
    assert.equal(updated.numUpdatedRows, 1n);
    const none = await db.updateTable('users').set({ name: 'x' }).where('id', '=', 99).executeTakeFirst();
    assert.equal(none.numUpdatedRows, 0n);

    const joined = await db
      .selectFrom('posts')
      .innerJoin('users', 'users.id', 'posts.user_id')
      .select(['users.name', 'posts.title'])
      .orderBy('posts.id')
      .execute();
    assert.deepEqual(
      joined.map((r) => [r.name, r.title]),
      [
        ['Ada L.', 'one'],
        ['Ada L.', 'two'],
        ['Bob', 'three'],
      ],
    );

    const counts = await sql`SELECT user_id, count(*) AS n FROM posts GROUP BY user_id ORDER BY user_id`.execute(db);
    assert.deepEqual(
      counts.rows.map((r) => [r.user_id, r.n]),
      [
        [1, 2],
        [2, 1],
      ],
    );
    const deleted = await sql`DELETE FROM posts WHERE user_id = ${2}`.execute(db);
    assert.equal(deleted.numAffectedRows, 1n);
    // Integers bind as INTEGER, as on better-sqlite3: 5 / 2 is 2.
    const division = await sql`SELECT ${5} / ${2} AS q, typeof(${5}) AS t`.execute(db);
    assert.deepEqual({ ...division.rows[0] }, { q: 2, t: 'integer' });
  } finally {
    await close();
  }
});

test('a committed transaction keeps its writes', async () => {
  const { db, close } = await open();
  try {
    const id = await db.transaction().execute(async (trx) => {
      const user = await trx
        .insertInto('users')
        .values({ email: 'c@example.com', name: 'C' })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.insertInto('posts').values({ user_id: user.id, title: 'first' }).execute();
      return user.id;
    });
    const posts = await db.selectFrom('posts').select('title').where('user_id', '=', id).execute();
    assert.deepEqual(
      posts.map((p) => p.title),
      ['first'],
    );
  } finally {
    await close();
  }
});

test('a transaction failing on a unique constraint leaves nothing behind and carries sqliteCode', async () => {
  const { db, close } = await open();
  try {
    await db.insertInto('users').values({ email: 'taken@example.com', name: 'T' }).execute();
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values({ email: 'new@example.com', name: 'N' }).execute();
        await trx.insertInto('users').values({ email: 'taken@example.com', name: 'again' }).execute();
      }),
      { code: 'ERR_SQLITE_ERROR', sqliteCode: 'SQLITE_CONSTRAINT_UNIQUE' },
    );
    const emails = await db.selectFrom('users').select('email').execute();
    assert.deepEqual(
      emails.map((u) => u.email),
      ['taken@example.com'],
    );
  } finally {
    await close();
  }
});

test('a savepoint rolled back while its transaction commits', async () => {
  const { db, close } = await open();
  try {
    const trx = await db.startTransaction().execute();
    await trx.insertInto('users').values({ email: 'kept@example.com', name: 'K' }).execute();
    const sp = await trx.savepoint('nested').execute();
    await sp.insertInto('users').values({ email: 'dropped@example.com', name: 'D' }).execute();
    const inner = await sp.savepoint('deeper').execute();
    await inner.insertInto('users').values({ email: 'dropped2@example.com', name: 'D2' }).execute();
    const back = await inner.rollbackToSavepoint('nested').execute();
    await back.releaseSavepoint('nested').execute();
    await back.commit().execute();
    const emails = await db.selectFrom('users').select('email').execute();
    assert.deepEqual(
      emails.map((u) => u.email),
      ['kept@example.com'],
    );
  } finally {
    await close();
  }
});

test('stream() yields every row through iterate()', async () => {
  const { db, close } = await open();
  try {
    await db
      .insertInto('users')
      .values(Array.from({ length: 600 }, (_, i) => ({ email: `u${i}@example.com`, name: `u${i}` })))
      .execute();
    let n = 0;
    for await (const row of db.selectFrom('users').select(['id', 'name']).orderBy('id').stream(100)) {
      assert.equal(row.name, `u${n}`);
      n += 1;
    }
    assert.equal(n, 600);
  } finally {
    await close();
  }
});

test('32 concurrent transactions and 200 concurrent reads, the reads on reader threads', async () => {
  const { database, db, close } = await open();
  try {
    await db
      .insertInto('users')
      .values(Array.from({ length: 200 }, (_, i) => ({ email: `r${i}@example.com`, name: `reader ${i}` })))
      .execute();
    await db.insertInto('posts').values({ user_id: 1, title: 'counter' }).execute();

    const byId = (id) => db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', id).executeTakeFirstOrThrow();
    await byId(1); // the writer prepares a new SQL text first and learns it may run on a reader

    const before = readerExecuted(database.stats());
    const [reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byId(i + 1))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          db.transaction().execute(async (trx) => {
            const { title } = await trx.selectFrom('posts').select('title').where('id', '=', 1).executeTakeFirstOrThrow();
            const seen = title === 'counter' ? 0 : Number(title);
            await trx.updateTable('posts').set({ title: String(seen + 1) }).where('id', '=', 1).execute();
            await trx.insertInto('posts').values({ user_id: 2, title: `tx ${i} saw ${seen}` }).execute();
            return seen;
          }),
        ),
      ),
    ]);
    reads.forEach((row, i) => assert.deepEqual({ ...row }, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    assert.equal(readerExecuted(database.stats()) - before, 200, 'every read ran on a reader');

    assert.deepEqual([...writes].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    const counter = await db.selectFrom('posts').select('title').where('id', '=', 1).executeTakeFirstOrThrow();
    assert.equal(counter.title, '32');
    const logged = await db.selectFrom('posts').select('title').where('user_id', '=', 2).execute();
    assert.equal(logged.length, 32);
    for (const { title } of logged) {
      const [, i, seen] = title.match(/^tx (\d+) saw (\d+)$/);
      assert.equal(writes[Number(i)], Number(seen));
    }
  } finally {
    await close();
  }
});

test('the dialect refuses a config without a database or with an unknown transaction mode', () => {
  assert.throws(() => new OffloopDialect({}), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => new OffloopDialect({ database: {}, transactionMode: 'later' }), { code: 'ERR_INVALID_ARG_VALUE' });
});

test('CommonJS gets the same dialect from require()', async () => {
  const { OffloopDialect: Cjs } = require('offloop/kysely');
  const { Kysely: CjsKysely } = require('kysely');
  const db = new CjsKysely({ dialect: new Cjs({ database: () => Database.open(tmp.file()) }) });
  try {
    const { rows } = await db.executeQuery(CompiledQuery.raw('SELECT 1 AS one'));
    assert.deepEqual({ ...rows[0] }, { one: 1 });
  } finally {
    await db.destroy();
  }
});

// What Kysely's own SqliteDialect (on better-sqlite3) gives, the dialect
// gives: results shaped alike, BLOBs as Buffers, migrations outside a
// transaction, transaction control in Kysely's log.

test('INSERT OR IGNORE and ON CONFLICT DO NOTHING report the last insert rowid, as SqliteDialect does', async () => {
  const { db, close } = await open();
  try {
    const first = await db.insertInto('users').values({ email: 'a@example.com', name: 'A' }).executeTakeFirst();
    assert.equal(first.insertId, 1n);
    const ignored = await db.insertInto('users').orIgnore().values({ email: 'a@example.com', name: 'again' }).executeTakeFirst();
    assert.equal(ignored.numInsertedOrUpdatedRows, 0n);
    assert.equal(ignored.insertId, 1n);
    const nothing = await db
      .insertInto('users')
      .values({ email: 'a@example.com', name: 'again' })
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    assert.equal(nothing.numInsertedOrUpdatedRows, 0n);
    assert.equal(nothing.insertId, 1n);
  } finally {
    await close();
  }
});

test('a statement that returns rows gives only its rows; one that returns none gives its counts', async () => {
  const { db, close } = await open();
  try {
    const returning = await db.executeQuery(CompiledQuery.raw("INSERT INTO users(email, name) VALUES ('r@example.com', 'R') RETURNING id"));
    assert.deepEqual(Object.keys(returning), ['rows']);
    assert.deepEqual({ ...returning.rows[0] }, { id: 1 });
    const updated = await db.executeQuery(CompiledQuery.raw("UPDATE users SET name = 'S' RETURNING name"));
    assert.deepEqual(Object.keys(updated), ['rows']);
    const select = await db.executeQuery(CompiledQuery.raw('SELECT count(*) AS n FROM users'));
    assert.deepEqual(Object.keys(select), ['rows']);
    const deleted = await db.deleteFrom('users').where('email', '=', 'nobody').executeTakeFirst();
    assert.equal(deleted.numDeletedRows, 0n);
    const raw = await db.executeQuery(CompiledQuery.raw("DELETE FROM users WHERE email = 'r@example.com'"));
    assert.deepEqual(raw, { numAffectedRows: 1n, insertId: 1n, rows: [] });
  } finally {
    await close();
  }
});

test('BLOBs come back as Buffers, from queries and streams', async () => {
  const { db, close } = await open();
  try {
    const { rows } = await sql`SELECT x'00ff10' AS b, 'text' AS t`.execute(db);
    assert.ok(Buffer.isBuffer(rows[0].b));
    assert.deepEqual([...rows[0].b], [0, 255, 16]);
    assert.equal(rows[0].t, 'text');
    await sql`CREATE TABLE files(id INTEGER PRIMARY KEY, data BLOB)`.execute(db);
    await db.insertInto('files').values({ data: Buffer.from('abc') }).execute();
    const file = await db.selectFrom('files').select('data').executeTakeFirstOrThrow();
    assert.ok(Buffer.isBuffer(file.data));
    assert.equal(file.data.toString(), 'abc');
    for await (const row of db.selectFrom('files').select('data').stream(1)) assert.ok(Buffer.isBuffer(row.data));
  } finally {
    await close();
  }
});

test("migrations run outside a transaction, as on Kysely's SQLite adapter", async () => {
  const database = await Database.open(tmp.file());
  const db = new Kysely({ dialect: new OffloopDialect({ database }) });
  try {
    assert.equal(db.getExecutor().adapter.supportsTransactionalDdl, false);
    const seen = [];
    const provider = {
      getMigrations: async () => ({
        '0001_pragma': {
          async up(m) {
            seen.push(database.isTransaction);
            // Only outside a transaction does this take effect.
            await sql`PRAGMA foreign_keys = OFF`.execute(m);
            const { rows } = await sql`PRAGMA foreign_keys`.execute(m);
            seen.push(rows[0].foreign_keys);
            await sql`PRAGMA foreign_keys = ON`.execute(m);
          },
        },
      }),
    };
    const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
    assert.equal(error, undefined);
    assert.deepEqual(
      results.map((r) => r.status),
      ['Success'],
    );
    assert.deepEqual(seen, [false, 0]);
  } finally {
    await db.destroy();
  }
});

test("Kysely's log sees begin, commit, rollback and the savepoint statements", async () => {
  const logged = [];
  const { db, close } = await open({ kysely: { log: (event) => logged.push(event.query.sql) } });
  try {
    logged.length = 0;
    const trx = await db.startTransaction().execute();
    const sp = await trx.savepoint('nested').execute();
    await sp.insertInto('users').values({ email: 'x@example.com', name: 'X' }).execute();
    const back = await sp.rollbackToSavepoint('nested').execute();
    const released = await back.releaseSavepoint('nested').execute();
    await released.commit().execute();
    await assert.rejects(
      db.transaction().execute(async () => {
        throw new Error('no');
      }),
      /no/,
    );
    assert.deepEqual(logged, [
      'begin',
      'savepoint "nested"',
      'insert into "users" ("email", "name") values (?, ?)',
      'rollback to "nested"',
      'release "nested"',
      'commit',
      'begin',
      'rollback',
    ]);
    const { n } = (await sql`SELECT count(*) AS n FROM users`.execute(db)).rows[0];
    assert.equal(n, 0);
  } finally {
    await close();
  }
});

test('a failed query names the function that made it on the stack: directly, in a transaction and in a stream', async () => {
  const { db, close } = await open();
  try {
    await db.insertInto('users').values({ email: 'taken@example.com', name: 'T' }).execute();
    async function kyselyInsertTaken() {
      await db.insertInto('users').values({ email: 'taken@example.com', name: 'again' }).execute();
    }
    async function kyselyTransactionInsertTaken() {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values({ email: 'taken@example.com', name: 'again' }).execute();
      });
    }
    async function kyselyStreamMissingTable() {
      for await (const row of db.selectFrom('missing').selectAll().stream(10)) assert.fail(`a row: ${row}`);
    }
    for (const fn of [kyselyInsertTaken, kyselyTransactionInsertTaken, kyselyStreamMissingTable]) {
      const err = await fn().then(
        () => assert.fail('it resolved'),
        (e) => e,
      );
      assert.equal(err.code, 'ERR_SQLITE_ERROR');
      assert.match(err.stack, new RegExp(`\\b${fn.name}\\b`), err.stack);
    }
  } finally {
    await close();
  }
});

test("a transaction begins deferred by default, as SqliteDialect's `begin`: another connection writes while it has only read; transactionMode 'immediate' takes the write lock at begin", async () => {
  for (const transactionMode of [undefined, 'immediate']) {
    const file = tmp.file();
    const logged = [];
    const database = await Database.open(file);
    const db = new Kysely({
      dialect: new OffloopDialect({ database, ...(transactionMode && { transactionMode }) }),
      log: (event) => logged.push(event.query.sql),
    });
    const other = await Database.open(file, { timeout: 0 });
    try {
      await sql`CREATE TABLE t(v TEXT)`.execute(db);
      logged.length = 0;
      const trx = await db.startTransaction().execute();
      assert.equal((await sql`SELECT count(*) AS n FROM t`.execute(trx)).rows[0].n, 0);
      const write = other.exec("INSERT INTO t VALUES ('other')");
      if (transactionMode === undefined) {
        await write;
        // Deferred: a transaction that read before another connection
        // wrote cannot write (the reason for 'immediate').
        await assert.rejects(sql`INSERT INTO t VALUES ('mine')`.execute(trx), { sqliteCode: /^SQLITE_BUSY/ });
        await trx.rollback().execute();
        assert.deepEqual(logged, ['begin', 'SELECT count(*) AS n FROM t', "INSERT INTO t VALUES ('mine')", 'rollback']);
      } else {
        await assert.rejects(write, { sqliteCode: 'SQLITE_BUSY' });
        await sql`INSERT INTO t VALUES ('mine')`.execute(trx);
        await trx.commit().execute();
        assert.deepEqual(logged, ['begin immediate', 'SELECT count(*) AS n FROM t', "INSERT INTO t VALUES ('mine')", 'commit']);
      }
    } finally {
      await other.close();
      await db.destroy();
    }
  }
});

test("Kysely's transactions go through SqliteDriver's own begin, commit and rollback: a begin that fails runs neither the callback nor a rollback", async () => {
  const { db, close } = await open();
  const proto = SqliteDriver.prototype;
  const { beginTransaction, rollbackTransaction } = proto;
  const calls = { begin: 0, rollback: 0, callback: 0 };
  proto.beginTransaction = async function failingBegin() {
    calls.begin++;
    throw new Error('begin failed');
  };
  proto.rollbackTransaction = async function countedRollback(...args) {
    calls.rollback++;
    return rollbackTransaction.apply(this, args);
  };
  try {
    await assert.rejects(
      db.transaction().execute(async () => {
        calls.callback++;
      }),
      /begin failed/,
    );
    assert.deepEqual(calls, { begin: 1, rollback: 0, callback: 0 });
    proto.beginTransaction = beginTransaction;
    // The connection is left as it was: the next transaction runs and
    // rolls back through the same methods.
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values({ email: 'r@example.com', name: 'R' }).execute();
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.deepEqual(calls, { begin: 1, rollback: 1, callback: 0 });
    assert.deepEqual(await db.selectFrom('users').selectAll().execute(), []);
  } finally {
    proto.beginTransaction = beginTransaction;
    proto.rollbackTransaction = rollbackTransaction;
    await close();
  }
});
