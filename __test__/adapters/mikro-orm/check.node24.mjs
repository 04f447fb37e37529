// MikroORM 7 on offloop/kysely. MikroORM 7 needs Node >= 22.17, so
// mikro-orm.test.mjs runs this file with `node --test` under the
// Node 24 dev dependency. The dialect is built on the Kysely MikroORM
// itself loads, as it is in an application that installs MikroORM.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { EntitySchema, MikroORM } from '@mikro-orm/core';
import { SqliteDriver } from '@mikro-orm/sql';

const require = createRequire(import.meta.url);
const { Database } = require('offloop');
const { createKyselyDialect } = require('../../../adapters/kysely/dialect.js');
const kysely = createRequire(require.resolve('@mikro-orm/sql'))('kysely');
const { OffloopDialect } = createKyselyDialect(kysely);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-mikro-orm-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const User = new EntitySchema({
  name: 'User',
  properties: {
    id: { type: 'number', primary: true, autoincrement: true },
    email: { type: 'string', unique: true },
    posts: { kind: '1:m', entity: () => Post, mappedBy: 'author' },
  },
});

const Post = new EntitySchema({
  name: 'Post',
  properties: {
    id: { type: 'number', primary: true, autoincrement: true },
    title: { type: 'string' },
    author: { kind: 'm:1', entity: () => User },
  },
});

let n = 0;
async function open() {
  const database = await Database.open(path.join(dir, `db-${++n}.db`));
  const orm = await MikroORM.init({
    driver: SqliteDriver,
    dbName: 'offloop',
    driverOptions: new OffloopDialect({ database }),
    entities: [User, Post],
    allowGlobalContext: true,
  });
  await orm.schema.create();
  return { database, orm };
}

function readers(database) {
  return database.stats().readers.reduce((sum, r) => sum + r.executed, 0);
}

test('MikroORM persists, populates and reads on offloop readers', async () => {
  const { database, orm } = await open();
  try {
    const em = orm.em.fork();
    const ada = em.create(User, { email: 'ada@example.com' });
    em.create(Post, { title: 'one', author: ada });
    em.create(Post, { title: 'two', author: ada });
    await em.flush();

    const find = () => orm.em.fork().findOneOrFail(User, { email: 'ada@example.com' }, { populate: ['posts'] });
    await find();
    const before = readers(database);
    const users = await Promise.all(Array.from({ length: 20 }, find));
    for (const user of users) {
      assert.equal(user.email, 'ada@example.com');
      assert.deepEqual(user.posts.getItems().map((p) => p.title).sort(), ['one', 'two']);
    }
    assert.ok(readers(database) - before >= 20, 'the reads ran on reader threads');
  } finally {
    await orm.close();
  }
});

test('a MikroORM transaction failing on a unique constraint leaves nothing behind', async () => {
  const { orm } = await open();
  try {
    await orm.em.fork().persist(orm.em.create(User, { email: 'taken@example.com' })).flush();
    await assert.rejects(
      orm.em.fork().transactional(async (em) => {
        em.create(User, { email: 'new@example.com' });
        await em.flush();
        em.create(User, { email: 'taken@example.com' });
        await em.flush();
      }),
      { name: 'UniqueConstraintViolationException', sqliteCode: 'SQLITE_CONSTRAINT_UNIQUE' },
    );
    const emails = (await orm.em.fork().find(User, {})).map((u) => u.email);
    assert.deepEqual(emails, ['taken@example.com']);
  } finally {
    await orm.close();
  }
});

test('a nested MikroORM transaction rolls back to its savepoint while the outer commits', async () => {
  const { orm } = await open();
  try {
    await orm.em.fork().transactional(async (em) => {
      em.create(User, { email: 'outer@example.com' });
      await em.flush();
      await assert.rejects(
        em.transactional(async (inner) => {
          inner.create(User, { email: 'inner@example.com' });
          await inner.flush();
          throw new Error('undo the inner one');
        }),
        /undo the inner one/,
      );
    });
    const emails = (await orm.em.fork().find(User, {})).map((u) => u.email);
    assert.deepEqual(emails, ['outer@example.com']);
  } finally {
    await orm.close();
  }
});

test('under Kysely 0.29 a slow read does not hold up a quick one', async () => {
  const { orm } = await open();
  try {
    const conn = orm.em.getConnection();
    const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c';
    const quick = 'SELECT 1 AS one';
    await conn.execute(quick);
    const order = [];
    await Promise.all([
      conn.execute(slow).then(() => order.push('slow')),
      conn.execute(quick).then(() => order.push('quick')),
    ]);
    assert.deepEqual(order, ['quick', 'slow']);
  } finally {
    await orm.close();
  }
});
