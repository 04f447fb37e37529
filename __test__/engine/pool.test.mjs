// The process-wide pool of SQLite threads: threads bounded by the machine
// (or Database.configure), never by the number of open databases; a
// transaction holds no thread while JavaScript decides its next statement;
// one tenant's bad file fails that tenant alone; closing every database
// gives every thread back. Each case runs in a child process of its own,
// so the threads it counts are its own.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('pool');
after(() => tmp.cleanup());

/** A child's script prelude: counts this process's offloop threads. */
const OFFLOOP_THREADS = `
  const fs = require('node:fs');
  const offloopThreads = () => fs.readdirSync('/proc/self/task').filter((t) => {
    try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').startsWith('offloop-'); } catch { return false; }
  }).length;
`;

test('1,000 open databases, each written and read, run on a bounded pool of threads', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'thousand');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    ${OFFLOOP_THREADS}
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    (async () => {
      const dbs = [];
      let peak = 0;
      for (let i = 0; i < 1000; i++) {
        dbs.push(await Database.open(${JSON.stringify(dir)} + '/tenant-' + i + '.db', { readers: 1 }));
        peak = Math.max(peak, offloopThreads());
      }
      // Every tenant busy at once.
      const wrong = (await Promise.all(dbs.map(async (db, i) => {
        await db.exec('CREATE TABLE t(v)');
        await db.prepare('INSERT INTO t VALUES (?)').run(i);
        return (await db.prepare('SELECT v FROM t').get()).v === i ? 0 : 1;
      }))).reduce((a, b) => a + b, 0);
      peak = Math.max(peak, offloopThreads());
      const stats = Database.stats();
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ wrong, peak, limit: stats.threadLimit, databases: stats.databases }));
    })();
    `,
    { killAfterMs: 240000 },
  );
  assert.equal(child.code, 0, child.stderr);
  const { wrong, peak, limit, databases } = JSON.parse(child.stdout);
  assert.equal(wrong, 0);
  assert.equal(databases, 1000);
  // The pool's threads and the timer's, whatever the number of databases.
  assert.ok(peak <= limit + 1, `${peak} offloop threads with 1,000 databases open (bound ${limit})`);
});

test('transactions on 64 databases at once, each awaiting JavaScript between statements, on a pool of 4 threads', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'sixty-four');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    ${OFFLOOP_THREADS}
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    const tick = () => new Promise((r) => setImmediate(r));
    (async () => {
      Database.configure({ threads: 4 });
      const dbs = await Promise.all(Array.from({ length: 64 }, (_, i) =>
        Database.open(${JSON.stringify(dir)} + '/tenant-' + i + '.db', { readers: 1 })));
      await Promise.all(dbs.map((db) => db.exec('CREATE TABLE t(step INTEGER, v INTEGER)')));
      let open = 0;
      let mostOpenAtOnce = 0;
      let peak = 0;
      const results = await Promise.all(dbs.map((db, i) => db.transaction(async (tx) => {
        open++;
        mostOpenAtOnce = Math.max(mostOpenAtOnce, open);
        for (let step = 0; step < 5; step++) {
          await tx.prepare('INSERT INTO t VALUES (?, ?)').run(step, i);
          // JavaScript decides the next statement: every other
          // transaction must be able to go on meanwhile.
          await tick();
          peak = Math.max(peak, offloopThreads());
        }
        const { n } = await tx.prepare('SELECT count(*) AS n FROM t WHERE v = ?').get(i);
        open--;
        return n;
      })));
      const committed = await Promise.all(dbs.map((db, i) =>
        db.prepare('SELECT group_concat(step) AS steps FROM t WHERE v = ?').get(i)));
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({
        results: results.every((n) => n === 5),
        committed: committed.every((r) => r.steps === '0,1,2,3,4'),
        mostOpenAtOnce,
        threadsBound: peak <= 4 + 1,
      }));
    })();
    `,
    { killAfterMs: 120000 },
  );
  assert.equal(child.signal, null, `child hung: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { results: true, committed: true, mostOpenAtOnce: 64, threadsBound: true });
});

test('one tenant running long scans on every reader holds only its own lanes; the other tenants go on meanwhile', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'slow-tenant');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    ${OFFLOOP_THREADS}
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    // A scan of a few hundred milliseconds, whatever the build.
    const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) AS n FROM c';
    (async () => {
      // Three threads: the slow tenant's two readers may hold two.
      Database.configure({ threads: 3 });
      const slow = await Database.open(${JSON.stringify(dir)} + '/slow.db', { readers: 2 });
      const others = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        Database.open(${JSON.stringify(dir)} + '/tenant-' + i + '.db', { readers: 1 })));
      await Promise.all(others.map((db) => db.exec('CREATE TABLE t(v)')));
      await slow.prepare(SLOW).get(); // learns its route (the writer), so the next run on readers
      let slowSettled = 0;
      const scans = Array.from({ length: 6 }, () => slow.prepare(SLOW).get().then(() => { slowSettled++; }));
      await new Promise((r) => setTimeout(r, 20)); // both readers are scanning
      const started = Date.now();
      await Promise.all(others.map(async (db, i) => {
        for (let k = 0; k < 10; k++) {
          await db.prepare('INSERT INTO t VALUES (?)').run(k);
          await db.prepare('SELECT count(*) AS n FROM t').get();
        }
      }));
      const othersMs = Date.now() - started;
      const settledMeanwhile = slowSettled;
      const peak = offloopThreads();
      await Promise.all(scans);
      await Promise.all([slow, ...others].map((db) => db.close()));
      console.log(JSON.stringify({ othersMs, settledMeanwhile, peak }));
    })();
    `,
    { killAfterMs: 120000 },
  );
  assert.equal(child.code, 0, child.stderr);
  const { othersMs, settledMeanwhile, peak } = JSON.parse(child.stdout);
  // Six scans on two readers take three rounds; the other tenants' 160
  // calls ran on the third thread before the first round ended. (Had the
  // scans taken all three threads, the others would have waited for a
  // whole round: three scans.)
  assert.ok(settledMeanwhile < 2, `the other tenants waited for the slow one (${othersMs} ms, ${settledMeanwhile} scans done)`);
  assert.ok(peak <= 3 + 1, `${peak} offloop threads on a bound of 3`);
});

test('a write lock held by one database of the process, while more of its databases than pool threads wait for it, does not stall them until their busy timeout', async () => {
  const file = path.join(tmp.dir, 'one-file-many-handles.db');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    (async () => {
      Database.configure({ threads: 2 });
      const options = { readers: 1, timeout: 20000 };
      const holder = await Database.open(${JSON.stringify(file)}, options);
      await holder.exec('CREATE TABLE t(who TEXT)');
      const waiters = await Promise.all(Array.from({ length: 6 }, () => Database.open(${JSON.stringify(file)}, options)));
      const started = Date.now();
      let waiting;
      await holder.transaction(async (tx) => {
        await tx.prepare('INSERT INTO t VALUES (?)').run('holder');
        // Six BEGIN IMMEDIATEs wait for this lock, on threads of their own:
        // more than the pool's bound.
        waiting = waiters.map((db, i) => db.transaction(async (w) => w.prepare('INSERT INTO t VALUES (?)').run('waiter ' + i)));
        await sleep(100);
        // This statement needs a thread while every one of the two waits.
        await tx.prepare('INSERT INTO t VALUES (?)').run('holder again');
      });
      await Promise.all(waiting);
      const ms = Date.now() - started;
      const { n } = await holder.prepare('SELECT count(*) AS n FROM t').get();
      await Promise.all([holder, ...waiters].map((db) => db.close()));
      console.log(JSON.stringify({ n, ms }));
    })();
    `,
    { killAfterMs: 60000 },
  );
  assert.equal(child.code, 0, child.stderr);
  const { n, ms } = JSON.parse(child.stdout);
  assert.equal(n, 8);
  // Without a thread started past the stall, the holder's second statement
  // waits for a waiter's busy timeout (20 s).
  assert.ok(ms < 10000, `${ms} ms for seven transactions`);
});

test('a tenant whose file is corrupt fails alone; the others go on', async () => {
  const dir = path.join(tmp.dir, 'corrupt');
  const child = await runChild(
    tmp.dir,
    `
    const fs = require('node:fs');
    const { Database } = require(OFFLOOP);
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    const bad = ${JSON.stringify(dir)} + '/bad.db';
    // Not a database: a header SQLite refuses.
    fs.writeFileSync(bad, Buffer.alloc(8192, 0x5a));
    (async () => {
      const good = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        Database.open(${JSON.stringify(dir)} + '/good-' + i + '.db')));
      await Promise.all(good.map((db) => db.exec('CREATE TABLE t(v)')));
      const opening = Database.open(bad).then(() => 'opened', (e) => e.code + ' ' + e.errcode);
      const work = good.map(async (db, i) => {
        for (let k = 0; k < 20; k++) await db.prepare('INSERT INTO t VALUES (?)').run(k);
        return (await db.prepare('SELECT count(*) AS n FROM t').get()).n;
      });
      const badResult = await opening;
      const counts = await Promise.all(work);
      await Promise.all(good.map((db) => db.close()));
      console.log(JSON.stringify({ badResult, counts }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { badResult, counts } = JSON.parse(child.stdout);
  assert.equal(badResult, 'ERR_SQLITE_ERROR 26', 'SQLITE_NOTADB');
  assert.deepEqual(counts, Array(8).fill(20));
});

test('closing every database leaves no offloop thread a second later', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'closing');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    ${OFFLOOP_THREADS}
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    (async () => {
      const dbs = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        Database.open(${JSON.stringify(dir)} + '/tenant-' + i + '.db', { readers: 2 })));
      // Transactions arm the idle timer (its thread must go too).
      await Promise.all(dbs.map(async (db) => {
        await db.exec('CREATE TABLE t(v)');
        await db.transaction(async (tx) => tx.prepare('INSERT INTO t VALUES (1)').run());
        await db.prepare('SELECT * FROM t').all();
      }));
      const during = offloopThreads();
      await Promise.all(dbs.map((db) => db.close()));
      await new Promise((r) => setTimeout(r, 1000));
      console.log(JSON.stringify({ during: during > 0, after: offloopThreads(), stats: Database.stats() }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), {
    during: true,
    after: 0,
    stats: { ...JSON.parse(child.stdout).stats, databases: 0, connections: 0, threads: 0, queued: 0 },
  });
});

test('Database.stats() counts databases and connections; Database.configure() validates threads', async () => {
  const before = Database.stats();
  const db = await Database.open(path.join(tmp.dir, 'stats.db'), { readers: 2 });
  try {
    await db.prepare('SELECT 1').get();
    const during = Database.stats();
    assert.equal(during.databases, before.databases + 1);
    // The writer only: a new SQL text runs there first, and the readers
    // and the checkpointer open at their first job.
    assert.equal(during.connections, before.connections + 1);
    assert.ok(during.threads >= 1 && during.threads <= during.threadLimit + 1);
    assert.equal(typeof during.queued, 'number');
  } finally {
    await db.close();
  }
  assert.equal(Database.stats().databases, before.databases);
  assert.equal(Database.stats().connections, before.connections);

  Database.configure({ threads: 3 });
  assert.equal(Database.stats().threadLimit, 3);
  Database.configure({ threads: null });
  assert.ok(Database.stats().threadLimit >= 8);
  Database.configure({});
  assert.throws(() => Database.configure({ threads: 0 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => Database.configure({ connections: 15 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => Database.configure({ idleTimeout: 0 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => Database.configure({ idleTimeout: '1s' }), { code: 'ERR_INVALID_ARG_TYPE' });
  Database.configure({ connections: 100, idleTimeout: 5000 });
  assert.deepEqual([Database.stats().connectionLimit, Database.stats().idleTimeout], [100, 5000]);
  Database.configure({ connections: null, idleTimeout: null });
  assert.equal(Database.stats().idleTimeout, 30000);
  assert.ok(Database.stats().connectionLimit >= 16);
  assert.throws(() => Database.configure({ threads: 1.5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => Database.configure(null), { code: 'ERR_INVALID_ARG_TYPE' });
});
