// DELETE and UPDATE with ORDER BY and LIMIT are refused, as node:sqlite
// refuses them: the bundled SQLite is built from the amalgamation, whose
// generated parser has no such clauses (SQLITE_ENABLE_UPDATE_DELETE_LIMIT
// needs a parser generated from SQLite's own sources). This pins today's
// behaviour, directly and through Kysely and Drizzle, so that a build that
// changes it is noticed and docs/node-sqlite.md updated.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { asc, eq } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { Kysely } from 'kysely';
import { drizzle } from 'offloop/drizzle';
import { OffloopDialect } from 'offloop/kysely';

import { Database, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('udl');
after(() => tmp.cleanup());

const refused = (word) => ({ code: 'ERR_SQLITE_ERROR', sqliteCode: 'SQLITE_ERROR', message: `near "${word}": syntax error` });

async function open() {
  const db = await Database.open(tmp.file());
  await db.exec('CREATE TABLE jobs(id INTEGER PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0); INSERT INTO jobs(id) VALUES (1), (2), (3)');
  return db;
}

test('the bundled SQLite is built without SQLITE_ENABLE_UPDATE_DELETE_LIMIT', () => {
  assert.ok(!Database.compileOptions().includes('ENABLE_UPDATE_DELETE_LIMIT'));
});

test('DELETE and UPDATE with ORDER BY or LIMIT fail with a syntax error and change nothing', async () => {
  const db = await open();
  try {
    await assert.rejects(db.exec('DELETE FROM jobs ORDER BY id LIMIT 1'), refused('ORDER'));
    await assert.rejects(db.prepare('UPDATE jobs SET done = 1 ORDER BY id LIMIT ?').run(1), refused('ORDER'));
    await assert.rejects(db.prepare('DELETE FROM jobs LIMIT 1').run(), refused('LIMIT'));
    assert.deepEqual(
      (await db.prepare('SELECT id, done FROM jobs').all()).map((r) => [r.id, r.done]),
      [
        [1, 0],
        [2, 0],
        [3, 0],
      ],
    );
    // What works instead: the rows chosen by a subquery.
    await db.exec('DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY id LIMIT 1)');
    assert.equal((await db.prepare('SELECT count(*) AS n FROM jobs').get()).n, 2);
  } finally {
    await db.close();
  }
});

test("Kysely's and Drizzle's delete and update with orderBy and limit reject the same way", async () => {
  const database = await open();
  const kysely = new Kysely({ dialect: new OffloopDialect({ database }) });
  const jobs = sqliteTable('jobs', { id: integer().primaryKey(), done: integer().notNull() });
  const orm = drizzle(database);
  try {
    await assert.rejects(kysely.deleteFrom('jobs').orderBy('id').limit(1).execute(), refused('order'));
    await assert.rejects(kysely.updateTable('jobs').set({ done: 1 }).orderBy('id').limit(1).execute(), refused('order'));
    const drizzleDelete = await orm
      .delete(jobs)
      .orderBy(asc(jobs.id))
      .limit(1)
      .then(
        () => assert.fail('it resolved'),
        (err) => err,
      );
    assert.match(drizzleDelete.cause.message, /^near "order": syntax error$/);
    const drizzleUpdate = await orm
      .update(jobs)
      .set({ done: 1 })
      .where(eq(jobs.done, 0))
      .orderBy(asc(jobs.id))
      .limit(1)
      .then(
        () => assert.fail('it resolved'),
        (err) => err,
      );
    assert.match(drizzleUpdate.cause.message, /^near "order": syntax error$/);
  } finally {
    await database.close();
  }
});
