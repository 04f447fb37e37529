// Many calls at once: every one settles with its own correct result, reads
// see the writes that resolved before them, and a slow read on one reader
// does not hold up the others.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { COUNT_TO, Database, readerExecuted, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('concurrency');
after(() => tmp.cleanup());

test('a read issued after a write resolved sees that write (500 rounds, reads on readers)', async () => {
  const db = await Database.open(tmp.file(), { readers: 4 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)');
    const ins = db.prepare('INSERT INTO t(id, v) VALUES (?, ?)');
    const upd = db.prepare('UPDATE t SET v = ? WHERE id = 1');
    const byId = db.prepare('SELECT v FROM t WHERE id = ?');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    await ins.run(1, 0);
    await byId.get(1);
    await count.get();
    const before = db.stats();
    for (let i = 2; i <= 251; i++) {
      await ins.run(i, i);
      assert.equal((await count.get()).n, i, `round ${i}: count after insert`);
      await upd.run(i);
      assert.equal((await byId.get(1)).v, i, `round ${i}: value after update`);
    }
    const now = db.stats();
    assert.equal(readerExecuted(now) - readerExecuted(before), 500, 'every read ran on a reader');
    assert.equal(now.writer.executed - before.writer.executed, 500, 'every write ran on the writer');
  } finally {
    await db.close();
  }
});

test('10,000 concurrent mixed inserts, updates, gets and alls all resolve with correct results', async () => {
  const db = await Database.open(tmp.file(), { readers: 4 });
  try {
    await db.exec(`
      CREATE TABLE kv(id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
      WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
      INSERT INTO kv SELECT x, x * 10 FROM c;
    `);
    const ins = db.prepare('INSERT INTO kv(id, v) VALUES (?, ?)');
    const upd = db.prepare('UPDATE kv SET v = v + ? WHERE id = ?');
    const get = db.prepare('SELECT id, v FROM kv WHERE id = ?');
    const range = db.prepare('SELECT id, v FROM kv WHERE id BETWEEN ? AND ? ORDER BY id');
    // Learn every route first, so the reads below run on readers.
    await get.get(1);
    await range.all(1, 2);
    await upd.run(0, 1);
    await ins.run(100000, 0);
    const before = db.stats();

    // Rows 1..500 never change; rows 501..1000 get +1 per update; new rows
    // start at 2001. Each case is one call, except an insert followed by a
    // read of the new row once it resolved (two calls).
    const calls = [];
    const updates = new Map();
    let nextId = 2001;
    let writeCalls = 0;
    let readCalls = 0;
    for (let i = 0; writeCalls + readCalls < 10000; i++) {
      switch (i % 10) {
        case 0:
        case 1: {
          const id = nextId++;
          writeCalls++;
          calls.push(
            ins.run(id, id * 3).then((r) => {
              assert.deepEqual(r, { changes: 1, lastInsertRowid: id });
            }),
          );
          break;
        }
        case 2: {
          const id = nextId++;
          writeCalls++;
          readCalls++;
          calls.push(
            ins
              .run(id, id * 3)
              .then((r) => {
                assert.equal(r.lastInsertRowid, id);
                return get.get(id);
              })
              .then((row) => assert.deepEqual({ ...row }, { id, v: id * 3 })),
          );
          break;
        }
        case 3:
        case 4:
        case 5: {
          const id = 501 + (i % 500);
          writeCalls++;
          updates.set(id, (updates.get(id) ?? 0) + 1);
          calls.push(upd.run(1, id).then((r) => assert.equal(r.changes, 1)));
          break;
        }
        case 6:
        case 7: {
          const id = 1 + (i % 500);
          readCalls++;
          calls.push(get.get(id).then((row) => assert.deepEqual({ ...row }, { id, v: id * 10 })));
          break;
        }
        default: {
          const lo = 1 + (i % 480);
          readCalls++;
          calls.push(
            range.all(lo, lo + 19).then((rows) => {
              assert.equal(rows.length, 20);
              rows.forEach((row, k) => assert.deepEqual({ ...row }, { id: lo + k, v: (lo + k) * 10 }));
            }),
          );
        }
      }
    }
    assert.equal(writeCalls + readCalls, 10000);
    const outcomes = await Promise.allSettled(calls);
    const failures = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(failures.length, 0, failures.slice(0, 3).map((f) => f.reason?.stack).join('\n'));

    const inserted = nextId - 2001;
    const total = await db.prepare('SELECT count(*) AS n, sum(v) AS s FROM kv WHERE id BETWEEN 2001 AND 99999').get();
    assert.equal(total.n, inserted);
    let expectedSum = 0;
    for (let id = 2001; id < nextId; id++) expectedSum += id * 3;
    assert.equal(total.s, expectedSum);
    const updated = await db.prepare('SELECT id, v FROM kv WHERE id BETWEEN 501 AND 1000 ORDER BY id').all();
    for (const row of updated) assert.equal(row.v, row.id * 10 + (updates.get(row.id) ?? 0), `row ${row.id}`);

    const now = db.stats();
    // The two checking SELECTs above are new texts: they ran on the writer.
    assert.equal(now.writer.executed - before.writer.executed, writeCalls + 2, 'writes ran on the writer');
    assert.equal(readerExecuted(now) - readerExecuted(before), readCalls, 'reads ran on readers');
  } finally {
    await db.close();
  }
});

test('writes run in the order they were issued', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    await db.exec('CREATE TABLE log(seq INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER)');
    const ins = db.prepare('INSERT INTO log(n) VALUES (?)');
    const other = db.prepare('INSERT INTO log(n) VALUES (? + 0)');
    const results = await Promise.all(
      Array.from({ length: 2000 }, (_, i) => (i % 2 ? other : ins).run(i)),
    );
    results.forEach((r, i) => assert.equal(r.lastInsertRowid, i + 1, `call ${i}`));
    const rows = await db.prepare('SELECT seq, n FROM log ORDER BY seq').all();
    rows.forEach((row, i) => assert.equal(row.n, i));
  } finally {
    await db.close();
  }
});

test('a long read on one reader does not hold up short reads on the others, nor writes', async () => {
  // The long read counts to 10^15: it never finishes, so every short read
  // and write below must complete while it is still running. The child
  // exits with process.exit() once they have, ending the long read with it.
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 3 });
      await db.exec(\`CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100)
        INSERT INTO t SELECT x, x * 7 FROM c\`);
      const long = db.prepare(${JSON.stringify(COUNT_TO)});
      const short = db.prepare('SELECT v FROM t WHERE id = ?');
      const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
      await long.get(1);
      await short.get(1);
      const base = db.stats().readers.reduce((s, r) => s + r.executed, 0);
      let longSettled = false;
      long.get(1e15).then(() => (longSettled = true), () => (longSettled = true));
      while (db.stats().readers.reduce((s, r) => s + r.executed, 0) === base) {
        await new Promise((r) => setImmediate(r));
      }
      let wrong = 0;
      for (let round = 0; round < 3; round++) {
        const rows = await Promise.all(Array.from({ length: 200 }, (_, i) => short.get(1 + (i % 100))));
        rows.forEach((row, i) => { if (row.v !== (1 + (i % 100)) * 7) wrong++; });
        const { lastInsertRowid } = await ins.run(round);
        if ((await short.get(lastInsertRowid)).v !== round) wrong++;
      }
      const stats = db.stats();
      console.log(JSON.stringify({
        longSettled,
        wrong,
        readerJobs: stats.readers.reduce((s, r) => s + r.executed, 0) - base,
        busyReaders: stats.readers.length,
      }));
      process.exit(0);
    })();
    `,
    { killAfterMs: 20000 },
  );
  assert.equal(child.signal, null, `child hung: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  const result = JSON.parse(child.stdout);
  assert.deepEqual(result, { longSettled: false, wrong: 0, readerJobs: 1 + 3 * 201, busyReaders: 3 });
});
