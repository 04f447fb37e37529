// Calls in flight are found by id when their results come back
// (lib/calls.js keeps them in a table indexed by the id's low bits, grown
// and shrunk with the number in flight, and skips an id whose slot a call
// still holds): however many are in flight and however long one of them
// takes, each call settles with its own result.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('calls');
after(() => tmp.cleanup());

test('thousands of calls in flight at once each settle with their own result', async () => {
  const db = await Database.open(tmp.file());
  try {
    const stmt = db.prepare('SELECT ? * 2 AS doubled');
    for (const count of [3000, 10, 5000]) {
      const rows = await Promise.all(Array.from({ length: count }, (_, i) => stmt.get(i)));
      assert.deepEqual(
        rows.map((row) => row.doubled),
        Array.from({ length: count }, (_, i) => i * 2),
      );
    }
  } finally {
    await db.close();
  }
});

test('a call in flight while thousands of others come and go settles with its own result', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    const slow = db
      .prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT max(x) AS top FROM c')
      .get();
    const quick = db.prepare('SELECT ? AS n');
    for (let i = 0; i < 2000; i++) assert.equal((await quick.get(i)).n, i);
    assert.deepEqual({ ...(await slow) }, { top: 2000000 });
  } finally {
    await db.close();
  }
});
