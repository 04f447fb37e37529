// Reads that wait for a reader together run in one read transaction (the
// reader's batch): each still sees every write that resolved before it was
// called, each settles with its own result, and one that fails fails alone.
// `stats().readers[i].sharedReads` counts the reads that ran in a batch.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('shared-reads');
after(() => tmp.cleanup());

const sharedReads = (db) => db.stats().readers.reduce((sum, r) => sum + r.sharedReads, 0);

/**
 * Holds the only reader inside a read snapshot until `release()`: calls made
 * meanwhile wait in the shared queue, and the reader takes them together.
 */
async function holdReader(db) {
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let started;
  const holding = new Promise((resolve) => (started = resolve));
  const done = db.read(async (r) => {
    await r.prepare('SELECT 1 AS one').get();
    started();
    await released;
  });
  await holding;
  return {
    async release() {
      release();
      await done;
    },
  };
}

test('reads queued while the reader was busy run in one shared read transaction and see the writes before them', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)');
    const set = db.prepare('INSERT OR REPLACE INTO t(id, v) VALUES (1, ?)');
    const get = db.prepare('SELECT v FROM t WHERE id = 1');
    await set.run(0);
    await get.get();
    const before = sharedReads(db);
    const held = await holdReader(db);
    // Written after the snapshot that holds the reader began, resolved
    // before the reads are called: every read must see it.
    await set.run(7);
    const reads = Array.from({ length: 20 }, () => get.get());
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(db.stats().readerQueue, 20, 'the reads wait for the held reader');
    await held.release();
    for (const row of await Promise.all(reads)) assert.deepEqual({ ...row }, { v: 7 });
    assert.equal(sharedReads(db) - before, 20, 'the 20 reads ran in one batch');
  } finally {
    await db.close();
  }
});

test('a failing read in a batch fails alone: the others resolve with their own rows', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    await db.exec(`
      CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER);
      WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30)
      INSERT INTO t SELECT x, x * 10 FROM c;
    `);
    // abs() of the smallest integer overflows while the statement runs,
    // only for the ids that take that branch.
    const get = db.prepare(
      'SELECT id, CASE WHEN ? THEN abs(-9223372036854775807 - 1) ELSE v END AS v FROM t WHERE id = ?',
    );
    const rows = db.prepare('SELECT id FROM t WHERE id <= ? ORDER BY id');
    await get.get(0, 1);
    await rows.all(1);
    const before = sharedReads(db);
    const held = await holdReader(db);
    const calls = [];
    for (let id = 1; id <= 30; id++) {
      const fails = id % 3 === 0;
      calls.push({ id, fails, result: get.get(fails ? 1 : 0, id) });
      if (id % 10 === 5) calls.push({ id, all: true, result: rows.all(id) });
    }
    const settled = Promise.allSettled(calls.map((c) => c.result));
    await new Promise((resolve) => setImmediate(resolve));
    await held.release();
    const outcomes = await settled;
    calls.forEach((call, i) => {
      const outcome = outcomes[i];
      if (call.all) {
        assert.equal(outcome.status, 'fulfilled', `all(${call.id})`);
        assert.deepEqual(
          outcome.value.map((r) => r.id),
          Array.from({ length: call.id }, (_, k) => k + 1),
        );
      } else if (call.fails) {
        assert.equal(outcome.status, 'rejected', `get of ${call.id} fails`);
        assert.match(outcome.reason.message, /integer overflow/);
      } else {
        assert.equal(outcome.status, 'fulfilled', `get of ${call.id}`);
        assert.deepEqual({ ...outcome.value }, { id: call.id, v: call.id * 10 });
      }
    });
    assert.equal(sharedReads(db) - before, calls.length, 'every call ran in the batch');
  } finally {
    await db.close();
  }
});

test('with reads always in flight, a read issued after a write resolved sees that write (300 rounds)', async () => {
  // Background callers keep the readers' queue full, so readers keep taking
  // batches of slow reads; the foreground inserts and then counts. A batch that took a
  // read after its snapshot began could miss the insert before it.
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY)');
    const ins = db.prepare('INSERT INTO t(id) VALUES (?)');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    // Also counts, after a few thousand steps of other work: batches of
    // these last long enough for writes to commit while they run.
    const slowCount = db.prepare(
      `SELECT (SELECT count(*) FROM t) AS n,
              (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
               SELECT count(*) FROM c) AS work`,
    );
    await ins.run(1);
    await count.get();
    await slowCount.get();
    const before = sharedReads(db);
    let written = 1;
    let stop = false;
    const background = Array.from({ length: 16 }, async () => {
      while (!stop) {
        const floor = written;
        const { n } = await slowCount.get();
        assert.ok(n >= floor, `a background read saw ${n} rows after ${floor} were written`);
      }
    });
    try {
      for (let i = 2; i <= 301; i++) {
        await ins.run(i);
        written = i;
        const [a, b] = await Promise.all([count.get(), count.get()]);
        assert.equal(a.n, i, `round ${i}`);
        assert.equal(b.n, i, `round ${i}`);
      }
    } finally {
      stop = true;
      await Promise.all(background);
    }
    assert.ok(sharedReads(db) - before > 0, 'some reads ran in shared read transactions');
  } finally {
    await db.close();
  }
});
