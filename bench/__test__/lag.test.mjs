// How the replication benchmark turns what it watched into lag
// (bench/lib/lag.mjs): each commit is timed to the first replica file that
// holds it, and a commit no file was seen to hold gets no lag at all.
// Pure arithmetic on made-up observations; nothing is started or timed.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { lags } from '../lib/lag.mjs';

test("a commit's lag runs from its acknowledgement to the first replica file that holds it", () => {
  // Files by TXID: what each made restorable (largest row id) and when it showed.
  const files = [
    { txid: 7, maxId: 12, seenAt: 3000 },
    { txid: 5, maxId: 10, seenAt: 2000 },
    { txid: 6, maxId: 10, seenAt: 2500 },
  ];
  const ackAt = (id) => 1000 + id * 100;
  const { lagsMs, unseen } = lags(files, 9, 12, ackAt);
  // Rows 9 and 10 are first held by TXID 5, rows 11 and 12 by TXID 7 (TXID 6 added none).
  assert.deepEqual(lagsMs, [2000 - 1900, 2000 - 2000, 3000 - 2100, 3000 - 2200]);
  assert.equal(unseen, 0);
});

test('commits that no replica file was seen to hold are counted apart, with no lag', () => {
  const files = [{ txid: 2, maxId: 3, seenAt: 500 }];
  const { lagsMs, unseen } = lags(files, 1, 5, () => 100);
  assert.deepEqual(lagsMs, [400, 400, 400]);
  assert.equal(unseen, 2);
});
