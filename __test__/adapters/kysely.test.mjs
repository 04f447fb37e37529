// offloop/kysely with the real Kysely: migrations, queries, transactions,
// savepoints, streaming and concurrency, through `new Kysely({ dialect })`.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';

import { CompiledQuery, Kysely, Migrator, sql } from 'kysely';
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
  const db = new Kysely({ dialect: new OffloopDialect({ database, ...options.dialect }) });
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
