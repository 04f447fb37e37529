// offloop/knex with the real Knex: migrations, queries, transactions and
// concurrency through Knex's own sqlite3 client on offloop/sqlite3.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';

import knexFactory from 'knex';
import OffloopClient from 'offloop/knex';

import { readerExecuted, tempDir } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const tmp = tempDir('knex');
after(() => tmp.cleanup());

const migrations = {
  '0001_users': {
    up: (knex) =>
      knex.schema.createTable('users', (t) => {
        t.increments('id');
        t.string('email').notNullable().unique();
        t.string('name').notNullable();
      }),
    down: (knex) => knex.schema.dropTable('users'),
  },
  '0002_posts': {
    up: (knex) =>
      knex.schema.createTable('posts', (t) => {
        t.increments('id');
        t.integer('user_id').notNullable().references('users.id');
        t.string('title').notNullable();
      }),
    down: (knex) => knex.schema.dropTable('posts'),
  },
};

const migrationSource = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name],
};

/** Knex on a new database file, migrated. */
async function open(connection = {}) {
  const knex = knexFactory({ client: OffloopClient, connection: { filename: tmp.file(), ...connection }, useNullAsDefault: true });
  await knex.migrate.latest({ migrationSource });
  return knex;
}

/** The sqlite3 Database under Knex's one pooled connection. */
async function handle(knex) {
  const connection = await knex.client.acquireConnection();
  await knex.client.releaseConnection(connection);
  return connection;
}

test('migrations apply once; running them again does nothing', async () => {
  const knex = await open();
  try {
    const [, applied] = await knex.migrate.latest({ migrationSource });
    assert.deepEqual(applied, []);
    const tables = await knex('sqlite_master').where({ type: 'table' }).pluck('name');
    assert.ok(tables.includes('users') && tables.includes('posts'));
    const [, log] = await knex.migrate.list({ migrationSource });
    assert.deepEqual(log, []);
  } finally {
    await knex.destroy();
  }
});

test('create, read, update, delete, a join and raw SQL', async () => {
  const knex = await open();
  try {
    const [ada] = await knex('users').insert({ email: 'ada@example.com', name: 'Ada' });
    assert.equal(ada, 1);
    const [grace] = await knex('users').insert({ email: 'grace@example.com', name: 'Grace' }, ['id', 'email']);
    assert.deepEqual(grace, { id: 2, email: 'grace@example.com' });
    await knex('posts').insert([
      { user_id: ada, title: 'Notes' },
      { user_id: grace.id, title: 'Compilers' },
    ]);
    assert.equal(await knex('users').where({ id: ada }).update({ name: 'Ada L.' }), 1);
    const joined = await knex('posts')
      .join('users', 'users.id', 'posts.user_id')
      .select('users.name', 'posts.title')
      .orderBy('posts.id');
    assert.deepEqual(joined, [
      { name: 'Ada L.', title: 'Notes' },
      { name: 'Grace', title: 'Compilers' },
    ]);
    const raw = await knex.raw('SELECT count(*) AS n, ? AS tag FROM users WHERE id > ?', ['x', 0]);
    assert.deepEqual(raw, [{ n: 2, tag: 'x' }]);
    assert.equal(await knex('posts').where({ user_id: grace.id }).del(), 1);
    assert.deepEqual(await knex('posts').pluck('title'), ['Notes']);
  } finally {
    await knex.destroy();
  }
});

test('a committed transaction keeps its writes', async () => {
  const knex = await open();
  try {
    await knex.transaction(async (trx) => {
      const [id] = await trx('users').insert({ email: 'tx@example.com', name: 'Tx' });
      await trx('posts').insert({ user_id: id, title: 'inside' });
      const inside = await trx('posts').count({ n: '*' }).first();
      assert.equal(inside.n, 1);
    });
    assert.equal((await knex('posts').count({ n: '*' }).first()).n, 1);
    assert.deepEqual(await knex('users').pluck('email'), ['tx@example.com']);
  } finally {
    await knex.destroy();
  }
});

test("a transaction failing on a unique constraint leaves nothing behind, with sqlite3's error", async () => {
  const knex = await open();
  try {
    await knex('users').insert({ email: 'taken@example.com', name: 'First' });
    const failing = knex.transaction(async (trx) => {
      await trx('users').insert({ email: 'new@example.com', name: 'New' });
      await trx('users').insert({ email: 'taken@example.com', name: 'Again' });
    });
    await assert.rejects(failing, (err) => {
      assert.equal(err.code, 'SQLITE_CONSTRAINT');
      assert.equal(err.errno, 19);
      assert.match(err.message, /SQLITE_CONSTRAINT: UNIQUE constraint failed: users\.email/);
      return true;
    });
    assert.deepEqual(await knex('users').pluck('email'), ['taken@example.com']);
  } finally {
    await knex.destroy();
  }
});

test('32 concurrent transactions and 200 concurrent reads, the reads on reader threads', async () => {
  const knex = await open();
  try {
    await knex.batchInsert(
      'users',
      Array.from({ length: 200 }, (_, i) => ({ email: `r${i}@example.com`, name: `reader ${i}` })),
      50,
    );
    await knex('posts').insert({ user_id: 1, title: 'counter' });
    const byId = (id) => knex('users').select('id', 'email', 'name').where({ id }).first();
    await byId(1); // the writer prepares a new SQL text first and learns it may run on a reader

    const db = await handle(knex);
    const before = readerExecuted(db.stats());
    const [reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byId(i + 1))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          knex.transaction(async (trx) => {
            const { title } = await trx('posts').select('title').where({ id: 1 }).first();
            const seen = title === 'counter' ? 0 : Number(title);
            await trx('posts').where({ id: 1 }).update({ title: String(seen + 1) });
            await trx('posts').insert({ user_id: 2, title: `tx ${i} saw ${seen}` });
            return seen;
          }),
        ),
      ),
    ]);
    reads.forEach((row, i) => assert.deepEqual(row, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    assert.ok(readerExecuted(db.stats()) - before >= 200, 'every read outside a transaction ran on a reader');

    assert.deepEqual([...writes].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    assert.equal((await knex('posts').select('title').where({ id: 1 }).first()).title, '32');
    const logged = await knex('posts').pluck('title').where({ user_id: 2 });
    assert.equal(logged.length, 32);
    for (const title of logged) {
      const [, i, seen] = title.match(/^tx (\d+) saw (\d+)$/);
      assert.equal(writes[Number(i)], Number(seen));
    }
  } finally {
    await knex.destroy();
  }
});

test("offloop's options reach the database through connection.offloop", async () => {
  const knex = await open({ offloop: { readers: 2 } });
  try {
    const db = await handle(knex);
    assert.equal(db.stats().readers.length, 2);
  } finally {
    await knex.destroy();
  }
});

test('CommonJS gets the same client from require()', () => {
  assert.equal(require('offloop/knex'), OffloopClient);
});
