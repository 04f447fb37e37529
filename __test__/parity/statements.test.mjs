// A statement's sourceSQL, expandedSQL, close() and Symbol.dispose, side by
// side with node:sqlite under Node 24, and what only offloop can show:
// expandedSQL of a statement in a transaction.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Database } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

let sideBySide = null;
let failure = null;
if (!skipWithoutNode24) {
  try {
    sideBySide = runUnderNode24('statements.cjs');
  } catch (err) {
    failure = err;
  }
}

test('node:sqlite parity: sourceSQL, expandedSQL, close, Symbol.dispose', { skip: skipWithoutNode24 }, async (t) => {
  assert.equal(failure, null);
  for (const r of sideBySide) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('expandedSQL of a transaction’s statement runs inside the transaction', async () => {
  const db = await Database.open(':memory:');
  try {
    await db.exec('CREATE TABLE t(a)');
    await db.transaction(async (tx) => {
      const ins = tx.prepare('INSERT INTO t VALUES (?)');
      await ins.run('v');
      assert.equal(await ins.expandedSQL, "INSERT INTO t VALUES ('v')");
    });
  } finally {
    await db.close();
  }
});

test('a statement copied by withOptions() shares its closed state and its last values', async () => {
  const db = await Database.open(':memory:');
  try {
    const stmt = db.prepare('SELECT ? AS v');
    const copy = stmt.withOptions({ timeout: 1000 });
    await copy.get(7);
    assert.equal(await stmt.expandedSQL, 'SELECT 7.0 AS v');
    stmt.close();
    await assert.rejects(copy.get(1), { code: 'ERR_INVALID_STATE', message: 'statement has been finalized' });
  } finally {
    await db.close();
  }
});
