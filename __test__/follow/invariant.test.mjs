// A follower under load: the primary moves money between accounts in
// transactions, so the sum never changes. Every read of the sum on the
// follower, and both reads inside each db.read() snapshot, see it while
// TXIDs are applied, and a snapshot stays on one TXID however many land.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Database, tempDir } from '../replication/helpers.mjs';

const ACCOUNTS = 200;
const START = 1000;
const TOTAL = ACCOUNTS * START;

test('every read of the sum, and every pair inside one db.read(), sees the constant while TXIDs are applied', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: { url, syncInterval: 20 } });
  await primary.exec('CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, pad BLOB)');
  await primary.batch(
    Array.from({ length: ACCOUNTS }, (_, i) => [
      'INSERT INTO accounts(id, balance, pad) VALUES (?, ?, randomblob(300))',
      [i + 1, START],
    ]),
  );
  await primary.syncReplica();
  const follower = await Database.open(path.join(dir, 'follower.db'), { follow: { url, pollInterval: 10 } });
  let applied = 0;
  follower.on('applied', () => applied++);
  let moving = true;
  const mover = (async () => {
    let n = 0;
    while (moving) {
      const from = 1 + (n % ACCOUNTS);
      const to = 1 + ((n * 7 + 3) % ACCOUNTS);
      const amount = 1 + (n % 13);
      await primary.transaction(async (tx) => {
        await tx.prepare('UPDATE accounts SET balance = balance - ? WHERE id = ?').run(amount, from);
        await tx.prepare('UPDATE accounts SET balance = balance + ? WHERE id = ?').run(amount, to);
      });
      n++;
    }
    return n;
  })();
  const sum = follower.prepare('SELECT sum(balance) AS s, count(*) AS n FROM accounts');
  let reads = 0;
  let snapshots = 0;
  let spanned = 0;
  try {
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline || applied < 20) {
      const all = await Promise.all(Array.from({ length: 8 }, () => sum.get()));
      for (const row of all) assert.deepEqual({ ...row }, { s: TOTAL, n: ACCOUNTS });
      reads += all.length;
      const before = applied;
      const [a, b, txidA, txidB] = await follower.read(async (r) => {
        const first = await r.prepare('SELECT sum(balance) AS s FROM accounts').get();
        const rowsA = await r.prepare('SELECT group_concat(balance) AS g FROM accounts').get();
        await new Promise((resolve) => setTimeout(resolve, 30));
        const second = await r.prepare('SELECT sum(balance) AS s FROM accounts').get();
        const rowsB = await r.prepare('SELECT group_concat(balance) AS g FROM accounts').get();
        return [first.s, second.s, rowsA.g, rowsB.g];
      });
      assert.equal(a, TOTAL);
      assert.equal(b, TOTAL);
      // The same balances, row for row: one TXID for the whole snapshot.
      assert.equal(txidA, txidB);
      snapshots++;
      if (applied > before) spanned++;
      if (Date.now() > deadline + 20_000) break;
    }
  } finally {
    moving = false;
    await mover;
  }
  const { txid } = await primary.syncReplica();
  await follower.catchUp({ txid, timeout: 20_000 });
  assert.deepEqual({ ...(await sum.get()) }, { s: TOTAL, n: ACCOUNTS });
  assert.deepEqual(
    await follower.prepare('SELECT id, balance FROM accounts ORDER BY id').all(),
    await primary.prepare('SELECT id, balance FROM accounts ORDER BY id').all(),
  );
  assert.ok(applied >= 20, `only ${applied} files applied`);
  assert.ok(spanned > 0, 'no snapshot spanned an apply');
  assert.ok(reads > 0 && snapshots > 0);
  await follower.close();
  await primary.close();
});
