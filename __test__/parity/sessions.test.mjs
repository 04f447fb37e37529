// Sessions and changesets: side by side with node:sqlite under Node 24
// (changeset bytes, applying with and without handlers, errors), and what
// offloop adds: a session records every write the writer runs, however it
// was issued, and a changeset's handlers run on the JS thread while the
// writer waits, and may call the database without a deadlock.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const { Session, constants } = createRequire(import.meta.url)(path.join(ROOT, 'index.js'));
const tmp = tempDir('sessions');
after(() => tmp.cleanup());

const SCHEMA = 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)';

async function open() {
  const db = await Database.open(tmp.file('db'));
  await db.exec(SCHEMA);
  return db;
}

test('node:sqlite parity: sessions, changesets and applyChangeset', { skip: skipWithoutNode24 }, async (t) => {
  const results = runUnderNode24('sessions.cjs');
  for (const r of results) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('a session records concurrent runs, batches and transactions; its changeset rebuilds every row elsewhere', async () => {
  const db = await open();
  const copy = await open();
  try {
    const session = db.createSession();
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    const runs = await Promise.all(Array.from({ length: 100 }, (_, i) => insert.run(`run ${i}`)));
    runs.forEach((r) => assert.equal(r.changes, 1));
    await db.batch(Array.from({ length: 20 }, (_, i) => [insert, [`batch ${i}`]]));
    await db.transaction(async (tx) => {
      await tx.prepare('UPDATE t SET v = v || ? WHERE id % 10 = 0').run(' updated');
      await tx.prepare('DELETE FROM t WHERE id % 7 = 0').run();
    });
    assert.equal(await copy.applyChangeset(await session.changeset()), true);
    const all = 'SELECT id, v FROM t ORDER BY id';
    const expected = await db.prepare(all).all();
    assert.equal(expected.length, 120 - Math.floor(120 / 7));
    assert.deepEqual(await copy.prepare(all).all(), expected);
    await session.close();
  } finally {
    await copy.close();
    await db.close();
  }
});

test('a conflict handler may call the database: its calls queue and run, nothing waits on them', async () => {
  const db = await open();
  const target = await open();
  try {
    const session = db.createSession();
    await db.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    await target.exec("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z')");
    const reads = [];
    const applied = await target.applyChangeset(await session.changeset(), {
      onConflict: (kind) => {
        assert.equal(kind, constants.SQLITE_CHANGESET_CONFLICT);
        reads.push(db.prepare('SELECT count(*) AS n FROM t').get());
        return constants.SQLITE_CHANGESET_REPLACE;
      },
    });
    assert.equal(applied, true);
    assert.deepEqual(
      (await Promise.all(reads)).map((r) => r.n),
      [3, 3, 3],
    );
    assert.deepEqual(
      (await target.prepare('SELECT v FROM t ORDER BY id').all()).map((r) => r.v),
      ['a', 'b', 'c'],
    );
  } finally {
    await target.close();
    await db.close();
  }
});

test('closing a database with open sessions closes it cleanly; it reopens', async () => {
  const file = tmp.file('open-sessions');
  const db = await Database.open(file);
  await db.exec(SCHEMA);
  const sessions = [db.createSession(), db.createSession({ table: 't' })];
  await db.exec("INSERT INTO t VALUES (1, 'a')");
  await db.close();
  await assert.rejects(sessions[0].changeset(), { code: 'ERR_INVALID_STATE', message: 'database is not open' });
  const again = await Database.open(file);
  assert.equal((await again.prepare('SELECT count(*) AS n FROM t').get()).n, 1);
  await again.close();
});

test('Session cannot be constructed directly', () => {
  assert.throws(() => new Session(), { name: 'TypeError', code: 'ERR_ILLEGAL_CONSTRUCTOR' });
});
