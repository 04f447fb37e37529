// Write transactions, batches, read snapshots, cancellation, timeouts and
// busy handling.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, readerExecuted, tempDir, until } from '../engine-helpers.mjs';

const tmp = tempDir('transactions');
after(() => tmp.cleanup());

// Counts to `?` in a recursive CTE: with 1e12 it runs for hours, so a call
// that settles at all was interrupted.
const COUNT = 'WITH RECURSIVE x(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM x WHERE i < ?) SELECT count(*) AS n FROM x';
const FOREVER = 1e12;

async function counterDb(options = {}) {
  const db = await Database.open(tmp.file(), options);
  await db.exec('CREATE TABLE counter(id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0)');
  return db;
}

async function counterValue(db) {
  return (await db.prepare('SELECT n FROM counter WHERE id = 1').get()).n;
}

test('a transaction commits when its callback resolves and returns the callback value', async () => {
  const db = await counterDb();
  try {
    const result = await db.transaction(async (tx) => {
      await tx.prepare('UPDATE counter SET n = n + 5').run();
      return 'done';
    });
    assert.equal(result, 'done');
    assert.equal(await counterValue(db), 5);
  } finally {
    await db.close();
  }
});

test('a transaction rolls back when its callback rejects, and rethrows', async () => {
  const db = await counterDb();
  try {
    const failure = new Error('stop');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.prepare('UPDATE counter SET n = 99').run();
        assert.equal((await tx.prepare('SELECT n FROM counter').get()).n, 99, 'visible inside');
        throw failure;
      }),
      (err) => err === failure,
    );
    assert.equal(await counterValue(db), 0);
  } finally {
    await db.close();
  }
});

test('nested transactions are savepoints: an inner failure undoes only the inner work', async () => {
  const db = await counterDb();
  try {
    await db.transaction(async (tx) => {
      await tx.prepare('UPDATE counter SET n = n + 1').run();
      await tx.transaction(async (inner) => {
        await inner.prepare('UPDATE counter SET n = n + 10').run();
      });
      await assert.rejects(
        tx.transaction(async (inner) => {
          await inner.prepare('UPDATE counter SET n = n + 100').run();
          throw new Error('inner');
        }),
        /inner/,
      );
    });
    assert.equal(await counterValue(db), 11);
  } finally {
    await db.close();
  }
});

test('1,000 concurrent transactions each incrementing a counter end with the exact count and never interleave', async () => {
  const db = await counterDb();
  try {
    await db.exec('CREATE TABLE log(seq INTEGER PRIMARY KEY, tx INTEGER, step TEXT)');
    const n = 1000;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        db.transaction(async (tx) => {
          const log = tx.prepare('INSERT INTO log(tx, step) VALUES (?, ?)');
          await log.run(i, 'begin');
          const { n: current } = await tx.prepare('SELECT n FROM counter WHERE id = 1').get();
          await tx.prepare('UPDATE counter SET n = ? WHERE id = 1').run(current + 1);
          await log.run(i, 'end');
        }),
      ),
    );
    assert.equal(await counterValue(db), n);
    const log = await db.prepare('SELECT tx, step FROM log ORDER BY seq').all();
    assert.equal(log.length, 2 * n);
    for (let k = 0; k < log.length; k += 2) {
      assert.equal(log[k].step, 'begin');
      assert.equal(log[k + 1].step, 'end');
      assert.equal(log[k + 1].tx, log[k].tx, `transaction ${log[k].tx} was interleaved`);
    }
  } finally {
    await db.close();
  }
});

test('other writes wait for an open transaction and never join it', async () => {
  const db = await counterDb();
  try {
    let outside;
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.prepare('UPDATE counter SET n = 1').run();
        outside = db.prepare('UPDATE counter SET n = n + 100').run();
        // The outside write has not run: it is queued behind this transaction.
        assert.equal((await tx.prepare('SELECT n FROM counter').get()).n, 1);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await outside;
    assert.equal(await counterValue(db), 100, 'the outside write ran after the rollback, on its own');
  } finally {
    await db.close();
  }
});

test('db.isTransaction is true while a transaction callback runs', async () => {
  const db = await counterDb();
  try {
    assert.equal(db.isTransaction, false);
    await db.transaction(async () => {
      assert.equal(db.isTransaction, true);
    });
    assert.equal(db.isTransaction, false);
  } finally {
    await db.close();
  }
});

test('a transaction handle rejects calls after its transaction ended', async () => {
  const db = await counterDb();
  try {
    let saved;
    await db.transaction(async (tx) => {
      saved = tx.prepare('UPDATE counter SET n = 7');
    });
    await assert.rejects(saved.run(), { code: 'ERR_INVALID_STATE' });
    assert.equal(await counterValue(db), 0);
  } finally {
    await db.close();
  }
});

test('transaction modes are validated; deferred and exclusive work', async () => {
  const db = await counterDb();
  try {
    await assert.rejects(db.transaction(async () => {}, { mode: 'sometimes' }), { code: 'ERR_INVALID_ARG_VALUE' });
    await assert.rejects(db.transaction('not a function'), { code: 'ERR_INVALID_ARG_TYPE' });
    for (const mode of ['deferred', 'exclusive']) {
      await db.transaction(async (tx) => tx.prepare('UPDATE counter SET n = n + 1').run(), { mode });
    }
    assert.equal(await counterValue(db), 2);
  } finally {
    await db.close();
  }
});

test('a batch runs as one transaction and returns each statement result', async () => {
  const db = await counterDb();
  try {
    const insert = db.prepare('INSERT INTO counter(n) VALUES (?)');
    const results = await db.batch([
      [insert, [10]],
      [insert, 20],
      ['UPDATE counter SET n = n + 1 WHERE id = :id', { id: 1 }],
      ['SELECT id, n FROM counter ORDER BY id'],
    ]);
    assert.deepEqual(results.slice(0, 3), [
      { changes: 1, lastInsertRowid: 2 },
      { changes: 1, lastInsertRowid: 3 },
      { changes: 1, lastInsertRowid: 3 },
    ]);
    assert.deepEqual(
      results[3].map((r) => [r.id, r.n]),
      [
        [1, 1],
        [2, 10],
        [3, 20],
      ],
    );
  } finally {
    await db.close();
  }
});

test('a failing batch rolls back entirely and names the failing statement', async () => {
  const db = await counterDb();
  try {
    await assert.rejects(
      db.batch([
        ['INSERT INTO counter(id, n) VALUES (?, ?)', [2, 1]],
        ['INSERT INTO counter(id, n) VALUES (?, ?)', [2, 2]],
      ]),
      (err) => err.code === 'ERR_SQLITE_ERROR' && err.errcode === 1555 && err.batchIndex === 1,
    );
    assert.equal((await db.prepare('SELECT count(*) AS k FROM counter').get()).k, 1);
    assert.throws(() => db.batch([[db.prepare('SELECT ?'), [undefined]]]), (err) => {
      return err.code === 'ERR_INVALID_ARG_TYPE' && err.batchIndex === 0;
    });
  } finally {
    await db.close();
  }
});

test('a batch inside a transaction is a savepoint of it', async () => {
  const db = await counterDb();
  try {
    await db.transaction(async (tx) => {
      await tx.batch([['UPDATE counter SET n = n + 1']]);
      await assert.rejects(tx.batch([['UPDATE counter SET n = n + 10'], ['INSERT INTO counter(id) VALUES (1)']]));
      await tx.prepare('UPDATE counter SET n = n + 100').run();
    });
    assert.equal(await counterValue(db), 101);
  } finally {
    await db.close();
  }
});

test('a read snapshot does not see a commit that lands in the middle of it', async () => {
  const db = await counterDb({ readers: 2 });
  try {
    const seen = await db.read(async (r) => {
      const read = r.prepare('SELECT n FROM counter WHERE id = 1');
      const first = (await read.get()).n;
      await db.prepare('UPDATE counter SET n = n + 1 WHERE id = 1').run();
      const outside = await counterValue(db);
      const second = (await read.get()).n;
      return { first, second, outside };
    });
    assert.deepEqual(seen, { first: 0, second: 0, outside: 1 });
    // After the snapshot ends, its reader sees the commit.
    await db.read(async (r) => {
      assert.equal((await r.prepare('SELECT n FROM counter').get()).n, 1);
    });
  } finally {
    await db.close();
  }
});

test('an empty read snapshot costs nothing; a used one runs on a single reader', async () => {
  const db = await counterDb({ readers: 4 });
  try {
    const before = readerExecuted(db.stats());
    await db.read(async () => {});
    assert.equal(readerExecuted(db.stats()), before);
    await db.read(async (r) => {
      const q = r.prepare('SELECT n FROM counter');
      for (let i = 0; i < 20; i++) await q.get();
    });
    const busy = db.stats().readers.filter((s) => s.executed > 0);
    assert.equal(busy.length, 1, 'one reader served the whole snapshot');
  } finally {
    await db.close();
  }
});

test('an aborted queued call never runs', async () => {
  const db = await counterDb();
  try {
    // Occupy the writer with a write that takes a while.
    const busy = db.exec(
      'CREATE TABLE filler(x); WITH RECURSIVE x(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM x WHERE i < 2000000) INSERT INTO filler SELECT i FROM x',
    );
    const controller = new AbortController();
    const queued = db.prepare('UPDATE counter SET n = 42').withOptions({ signal: controller.signal }).run();
    controller.abort();
    await assert.rejects(queued, { name: 'AbortError' });
    await busy;
    assert.equal(await counterValue(db), 0);
  } finally {
    await db.close();
  }
});

test('an aborted running query stops while a query on another reader completes', async () => {
  const db = await Database.open(tmp.file(), { readers: 2 });
  try {
    const count = db.prepare(COUNT);
    await count.get(1);
    await count.get(1); // now routed to the readers
    const before = readerExecuted(db.stats());
    const controller = new AbortController();
    const endless = count.withOptions({ signal: controller.signal }).get(FOREVER);
    await until(() => readerExecuted(db.stats()) > before, 'a reader to take the query');
    const other = await count.get(1000);
    assert.equal(other.n, 1000);
    controller.abort();
    await assert.rejects(endless, { name: 'AbortError' });
    // Both readers are free again.
    const again = await Promise.all([count.get(5), count.get(6)]);
    assert.deepEqual(
      again.map((r) => r.n),
      [5, 6],
    );
  } finally {
    await db.close();
  }
});

test('a call timeout and the database queryTimeout interrupt a query that would run for hours', async () => {
  const db = await Database.open(tmp.file(), { readers: 1, queryTimeout: 200 });
  try {
    const count = db.prepare(COUNT);
    await assert.rejects(count.get(FOREVER), { name: 'TimeoutError' });
    await assert.rejects(count.withOptions({ timeout: 50 }).get(FOREVER), { name: 'TimeoutError' });
    // timeout 0 lifts the database bound for one call; a short query is fine.
    assert.equal((await count.withOptions({ timeout: 0 }).get(10)).n, 10);
    await assert.rejects(db.exec('SELECT 1', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  } finally {
    await db.close();
  }
});

test('an abort that comes after the call finished does not hide its result', async () => {
  const db = await counterDb();
  try {
    const controller = new AbortController();
    const run = db.prepare('UPDATE counter SET n = 3').withOptions({ signal: controller.signal });
    const result = await run.run();
    controller.abort();
    assert.equal(result.changes, 1);
    assert.equal(await counterValue(db), 3);
  } finally {
    await db.close();
  }
});

test('a stuck transaction is rolled back after transactionIdleTimeout and its next call says why', async () => {
  const db = await counterDb({ transactionIdleTimeout: 200 });
  try {
    let outside;
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.prepare('UPDATE counter SET n = 1').run();
        // The pitfall: a call on the database, not on the transaction. It
        // waits behind the transaction, which waits for it.
        outside = await db.prepare('UPDATE counter SET n = n + 10').run();
        await tx.prepare('UPDATE counter SET n = n + 100').run();
      }),
      (err) => err.code === 'ERR_INVALID_STATE' && /transactionIdleTimeout/.test(err.message),
    );
    assert.equal(outside.changes, 1);
    assert.equal(await counterValue(db), 10, 'the transaction was rolled back; the outside write ran');
  } finally {
    await db.close();
  }
});

/** Starts a child process that holds the write lock of `file` until `release()`. */
function holdWriteLock(file) {
  const script = `
    const { Database } = require(${JSON.stringify(path.join(ROOT, 'index.js'))});
    (async () => {
      const db = await Database.open(${JSON.stringify(file)});
      await db.transaction(async (tx) => {
        await tx.exec('INSERT INTO t VALUES (1)');
        console.log('locked');
        await new Promise((r) => process.stdin.once('data', r));
      });
      await db.close();
      console.log('released');
    })();
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    for (const line of chunk.split('\n').filter(Boolean)) {
      lines.push(line);
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  return {
    async saw(line) {
      while (!lines.includes(line)) await new Promise((r) => waiters.push(r));
    },
    release() {
      child.stdin.end('release\n');
    },
    exited,
  };
}

test('a write waits while another process holds the write lock, then succeeds', async () => {
  const file = tmp.file();
  const db = await Database.open(file);
  try {
    await db.exec('CREATE TABLE t(x)');
    const holder = holdWriteLock(file);
    await holder.saw('locked');
    const base = db.stats().writer.executed;
    const write = db.prepare('INSERT INTO t VALUES (2)').run();
    // The writer counts a job when it starts it; from then it is inside
    // SQLite, waiting for the lock.
    await until(() => db.stats().writer.executed > base, 'the waiting write started');
    holder.release();
    const result = await write;
    assert.equal(result.changes, 1);
    assert.equal(await holder.exited, 0);
    // The child's row committed first: the write waited for the lock.
    assert.deepEqual(
      (await db.prepare('SELECT x FROM t ORDER BY rowid').all()).map((r) => r.x),
      [1, 2],
    );
  } finally {
    await db.close();
  }
});

test('a write that times out on the lock fails with SQLITE_BUSY and leaves the connection usable', async () => {
  const file = tmp.file();
  const db = await Database.open(file, { timeout: 20 });
  try {
    await db.exec('CREATE TABLE t(x)');
    const holder = holdWriteLock(file);
    await holder.saw('locked');
    await assert.rejects(db.prepare('INSERT INTO t VALUES (2)').run(), (err) => (err.errcode & 0xff) === 5);
    await assert.rejects(
      db.transaction(async (tx) => tx.prepare('INSERT INTO t VALUES (3)').run()),
      (err) => (err.errcode & 0xff) === 5,
    );
    holder.release();
    await holder.saw('released');
    await db.transaction(async (tx) => tx.prepare('INSERT INTO t VALUES (4)').run());
    assert.deepEqual(
      (await db.prepare('SELECT x FROM t ORDER BY rowid').all()).map((r) => r.x),
      [1, 4],
    );
  } finally {
    await db.close();
  }
});
