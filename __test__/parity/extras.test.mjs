// The smaller parts of node:sqlite, side by side with it under Node 24:
// the tag store, the constants export, isTransaction after exec('BEGIN'),
// and the checks of node:sqlite's open, allowExtension and limits options.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Database } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

let sideBySide = null;
let failure = null;
if (!skipWithoutNode24) {
  try {
    sideBySide = runUnderNode24('extras.cjs');
  } catch (err) {
    failure = err;
  }
}

test('node:sqlite parity: tag store, constants, isTransaction, option checks', { skip: skipWithoutNode24 }, async (t) => {
  assert.equal(failure, null);
  for (const r of sideBySide) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('a tag store binds a value that looks like SQL instead of splicing it', async () => {
  const db = await Database.open(':memory:');
  try {
    await db.exec('CREATE TABLE t(v)');
    const sql = db.createTagStore(4);
    const hostile = "'); DROP TABLE t; --";
    await sql.run`INSERT INTO t VALUES (${hostile})`;
    assert.deepEqual((await sql.all`SELECT v FROM t`).map((r) => r.v), [hostile]);
    assert.equal(sql.size, 2);
  } finally {
    await db.close();
  }
});

test('isTransaction turns true once exec(BEGIN) has resolved and false once ROLLBACK has', async () => {
  const db = await Database.open(':memory:');
  try {
    assert.equal(db.isTransaction, false);
    await db.exec('BEGIN');
    assert.equal(db.isTransaction, true);
    await db.exec('ROLLBACK');
    assert.equal(db.isTransaction, false);
  } finally {
    await db.close();
  }
});
