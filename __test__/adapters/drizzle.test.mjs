// offloop/drizzle with the real drizzle-orm: the migrator, queries, the
// relational API, transactions, savepoints, batches and concurrency.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, test } from 'node:test';

import { TransactionRollbackError, eq, sql } from 'drizzle-orm';
import { drizzle } from 'offloop/drizzle';
import { migrate } from 'offloop/drizzle/migrator';

import * as schema from './drizzle/schema.mjs';
import { Database, ROOT, readerExecuted, tempDir } from '../engine-helpers.mjs';

const { users, posts } = schema;
const require = createRequire(import.meta.url);
const tmp = tempDir('drizzle');
after(() => tmp.cleanup());

const migrationsFolder = path.join(ROOT, '__test__', 'adapters', 'drizzle', 'migrations');

async function open(config = {}) {
  const database = await Database.open(tmp.file());
  const db = drizzle(database, { schema, casing: 'snake_case', ...config });
  await migrate(db, { migrationsFolder });
  return { database, db, close: () => database.close() };
}

/** Inserts Ada with two posts and Bob with one. */
async function seed(db) {
  await db.insert(users).values([
    { id: 1, email: 'ada@example.com', name: 'Ada' },
    { id: 2, email: 'bob@example.com', name: 'Bob' },
  ]);
  await db.insert(posts).values([
    { authorId: 1, title: 'one' },
    { authorId: 1, title: 'two' },
    { authorId: 2, title: 'three' },
  ]);
}

test('migrations apply once; running them again does nothing', async () => {
  const { database, db, close } = await open();
  try {
    const applied = () => database.prepare('SELECT hash, created_at FROM __drizzle_migrations ORDER BY id').all();
    const first = await applied();
    assert.deepEqual(
      first.map((m) => m.created_at),
      [1760000000000, 1760000100000],
    );
    await migrate(db, { migrationsFolder });
    assert.deepEqual(await applied(), first);
    const tables = await database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\\_\\_%' ESCAPE '\\' ORDER BY name").all();
    assert.deepEqual(
      tables.map((t) => t.name),
      ['posts', 'users'],
    );
  } finally {
    await close();
  }
});

test('two migrators started at once apply each migration once', async () => {
  const database = await Database.open(tmp.file());
  const db = drizzle(database);
  try {
    await Promise.all([migrate(db, { migrationsFolder }), migrate(db, { migrationsFolder })]);
    const { n } = await database.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get();
    assert.equal(n, 2);
  } finally {
    await database.close();
  }
});

test('inserts with RETURNING, updates, a join and raw SQL', async () => {
  const { db, close } = await open();
  try {
    const [ada] = await db.insert(users).values({ email: 'ada@example.com', name: 'Ada' }).returning({ id: users.id, email: users.email });
    assert.deepEqual(ada, { id: 1, email: 'ada@example.com' });
    const result = await db.insert(users).values({ email: 'bob@example.com', name: 'Bob' });
    assert.deepEqual(result, { changes: 1, lastInsertRowid: 2 });
    await db.insert(posts).values([
      { authorId: 1, title: 'one' },
      { authorId: 2, title: 'two' },
    ]);

    const updated = await db.update(users).set({ name: 'Ada L.' }).where(eq(users.id, 1)).returning();
    assert.deepEqual(updated, [{ id: 1, email: 'ada@example.com', name: 'Ada L.' }]);

    const joined = await db
      .select({ name: users.name, title: posts.title })
      .from(posts)
      .innerJoin(users, eq(users.id, posts.authorId))
      .orderBy(posts.id);
    assert.deepEqual(joined, [
      { name: 'Ada L.', title: 'one' },
      { name: 'Bob', title: 'two' },
    ]);

    const first = await db.select().from(users).where(eq(users.id, 2)).get();
    assert.deepEqual(first, { id: 2, email: 'bob@example.com', name: 'Bob' });

    const counts = await db.all(sql`SELECT author_id, count(*) AS n FROM posts GROUP BY author_id ORDER BY author_id`);
    assert.deepEqual(
      counts.map((r) => [r.author_id, r.n]),
      [
        [1, 1],
        [2, 1],
      ],
    );
    assert.deepEqual(await db.values(sql`SELECT ${5} / ${2}, typeof(${5})`), [[2, 'integer']]);
    const deleted = await db.run(sql`DELETE FROM posts WHERE author_id = ${2}`);
    assert.equal(deleted.changes, 1);
  } finally {
    await close();
  }
});

test('a relational query with `with` loads each user with their posts', async () => {
  const { db, close } = await open();
  try {
    await seed(db);
    const found = await db.query.users.findMany({
      columns: { name: true },
      with: { posts: { columns: { title: true }, orderBy: (p, { asc }) => asc(p.id) } },
      orderBy: (u, { asc }) => asc(u.id),
    });
    assert.deepEqual(found, [
      { name: 'Ada', posts: [{ title: 'one' }, { title: 'two' }] },
      { name: 'Bob', posts: [{ title: 'three' }] },
    ]);
    const post = await db.query.posts.findFirst({ where: eq(posts.title, 'three'), with: { author: true } });
    assert.deepEqual(post, { id: 3, authorId: 2, title: 'three', author: { id: 2, email: 'bob@example.com', name: 'Bob' } });
  } finally {
    await close();
  }
});

test('a committed transaction keeps its writes', async () => {
  const { db, close } = await open();
  try {
    const id = await db.transaction(async (tx) => {
      const [user] = await tx.insert(users).values({ email: 'c@example.com', name: 'C' }).returning({ id: users.id });
      await tx.insert(posts).values({ authorId: user.id, title: 'first' });
      return user.id;
    });
    const found = await db.select({ title: posts.title }).from(posts).where(eq(posts.authorId, id));
    assert.deepEqual(found, [{ title: 'first' }]);
  } finally {
    await close();
  }
});

test('a transaction failing on a unique constraint leaves nothing behind and carries sqliteCode', async () => {
  const { db, close } = await open();
  try {
    await db.insert(users).values({ email: 'taken@example.com', name: 'T' });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.insert(users).values({ email: 'new@example.com', name: 'N' });
        await tx.insert(users).values({ email: 'taken@example.com', name: 'again' });
      }),
      (err) => {
        // Drizzle wraps driver errors in a DrizzleQueryError; offloop's is its cause.
        assert.equal(err.cause.code, 'ERR_SQLITE_ERROR');
        assert.equal(err.cause.sqliteCode, 'SQLITE_CONSTRAINT_UNIQUE');
        return true;
      },
    );
    const emails = await db.select({ email: users.email }).from(users);
    assert.deepEqual(emails, [{ email: 'taken@example.com' }]);
  } finally {
    await close();
  }
});

test('a nested transaction rolled back to its savepoint while the parent commits', async () => {
  const { db, close } = await open();
  try {
    await db.transaction(async (tx) => {
      await tx.insert(users).values({ email: 'kept@example.com', name: 'K' });
      await assert.rejects(
        tx.transaction(async (nested) => {
          await nested.insert(users).values({ email: 'dropped@example.com', name: 'D' });
          await nested.transaction(async (deeper) => {
            await deeper.insert(users).values({ email: 'dropped2@example.com', name: 'D2' });
          });
          nested.rollback();
        }),
        TransactionRollbackError,
      );
      await tx.insert(users).values({ email: 'after@example.com', name: 'A' });
    });
    const emails = await db.select({ email: users.email }).from(users).orderBy(users.id);
    assert.deepEqual(emails, [{ email: 'kept@example.com' }, { email: 'after@example.com' }]);
  } finally {
    await close();
  }
});

test('db.batch() runs its queries in one transaction and maps each result', async () => {
  const { db, close } = await open();
  try {
    const [inserted, run, all, first] = await db.batch([
      db.insert(users).values({ email: 'a@example.com', name: 'A' }).returning({ id: users.id }),
      db.insert(posts).values({ authorId: 1, title: 'p' }),
      db.select({ title: posts.title }).from(posts),
      db.query.users.findFirst({ with: { posts: true } }),
    ]);
    assert.deepEqual(inserted, [{ id: 1 }]);
    assert.equal(run.changes, 1);
    assert.deepEqual(all, [{ title: 'p' }]);
    assert.deepEqual(first, { id: 1, email: 'a@example.com', name: 'A', posts: [{ id: 1, authorId: 1, title: 'p' }] });
    await assert.rejects(
      db.batch([db.insert(users).values({ email: 'b@example.com', name: 'B' }), db.insert(users).values({ email: 'a@example.com', name: 'again' })]),
      { sqliteCode: 'SQLITE_CONSTRAINT_UNIQUE', batchIndex: 1 },
    );
    assert.equal((await db.select().from(users)).length, 1);
  } finally {
    await close();
  }
});

test('32 concurrent transactions and 200 concurrent reads, the reads on reader threads', async () => {
  const { database, db, close } = await open();
  try {
    await db.insert(users).values(Array.from({ length: 200 }, (_, i) => ({ id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` })));
    await db.insert(posts).values({ id: 1, authorId: 1, title: '0' });

    const byId = db
      .select()
      .from(users)
      .where(eq(users.id, sql.placeholder('id')))
      .prepare();
    await byId.get({ id: 1 }); // the writer prepares a new SQL text first and learns it may run on a reader

    const before = readerExecuted(database.stats());
    const [reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byId.get({ id: i + 1 }))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          db.transaction(async (tx) => {
            const [{ title }] = await tx.select({ title: posts.title }).from(posts).where(eq(posts.id, 1));
            const seen = Number(title);
            await tx.update(posts).set({ title: String(seen + 1) }).where(eq(posts.id, 1));
            await tx.insert(posts).values({ authorId: 2, title: `tx ${i} saw ${seen}` });
            return seen;
          }),
        ),
      ),
    ]);
    reads.forEach((row, i) => assert.deepEqual(row, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    assert.equal(readerExecuted(database.stats()) - before, 200, 'every read ran on a reader');

    assert.deepEqual([...writes].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    const [counter] = await db.select({ title: posts.title }).from(posts).where(eq(posts.id, 1));
    assert.equal(counter.title, '32');
    const logged = await db.select({ title: posts.title }).from(posts).where(eq(posts.authorId, 2));
    assert.equal(logged.length, 32);
    for (const { title } of logged) {
      const [, i, seen] = title.match(/^tx (\d+) saw (\d+)$/);
      assert.equal(writes[Number(i)], Number(seen));
    }
  } finally {
    await close();
  }
});

test('the logger sees every query with its parameters', async () => {
  const logged = [];
  const { db, close } = await open({ logger: { logQuery: (query, params) => logged.push([query, params]) } });
  try {
    await db.select().from(users).where(eq(users.id, 7));
    assert.deepEqual(logged.at(-1), ['select "id", "email", "name" from "users" where "users"."id" = ?', [7]]);
  } finally {
    await close();
  }
});

test('drizzle() refuses what is not an offloop database; CommonJS gets the same driver', async () => {
  assert.throws(() => drizzle({}), { code: 'ERR_INVALID_ARG_TYPE' });
  const { drizzle: cjsDrizzle } = require('offloop/drizzle');
  const { migrate: cjsMigrate } = require('offloop/drizzle/migrator');
  const database = await Database.open(tmp.file());
  try {
    const db = cjsDrizzle(database, { schema, casing: 'snake_case' });
    await cjsMigrate(db, { migrationsFolder });
    await db.insert(users).values({ email: 'c@example.com', name: 'C' });
    assert.deepEqual(await db.query.users.findMany({ columns: { email: true } }), [{ email: 'c@example.com' }]);
  } finally {
    await database.close();
  }
});
