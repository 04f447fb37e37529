// db.setAuthorizer(): side by side with node:sqlite under Node 24, and how
// it composes with offloop's own authorizers on every connection: readers
// still refuse writes whatever the callback answers, a denial reaches the
// reader threads too, and the writer still notices the statements that
// must run on its connection.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, readerExecuted, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const { constants } = createRequire(import.meta.url)(path.join(ROOT, 'index.js'));
const { SQLITE_OK, SQLITE_DENY, SQLITE_READ } = constants;
const tmp = tempDir('authorizer');
after(() => tmp.cleanup());

async function open() {
  const db = await Database.open(tmp.file('db'), { readers: 2 });
  await db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, secret TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
  return db;
}

test('node:sqlite parity: setAuthorizer()', { skip: skipWithoutNode24 }, async (t) => {
  const results = runUnderNode24('authorizer.cjs');
  for (const r of results) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('a denial holds on the reader threads: many concurrent reads all fail, then all succeed once removed', async () => {
  const db = await open();
  try {
    const read = db.prepare('SELECT id FROM t WHERE id = ?');
    assert.deepEqual({ ...(await read.get(1)) }, { id: 1 });
    db.setAuthorizer((code, table, column) => (code === SQLITE_READ && column === 'id' ? SQLITE_DENY : SQLITE_OK));
    const before = readerExecuted(db.stats());
    const denied = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => read.get(1 + (i % 2))));
    for (const r of denied) {
      assert.equal(r.status, 'rejected');
      assert.equal(r.reason.errcode, 23);
      assert.equal(r.reason.message, 'access to t.id is prohibited');
    }
    assert.ok(readerExecuted(db.stats()) > before, 'the reads ran on readers');
    db.setAuthorizer(null);
    const rows = await Promise.all(Array.from({ length: 40 }, (_, i) => read.get(1 + (i % 2))));
    rows.forEach((row, i) => assert.equal(row.id, 1 + (i % 2)));
  } finally {
    await db.close();
  }
});

test('a callback that allows everything cannot make a read snapshot write', async () => {
  const db = await open();
  try {
    db.setAuthorizer(() => SQLITE_OK);
    await assert.rejects(
      db.read((r) => r.prepare("INSERT INTO t VALUES (3, 'z')").run()),
      (err) => err.code === 'ERR_SQLITE_ERROR' && err.errcode === 8,
    );
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, 2);
  } finally {
    await db.close();
  }
});

test('with a callback set, last_insert_rowid() still runs on the writer and sees its insert', async () => {
  const db = await open();
  try {
    const seen = [];
    db.setAuthorizer((code, arg1, arg2) => {
      seen.push(arg2);
      return SQLITE_OK;
    });
    const { lastInsertRowid } = await db.prepare("INSERT INTO t(secret) VALUES ('w')").run();
    const { id } = await db.prepare('SELECT last_insert_rowid() AS id').get();
    assert.equal(id, lastInsertRowid);
    assert.ok(seen.includes('last_insert_rowid'), 'the callback was asked about the function');
  } finally {
    await db.close();
  }
});

test('a callback that throws fails a batch with what it threw, and the batch rolls back', async () => {
  const db = await open();
  try {
    const thrown = new Error('no inserts today');
    db.setAuthorizer((code) => {
      if (code === constants.SQLITE_INSERT) throw thrown;
      return SQLITE_OK;
    });
    const update = db.prepare("UPDATE t SET secret = 'changed' WHERE id = 1");
    const insert = db.prepare("INSERT INTO t(secret) VALUES ('new')");
    await assert.rejects(
      db.batch([
        [update, []],
        [insert, []],
      ]),
      (err) => err === thrown,
    );
    db.setAuthorizer(null);
    const rows = await db.prepare('SELECT secret FROM t ORDER BY id').all();
    assert.deepEqual(
      rows.map((r) => r.secret),
      ['x', 'y'],
    );
  } finally {
    await db.close();
  }
});

test('a callback may call the database: the call queues and resolves later', async () => {
  const db = await open();
  try {
    const calls = [];
    db.setAuthorizer(() => {
      if (calls.length === 0) calls.push(db.prepare('SELECT 7 AS seven').get());
      return SQLITE_OK;
    });
    assert.equal((await db.prepare('SELECT secret FROM t WHERE id = 2').get()).secret, 'y');
    db.setAuthorizer(null);
    assert.equal((await calls[0]).seven, 7);
  } finally {
    await db.close();
  }
});
