// TypeORM 0.3 on offloop/sqlite3 (`driver`): migrations, queries,
// transactions and concurrency, with the real TypeORM.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import sqlite3 from 'offloop/sqlite3';
import { DataSource, EntitySchema } from 'typeorm';

import { readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('typeorm');
after(() => tmp.cleanup());

const User = new EntitySchema({
  name: 'User',
  tableName: 'users',
  columns: {
    id: { type: 'integer', primary: true, generated: true },
    email: { type: 'varchar', unique: true },
    name: { type: 'varchar' },
  },
  relations: { posts: { type: 'one-to-many', target: 'Post', inverseSide: 'user' } },
});

const Post = new EntitySchema({
  name: 'Post',
  tableName: 'posts',
  columns: {
    id: { type: 'integer', primary: true, generated: true },
    title: { type: 'varchar' },
  },
  relations: { user: { type: 'many-to-one', target: 'User', joinColumn: { name: 'user_id' }, nullable: false } },
});

class CreateTables1700000000000 {
  name = 'CreateTables1700000000000';

  async up(queryRunner) {
    await queryRunner.query('CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, email varchar NOT NULL UNIQUE, name varchar NOT NULL)');
    await queryRunner.query(
      'CREATE TABLE posts (id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, title varchar NOT NULL, user_id integer NOT NULL REFERENCES users(id))',
    );
  }

  async down(queryRunner) {
    await queryRunner.query('DROP TABLE posts');
    await queryRunner.query('DROP TABLE users');
  }
}

/** A DataSource on a new database file, migrated. */
async function open() {
  const dataSource = new DataSource({
    type: 'sqlite',
    database: tmp.file(),
    driver: sqlite3,
    entities: [User, Post],
    migrations: [CreateTables1700000000000],
    logging: false,
  });
  await dataSource.initialize();
  await dataSource.runMigrations();
  return dataSource;
}

/** The sqlite3 Database under TypeORM's one connection. */
function handle(dataSource) {
  return dataSource.driver.databaseConnection;
}

test('migrations apply once; running them again does nothing', async () => {
  const dataSource = await open();
  try {
    assert.deepEqual(await dataSource.runMigrations(), []);
    const tables = await dataSource.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'posts') ORDER BY name");
    assert.deepEqual(tables, [{ name: 'posts' }, { name: 'users' }]);
    assert.equal(await dataSource.showMigrations(), false);
  } finally {
    await dataSource.destroy();
  }
});

test('create, read, update, delete, a join and raw SQL', async () => {
  const dataSource = await open();
  try {
    const users = dataSource.getRepository('User');
    const posts = dataSource.getRepository('Post');
    const ada = await users.save({ email: 'ada@example.com', name: 'Ada' });
    const grace = await users.save({ email: 'grace@example.com', name: 'Grace' });
    assert.deepEqual([ada.id, grace.id], [1, 2]);
    await posts.save([
      { title: 'Notes', user: ada },
      { title: 'Compilers', user: grace },
    ]);
    const updated = await users.update({ id: ada.id }, { name: 'Ada L.' });
    assert.equal(updated.affected, 1);
    const joined = await posts.find({ relations: { user: true }, order: { id: 'ASC' } });
    assert.deepEqual(
      joined.map((p) => [p.title, p.user.name]),
      [
        ['Notes', 'Ada L.'],
        ['Compilers', 'Grace'],
      ],
    );
    const built = await dataSource
      .createQueryBuilder()
      .select('u.name', 'name')
      .addSelect('count(p.id)', 'n')
      .from('users', 'u')
      .leftJoin('posts', 'p', 'p.user_id = u.id')
      .groupBy('u.id')
      .orderBy('u.id')
      .getRawMany();
    assert.deepEqual(built, [
      { name: 'Ada L.', n: 1 },
      { name: 'Grace', n: 1 },
    ]);
    assert.deepEqual(await dataSource.query('SELECT count(*) AS n, ? AS tag FROM users WHERE id > ?', ['x', 0]), [{ n: 2, tag: 'x' }]);
    const removed = await posts.delete({ user: { id: grace.id } });
    assert.equal(removed.affected, 1);
    assert.deepEqual((await posts.find()).map((p) => p.title), ['Notes']);
  } finally {
    await dataSource.destroy();
  }
});

test('a committed transaction keeps its writes', async () => {
  const dataSource = await open();
  try {
    await dataSource.transaction(async (manager) => {
      const user = await manager.save('User', { email: 'tx@example.com', name: 'Tx' });
      await manager.save('Post', { title: 'inside', user });
      assert.equal(await manager.count('Post'), 1);
    });
    assert.equal(await dataSource.getRepository('Post').count(), 1);
    assert.deepEqual((await dataSource.getRepository('User').find()).map((u) => u.email), ['tx@example.com']);
  } finally {
    await dataSource.destroy();
  }
});

test("a transaction failing on a unique constraint leaves nothing behind, with sqlite3's error", async () => {
  const dataSource = await open();
  try {
    await dataSource.getRepository('User').save({ email: 'taken@example.com', name: 'First' });
    const failing = dataSource.transaction(async (manager) => {
      await manager.save('User', { email: 'new@example.com', name: 'New' });
      await manager.insert('User', { email: 'taken@example.com', name: 'Again' });
    });
    await assert.rejects(failing, (err) => {
      assert.equal(err.name, 'QueryFailedError');
      assert.equal(err.driverError.code, 'SQLITE_CONSTRAINT');
      assert.equal(err.driverError.errno, 19);
      assert.equal(err.message, 'SQLITE_CONSTRAINT: UNIQUE constraint failed: users.email');
      return true;
    });
    assert.deepEqual((await dataSource.getRepository('User').find()).map((u) => u.email), ['taken@example.com']);
  } finally {
    await dataSource.destroy();
  }
});

// TypeORM's sqlite driver runs every query runner on its one connection,
// so two transactions open at once fail with "cannot start a transaction
// within a transaction", on sqlite3 as on offloop/sqlite3. An application
// takes turns, as this lock does; the reads go on beside them.
function takingTurns() {
  let last = Promise.resolve();
  return (fn) => {
    const run = last.then(fn);
    last = run.catch(() => {});
    return run;
  };
}

test('200 concurrent reads run on reader threads; 32 concurrent transactions take turns beside 200 more', async () => {
  const dataSource = await open();
  try {
    const users = dataSource.getRepository('User');
    await users.insert(Array.from({ length: 200 }, (_, i) => ({ email: `r${i}@example.com`, name: `reader ${i}` })));
    const counter = await dataSource.getRepository('Post').save({ title: 'counter', user: { id: 1 } });
    // TypeORM writes a number it compares with into its SQL, so each id is
    // a new SQL text, which offloop's writer classifies first
    // (docs/sqlite3.md); a text parameter is bound, one SQL text for every
    // value, and runs on the readers.
    const byFind = (id) => users.findOne({ select: { id: true, email: true, name: true }, where: { id } });
    const byId = (id) =>
      users.createQueryBuilder('u').select(['u.id', 'u.email', 'u.name']).where('u.email = :email', { email: `r${id - 1}@example.com` }).getOne();
    const expected = (i) => ({ id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` });
    await byId(1); // the writer prepares a new SQL text first and learns it may run on a reader

    const db = handle(dataSource);
    const before = readerExecuted(db.stats());
    const [found, alone] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byFind(i + 1))),
      Promise.all(Array.from({ length: 200 }, (_, i) => byId(i + 1))),
    ]);
    found.forEach((row, i) => assert.deepEqual({ ...row }, expected(i)));
    alone.forEach((row, i) => assert.deepEqual({ ...row }, expected(i)));
    assert.ok(readerExecuted(db.stats()) - before >= 200, 'every bound read ran on a reader');

    // While a transaction is open on the connection, sqlite3 runs every
    // statement inside it; offloop sends them to its writer, which is in it.
    const turn = takingTurns();
    const [reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byId(i + 1))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          turn(() =>
            dataSource.transaction(async (manager) => {
              const { title } = await manager.findOneByOrFail('Post', { id: counter.id });
              const seen = title === 'counter' ? 0 : Number(title);
              await manager.update('Post', { id: counter.id }, { title: String(seen + 1) });
              await manager.insert('Post', { title: `tx ${i} saw ${seen}`, user: { id: 2 } });
              return seen;
            }),
          ),
        ),
      ),
    ]);
    reads.forEach((row, i) => assert.deepEqual({ ...row }, expected(i)));
    assert.deepEqual(writes, Array.from({ length: 32 }, (_, i) => i));
    const posts = dataSource.getRepository('Post');
    assert.equal((await posts.findOneByOrFail({ id: counter.id })).title, '32');
    const logged = await posts.find({ where: { user: { id: 2 } }, order: { id: 'ASC' } });
    assert.deepEqual(
      logged.map((p) => p.title),
      Array.from({ length: 32 }, (_, i) => `tx ${i} saw ${i}`),
    );
  } finally {
    await dataSource.destroy();
  }
});
