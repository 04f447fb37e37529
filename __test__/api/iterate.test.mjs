// iterate(): results are streamed in chunks from the thread that runs the
// query, never held whole; ending an iteration early frees the reader; an
// open iterator neither blocks other work nor sees later writes.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { COUNT_TO, Database, readerExecuted, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('iterate');
after(() => tmp.cleanup());

/** Rows 1..? with a 100-byte text each. */
const PADDED = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x, printf('%0100d', x) AS pad FROM c";

/**
 * 10,000 rows at once, then one row per 10^8 steps of a counter that goes
 * on (for practical purposes) forever. Reading past the dense start, or
 * stepping the statement to its end, never finishes: only a cursor that is
 * closed lets its connection go.
 */
const DENSE_THEN_ENDLESS =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000000000) SELECT x FROM c WHERE x <= 10000 OR x % 100000000 = 0';

async function openWithRows(options, rows) {
  const db = await Database.open(tmp.file(), options);
  await db.exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows})
    INSERT INTO t SELECT x, 'row' || x FROM c;`);
  return db;
}

/**
 * Runs `body` in a child process with `db` (one reader) and `endless` (a
 * prepared DENSE_THEN_ENDLESS statement, route learnt) in scope. A child,
 * because without the behaviour under test its reader would never come
 * back and close() would wait for it forever: the child is killed instead.
 */
async function withEndless(body) {
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    const assert = require('node:assert/strict');
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 1 });
      const endless = db.prepare(${JSON.stringify(DENSE_THEN_ENDLESS)});
      await endless.columns();
      ${body}
      await db.close();
      console.log('closed');
    })().catch((err) => { console.error(err); process.exit(1); });
    `,
    { killAfterMs: 20000 },
  );
  assert.equal(child.signal, null, 'hung: the endless query kept its reader');
  assert.equal(child.code, 0, child.stderr);
  return child.stdout.trim().split('\n');
}

test('breaking out of an endless (10^15-row) iteration after 1,000 rows returns, and the reader serves the next query', async () => {
  // If iterate() computed or held the whole result, the loop would never
  // see its first row.
  const out = await withEndless(`
      let n = 0;
      for await (const row of endless.iterate()) {
        n += 1;
        assert.equal(row.x, n);
        if (n === 1000) break;
      }
      console.log(n);
      const before = db.stats().readers[0].executed;
      const v = await db.prepare('SELECT 42 AS v').get();
      const v2 = await db.prepare('SELECT 42 AS v').get();
      console.log(v.v, v2.v, db.stats().readers[0].executed - before);
  `);
  assert.deepEqual(out, ['1000', '42 42 1', 'closed']);
});

test("an abort of iterate()'s signal stops the chunk running on its thread, a later chunk as well as the first, and the reader serves the next query", async () => {
  // The dense rows come in chunks; the chunk after them steps through the
  // endless part. Without the signal on every chunk, that chunk never ends.
  const out = await withEndless(`
      const controller = new AbortController();
      let n = 0;
      let error = null;
      try {
        for await (const row of endless.withOptions({ signal: controller.signal }).iterate()) {
          n += 1;
          assert.equal(row.x, n);
          if (n === 9000) setTimeout(() => controller.abort(), 100);
        }
      } catch (err) {
        error = err;
      }
      console.log(n > 9000 && n <= 10000, error?.name);
      const v = await db.prepare('SELECT 42 AS v').get();
      console.log(v.v);
  `);
  assert.deepEqual(out, ['true AbortError', '42', 'closed']);
});

test('streaming 2 million rows of 100-byte text keeps memory bounded and yields every row in order', async () => {
  // In a child process: a clean baseline for rss, and none of the test
  // runner's per-promise bookkeeping (iterate() makes a few promises a row).
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 2 });
      const stmt = db.prepare(${JSON.stringify(PADDED)});
      await stmt.get(1);
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      let n = 0;
      let wrong = 0;
      for await (const row of stmt.iterate(2000000)) {
        n += 1;
        if (row.x !== n || row.pad.length !== 100 || Number(row.pad) !== n) wrong += 1;
        if (n % 20000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
      }
      await db.close();
      console.log(JSON.stringify({ n, wrong, growthMB: Math.round((peak - rssBefore) / 1048576) }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { n, wrong, growthMB } = JSON.parse(child.stdout);
  assert.equal(n, 2_000_000);
  assert.equal(wrong, 0);
  // Holding the result whole takes about 1 GB; streaming stays far below.
  assert.ok(growthMB < 200, `rss grew ${growthMB} MB`);
});

test('an open iterator is not buffered whole while other readers keep serving a stream of reads', async () => {
  // A reader holding a cursor sets its rows aside only when every reader is
  // pinned by cursors while work waits; here the other reader is never
  // pinned, however slowly the machine lets it run.
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 2 });
      const stmt = db.prepare(${JSON.stringify(PADDED)});
      const short = db.prepare(${JSON.stringify(COUNT_TO)});
      await stmt.get(1);
      await short.get(1);
      // 100 chains of small reads: the shared queue is never empty for long,
      // and the other reader never stops taking from it.
      let stop = false;
      let reads = 0;
      const pump = async () => {
        while (!stop) if ((await short.get(300)).n === 300) reads += 1;
      };
      const flood = Promise.all(Array.from({ length: 100 }, pump));
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      let n = 0;
      for await (const row of stmt.iterate(1500000)) {
        n += 1;
        if (row.x !== n) throw new Error('row ' + n);
        if (n % 10000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
        // Pause, holding the cursor, while the short reads keep coming.
        if (n === 5000) {
          await new Promise((r) => setTimeout(r, 300));
          stop = true;
          await flood;
        }
      }
      const buffered = db.stats().readers.map((r) => r.buffered);
      await db.close();
      console.log(JSON.stringify({ n, reads, buffered, growthMB: Math.round((peak - rssBefore) / 1048576) }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { n, reads, buffered, growthMB } = JSON.parse(child.stdout);
  assert.equal(n, 1_500_000);
  // Every chain read at least once while the cursor was held.
  assert.ok(reads >= 100, `${reads} reads`);
  assert.deepEqual(buffered, [0, 0], 'no reader read its cursor into memory');
  // Setting the remaining rows aside would hold ~300 MB.
  assert.ok(growthMB < 150, `rss grew ${growthMB} MB`);
});

test('break, return() and a throw inside for-await each close the cursor, freeing a 1-reader pool', async () => {
  const out = await withEndless(`
      const short = db.prepare('SELECT ? AS v');
      await short.get(0);
      const check = async (label) => {
        const before = db.stats().readers[0].executed;
        const got = await Promise.all(Array.from({ length: 20 }, (_, i) => short.get(i)));
        got.forEach((row, i) => assert.equal(row.v, i, label));
        assert.equal(db.stats().readers[0].executed, before + 20, label + ': ran on the reader');
        console.log(label);
      };

      let n = 0;
      for await (const row of endless.iterate()) {
        if (++n === 10) break;
        assert.equal(row.x, n);
      }
      await check('break');

      const it = endless.iterate();
      assert.equal((await it.next()).value.x, 1);
      assert.equal((await it.next()).value.x, 2);
      assert.equal((await it.return()).done, true);
      assert.equal((await it.next()).done, true, 'a returned iterator stays done');
      await check('return');

      await assert.rejects(async () => {
        for await (const row of endless.iterate()) {
          if (row.x === 300) throw new Error('stop');
        }
      }, /stop/);
      await check('throw');
  `);
  assert.deepEqual(out, ['break', 'return', 'throw', 'closed']);
});

test('an iterator dropped without finishing is closed when garbage-collected', async () => {
  const file = tmp.file();
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(file)}, { readers: 1 });
      const endless = db.prepare(${JSON.stringify(DENSE_THEN_ENDLESS)});
      const short = db.prepare('SELECT 7 AS v');
      await endless.columns();
      await short.get();
      await (async () => {
        const it = endless.iterate();
        await it.next();
        await it.next();
      })();
      // Collect until the reader closed the dropped iterator's cursor.
      // (Queued before that, the reads below would find the only reader
      // pinned by an endless cursor.)
      while (db.stats().readers[0].openCursors > 0) {
        global.gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      const rows = await Promise.all([short.get(), short.get(), short.get()]);
      console.log(rows.map((r) => r.v).join(','));
      await db.close();
      console.log('closed');
    })();
    `,
    { args: ['--expose-gc'], killAfterMs: 20000 },
  );
  assert.equal(child.signal, null, 'the reader stayed pinned by the abandoned cursor');
  assert.equal(child.code, 0, child.stderr);
  assert.equal(child.stdout, '7,7,7\nclosed\n');
});

test('an open iterator keeps its snapshot while writes resolve, and reads after them see the writes', async () => {
  // One reader, pinned by the open cursor: the reads below still run (the
  // reader sets the cursor's remaining rows aside) and see every write.
  const db = await openWithRows({ readers: 1 }, 1000);
  try {
    const all = db.prepare('SELECT id, v FROM t ORDER BY id');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    const del = db.prepare('DELETE FROM t WHERE id = ?');
    await all.get();
    await count.get();
    const it = all.iterate();
    const seen = [];
    for (let i = 0; i < 10; i++) seen.push((await it.next()).value.id);
    const before = readerExecuted(db.stats());
    for (let i = 0; i < 5; i++) {
      await ins.run(`new${i}`);
      await del.run(500 + i);
      assert.equal((await count.get()).n, 1000, `round ${i}`);
    }
    assert.ok(readerExecuted(db.stats()) >= before + 5, 'the counts ran on the reader');
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value.id);
    assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => i + 1), 'the iterator saw its own snapshot');
    assert.equal((await all.all()).length, 1000);
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t WHERE v LIKE ?').get('new%')).n, 5);
  } finally {
    await db.close();
  }
});

test('a read issued inside a read snapshot runs while the other reader holds an open iterator', async () => {
  // One reader is pinned by the iterator, the other serves the snapshot,
  // whose callback awaits a plain read: only the iterator's reader can take
  // it, by reading its cursor into memory. A child, because without that
  // the read would wait forever: the child is killed instead.
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 2 });
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) INSERT INTO t SELECT x FROM c');
      const ids = db.prepare('SELECT id FROM t ORDER BY id');
      const count = db.prepare('SELECT count(*) AS n FROM t');
      await ids.get();
      await count.get();
      const it = ids.iterate();
      const first = (await it.next()).value.id;
      const inside = await db.read(async (r) => {
        const own = (await r.prepare('SELECT count(*) AS n FROM t').get()).n;
        return [own, (await count.get()).n];
      });
      let last = first;
      let n = 1;
      for (let r = await it.next(); !r.done; r = await it.next()) {
        n += 1;
        last = r.value.id;
      }
      const buffered = db.stats().readers.map((r) => r.buffered).reduce((a, b) => a + b, 0);
      await db.close();
      console.log(JSON.stringify({ first, inside, n, last, buffered }));
    })();
    `,
    { killAfterMs: 60000 },
  );
  assert.equal(child.signal, null, 'the read inside the snapshot never ran');
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { first: 1, inside: [100000, 100000], n: 100000, last: 100000, buffered: 1 });
});

test('more open iterators than readers all finish, consumed in turns', async () => {
  const db = await openWithRows({ readers: 1 }, 600);
  try {
    const stmts = [
      db.prepare('SELECT id FROM t ORDER BY id'),
      db.prepare('SELECT id FROM t ORDER BY id DESC'),
      db.prepare('SELECT id FROM t WHERE id % 2 = 0 ORDER BY id'),
    ];
    for (const s of stmts) await s.get();
    const its = stmts.map((s) => s.iterate());
    const seen = [[], [], []];
    let open = its.length;
    const done = [false, false, false];
    while (open > 0) {
      for (let k = 0; k < its.length; k++) {
        if (done[k]) continue;
        const r = await its[k].next();
        if (r.done) {
          done[k] = true;
          open -= 1;
        } else seen[k].push(r.value.id);
      }
    }
    const up = Array.from({ length: 600 }, (_, i) => i + 1);
    assert.deepEqual(seen[0], up);
    assert.deepEqual(seen[1], [...up].reverse());
    assert.deepEqual(seen[2], up.filter((x) => x % 2 === 0));
  } finally {
    await db.close();
  }
});

test('with readers: 0, a write that resolves while an iterator is open on the writer is committed', async () => {
  const file = tmp.file();
  const db = await Database.open(file, { readers: 0 });
  await db.exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
    INSERT INTO t SELECT x, 'row' || x FROM c;`);
  const other = await Database.open(file, { readers: 1 });
  try {
    const it = db.prepare('SELECT id FROM t ORDER BY id').iterate();
    assert.equal((await it.next()).value.id, 1);
    await db.prepare('INSERT INTO t(v) VALUES (?)').run('late');
    // Another connection sees the write only if it was committed.
    const seen = await other.prepare('SELECT count(*) AS n FROM t').get();
    assert.equal(seen.n, 1001);
    let n = 1;
    for (let r = await it.next(); !r.done; r = await it.next()) n += 1;
    assert.ok(n === 1000 || n === 1001, `iterated ${n} rows`);
  } finally {
    await other.close();
    await db.close();
  }
});

/** Rows 1..limit-1, then a "malformed JSON" error. */
function failingAfter(limit) {
  return `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) SELECT CASE WHEN x < ${limit} THEN x ELSE json('not json') END AS x FROM c`;
}

async function iterateUntilError(stmt) {
  let n = 0;
  await assert.rejects(
    async () => {
      for await (const row of stmt.iterate()) {
        n += 1;
        assert.equal(row.x, n);
      }
    },
    (err) =>
      err.code === 'ERR_SQLITE_ERROR' && err.sqliteCode === 'SQLITE_ERROR' && /malformed JSON/.test(err.message),
  );
  return n;
}

test('an error during iteration rejects the iterator with ERR_SQLITE_ERROR, and the reader keeps working', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    const failing = db.prepare(failingAfter(1000));
    await failing.columns();
    const before = db.stats().readers[0].executed;
    const n = await iterateUntilError(failing);
    assert.ok(n <= 999);
    assert.ok(db.stats().readers[0].executed > before, 'the iteration ran on the reader');
    const one = db.prepare('SELECT 1 AS one');
    assert.equal((await one.get()).one, 1);
    const mid = db.stats().readers[0].executed;
    for (let i = 0; i < 5; i++) assert.equal((await one.get()).one, 1);
    assert.equal(db.stats().readers[0].executed, mid + 5);
    // The failed statement can run again.
    assert.equal(await iterateUntilError(failing), n);
  } finally {
    await db.close();
  }
});

// node:sqlite steps one row per next(): every row before the failing one is
// yielded, then the error is thrown. offloop steps a chunk at a time, so the
// rows stepped before the error in the same chunk must still come first.
for (const limit of [100, 1000]) {
  test(
    `iterate() yields every row before an error (error at row ${limit}), then throws`,
    async () => {
      const db = await Database.open(tmp.file(), { readers: 1 });
      try {
        const failing = db.prepare(failingAfter(limit));
        await failing.columns();
        assert.equal(await iterateUntilError(failing), limit - 1);
      } finally {
        await db.close();
      }
    },
  );
}
