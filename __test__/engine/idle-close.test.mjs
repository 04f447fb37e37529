// Connections close when idle and reopen on demand, with nothing visible to
// the user; what holds state keeps its connection open; the process keeps
// at most `connections` open, closing those idle longest; a process near
// its limit on open files gets a clear error, never a crash. The cases
// that count connections or descriptors run in child processes of their
// own.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, readerExecuted, runChild, tempDir, until } from '../engine-helpers.mjs';

const tmp = tempDir('idle-close');
after(() => tmp.cleanup());

const IDLE_MS = 100;
Database.configure({ idleTimeout: IDLE_MS });
after(() => Database.configure({ idleTimeout: null }));

const connections = () => Database.stats().connections;
/** The first column of the first row. */
const value = async (db, sql) => Object.values(await db.prepare(sql).get())[0];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('an idle database closes its connections, and the next calls reopen them with the same settings and data', async () => {
  const file = path.join(tmp.dir, 'reopen.db');
  const db = await Database.open(file, { readers: 2, cacheSize: -4096, timeout: 1234 });
  try {
    await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1), (2)');
    assert.deepEqual(await db.prepare('SELECT sum(v) AS s FROM t').get(), { __proto__: null, s: 3 });
    const settings = await db.settings();
    assert.ok(connections() > 0);
    await until(() => connections() === 0, 'every connection closed when idle');
    // As SQLite leaves a WAL database after its last connection closed.
    assert.deepEqual(fs.readdirSync(tmp.dir).filter((f) => f.startsWith('reopen.db')), ['reopen.db']);

    await db.exec('INSERT INTO t VALUES (3)');
    const reads = await Promise.all(Array.from({ length: 32 }, () => db.prepare('SELECT sum(v) AS s FROM t').get()));
    for (const row of reads) assert.deepEqual(row, { __proto__: null, s: 6 });
    assert.deepEqual(await db.settings(), settings);
    assert.equal(await value(db, 'PRAGMA cache_size'), -4096);
    assert.equal(await value(db, 'PRAGMA busy_timeout'), 1234);
  } finally {
    await db.close();
  }
});

test('an open opens the writer only: readers and the checkpointer open at their first job; strictSettings opens them all at once', async () => {
  const before = connections();
  const lazy = await Database.open(path.join(tmp.dir, 'on-demand.db'), { readers: 2 });
  const strict = await Database.open(path.join(tmp.dir, 'strict.db'), { readers: 2, strictSettings: true });
  try {
    // The strict one: writer, two readers, the checkpointer.
    assert.equal(connections() - before, 1 + 4);
    await strict.close();
    assert.equal(connections() - before, 1);
    // Reads open readers as they need them, each with the database's data
    // (the first call of a text runs on the writer, which learns it reads).
    await lazy.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
    assert.equal(readerExecuted(lazy.stats()), 0);
    await lazy.prepare('SELECT v FROM t').get();
    const reads = await Promise.all(Array.from({ length: 16 }, () => lazy.prepare('SELECT v FROM t').get()));
    for (const row of reads) assert.deepEqual(row, { __proto__: null, v: 1 });
    assert.ok(readerExecuted(lazy.stats()) >= 16, 'readers opened and ran the reads');
    // A checkpoint on request opens the checkpointer if it is not open yet.
    assert.equal((await lazy.checkpoint('TRUNCATE')).logFrames, 0);
  } finally {
    await lazy.close();
    await strict.close();
  }
  assert.equal(connections(), before);
});

test('what holds state keeps the connection open: TEMP tables, an attached database, a transaction, an iterator, a session, a user function, a pragma set by a statement', async () => {
  const cases = {
    temp: async (db) => {
      await db.exec('CREATE TEMP TABLE scratch(v); INSERT INTO scratch VALUES (7)');
      return async () => assert.equal(await value(db, 'SELECT v FROM scratch'), 7);
    },
    attached: async (db) => {
      await db.exec(`ATTACH '${path.join(tmp.dir, 'other.db')}' AS other; CREATE TABLE IF NOT EXISTS other.o(v)`);
      return async () => assert.equal(await value(db, 'SELECT count(*) FROM other.o'), 0);
    },
    transaction: async (db) => {
      let release;
      const held = new Promise((r) => (release = r));
      const tx = db.transaction(async (t) => {
        await t.prepare('INSERT INTO t VALUES (10)').run();
        await held;
        return value(t, 'SELECT count(*) FROM t');
      });
      return async () => {
        release();
        assert.equal(await tx, 2);
      };
    },
    iterator: async (db) => {
      // Far more rows than one chunk: the cursor stays open on its reader.
      const it = db.prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT x FROM c').iterate();
      const first = await it.next();
      return async () => {
        assert.deepEqual(first.value, { __proto__: null, x: 1 });
        let last = 0;
        for await (const row of it) last = row.x;
        assert.equal(last, 100000);
      };
    },
    session: async (db) => {
      await db.exec('CREATE TABLE keyed(id INTEGER PRIMARY KEY, v)');
      const session = db.createSession();
      await db.exec('INSERT INTO keyed VALUES (1, 5)');
      return async () => assert.ok((await session.changeset()).length > 0);
    },
    function: async (db) => {
      db.function('twice', (v) => v * 2);
      assert.equal(await value(db, 'SELECT twice(21)'), 42);
      return async () => assert.equal(await value(db, 'SELECT twice(4)'), 8);
    },
    pragma: async (db) => {
      await db.exec('PRAGMA recursive_triggers = ON');
      return async () => assert.equal(await value(db, 'PRAGMA recursive_triggers'), 1);
    },
  };
  // The control: with nothing held, the same database closes them all.
  const control = await Database.open(path.join(tmp.dir, 'control.db'));
  await control.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
  await until(() => connections() === 0, 'the control database closed its connections');
  await control.close();

  for (const [name, hold] of Object.entries(cases)) {
    const db = await Database.open(path.join(tmp.dir, `held-${name}.db`));
    try {
      await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1)');
      const check = await hold(db);
      await sleep(IDLE_MS * 5);
      assert.ok(connections() > 0, `${name}: a connection stays open`);
      await check();
    } finally {
      await db.close();
    }
  }
});

test('past Database.configure({ connections }), the connections idle longest close; every database still answers', async () => {
  const dir = path.join(tmp.dir, 'capped');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    const fs = require('node:fs');
    Database.configure({ connections: 16, idleTimeout: 3600000 });
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    (async () => {
      const dbs = [];
      for (let i = 0; i < 60; i++) {
        const db = await Database.open(${JSON.stringify(dir)} + '/t' + i + '.db', { readers: 1 });
        await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (' + i + ')');
        await db.prepare('SELECT v FROM t').get();
        dbs.push(db);
      }
      for (let tries = 0; Database.stats().connections > 16 && tries < 5000; tries++) await new Promise((r) => setTimeout(r, 1));
      const settled = Database.stats().connections;
      const values = await Promise.all(dbs.map((db) => db.prepare('SELECT v FROM t').get().then((r) => r.v)));
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ settled, values, limit: Database.stats().connectionLimit }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { settled, values, limit } = JSON.parse(child.stdout);
  assert.equal(limit, 16);
  assert.ok(settled <= 16, `${settled} connections open`);
  assert.deepEqual(values, Array.from({ length: 60 }, (_, i) => i));
});

/** Runs `source` in a child whose limit on open files is `fds`. */
function withFileLimit(fds, source) {
  const script = path.join(tmp.dir, `limited-${fds}-${Math.random().toString(36).slice(2)}.cjs`);
  fs.writeFileSync(script, source);
  return runChild(
    tmp.dir,
    `
    const { spawnSync } = require('node:child_process');
    const r = spawnSync('sh', ['-c', 'ulimit -n ${fds} && exec "$0" "$1"', process.execPath, ${JSON.stringify(script)}],
      { env: { ...process.env, OFFLOOP_INDEX: OFFLOOP }, encoding: 'utf8' });
    process.stdout.write(r.stdout); process.stderr.write(r.stderr); process.exitCode = r.status ?? 1;
    `,
    { killAfterMs: 120000 },
  );
}

test('1,000 databases with the default options in a process allowed 1,024 open files: every call answers', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'thousand');
  fs.mkdirSync(dir);
  const child = await withFileLimit(
    1024,
    `
    const { Database } = require(process.env.OFFLOOP_INDEX);
    const fs = require('node:fs');
    (async () => {
      const dbs = [];
      let peakFds = 0;
      for (let i = 0; i < 1000; i++) {
        const db = await Database.open(${JSON.stringify(dir)} + '/t' + i + '.db');
        await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (' + i + ')');
        dbs.push(db);
        if (i % 50 === 0) peakFds = Math.max(peakFds, fs.readdirSync('/proc/self/fd').length);
      }
      // Every tenant read at once: the calls past the cap wait for the
      // connections idle longest to close.
      const values = await Promise.all(dbs.map((db) => db.prepare('SELECT v FROM t').get().then((r) => r.v)));
      const ok = values.every((v, i) => v === i);
      const { connections, connectionLimit } = Database.stats();
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ ok, peakFds, connections, connectionLimit }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const result = JSON.parse(child.stdout);
  assert.equal(result.ok, true);
  assert.ok(result.peakFds < 1024, `${result.peakFds} descriptors`);
  assert.equal(result.connectionLimit, Math.floor((1024 - 64) / 4));
});

test('300 replicated databases in a process allowed 1,024 open files: what the replicators hold counts against the cap, every call answers, and reads of tenants at rest wake no writer', { skip: process.platform !== 'linux' }, async () => {
  // Before the replicator's connections counted, 84 of 200 opened.
  const dir = path.join(tmp.dir, 'replicated');
  fs.mkdirSync(dir);
  const child = await withFileLimit(
    1024,
    `
    const { Database } = require(process.env.OFFLOOP_INDEX);
    const fs = require('node:fs');
    const dir = ${JSON.stringify(dir)};
    (async () => {
      const dbs = [];
      let peakFds = 0;
      for (let i = 0; i < 300; i++) {
        const db = await Database.open(dir + '/t' + i + '.db', { replica: { url: 'file://' + dir + '/replica-' + i } });
        await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (' + i + ')');
        dbs.push(db);
        if (i % 20 === 0) peakFds = Math.max(peakFds, fs.readdirSync('/proc/self/fd').length);
      }
      // Reads of every tenant, 64 at a time.
      const values = [];
      for (let i = 0; i < dbs.length; i += 64) {
        values.push(...(await Promise.all(dbs.slice(i, i + 64).map((db) => db.prepare('SELECT v FROM t').get().then((r) => r.v)))));
        peakFds = Math.max(peakFds, fs.readdirSync('/proc/self/fd').length);
      }
      const ok = values.length === 300 && values.every((v, i) => v === i);
      // Every tenant at rest, then read again, 64 in flight, by a text
      // none has prepared: each read opens a reader, and no writer or
      // replicator wakes for it.
      Database.configure({ idleTimeout: 200 });
      while (Database.stats().connections > 0) await new Promise((r) => setTimeout(r, 50));
      let next = 0;
      const cold = [];
      const failures = [];
      await Promise.all(Array.from({ length: 64 }, async () => {
        while (next < dbs.length) {
          const i = next++;
          try {
            cold[i] = (await dbs[i].prepare('SELECT v AS w FROM t').get()).w;
          } catch (err) {
            failures.push(err.message);
          }
          peakFds = Math.max(peakFds, fs.readdirSync('/proc/self/fd').length);
        }
      }));
      const coldOk = cold.length === 300 && cold.every((v, i) => v === i);
      const errors = dbs.map((db) => db.stats().replica.lastError).filter(Boolean);
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ ok, coldOk, failures: failures.slice(0, 3), peakFds, errors }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const result = JSON.parse(child.stdout);
  assert.equal(result.ok, true);
  assert.deepEqual(result.failures, []);
  assert.equal(result.coldOk, true);
  assert.deepEqual(result.errors, []);
  assert.ok(result.peakFds < 1024, `${result.peakFds} descriptors`);
});

test('a burst of writes to 500 replicated databases in a process allowed 256 open files: calls at the cap wait while connections close, and every one answers', { skip: process.platform !== 'linux' }, async () => {
  // A replicating writer's close waits for its replica, then its
  // replicator rests: slower than the calls arrive. Before the calls at the
  // cap waited for as long as connections kept closing (rather than a
  // second), and opened nothing past it meanwhile, about a third of the
  // writes and most of the reads failed for want of descriptors.
  const dir = path.join(tmp.dir, 'burst');
  fs.mkdirSync(dir);
  const child = await withFileLimit(
    256,
    `
    const { Database } = require(process.env.OFFLOOP_INDEX);
    const dir = ${JSON.stringify(dir)};
    (async () => {
      const dbs = [];
      for (let i = 0; i < 500; i++) {
        dbs.push(await Database.open(dir + '/t' + i + '.db', { replica: { url: 'file://' + dir + '/replica-' + i } }));
      }
      const settle = (p) => p.then((v) => v, (e) => e.message);
      // Every tenant written at once, then read at once.
      const writes = await Promise.all(dbs.map((db, i) => settle(db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (' + i + ')').then(() => i))));
      const reads = await Promise.all(dbs.map((db) => settle(db.prepare('SELECT v FROM t').get().then((r) => r.v))));
      const { connectionLimit } = Database.stats();
      const closes = await Promise.all(dbs.map((db) => settle(db.close().then(() => 'closed'))));
      console.log(JSON.stringify({ writes, reads, closes, connectionLimit }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { writes, reads, closes, connectionLimit } = JSON.parse(child.stdout);
  assert.equal(connectionLimit, (256 - 64) / 4);
  const expected = Array.from({ length: 500 }, (_, i) => i);
  assert.deepEqual(writes, expected);
  assert.deepEqual(reads, expected);
  assert.deepEqual(closes, Array(500).fill('closed'));
});

test('out of file descriptors with every connection holding state: the call that needed a connection fails with a clear error, and the other databases go on', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'emfile');
  fs.mkdirSync(dir);
  const child = await withFileLimit(
    96,
    `
    const { Database } = require(process.env.OFFLOOP_INDEX);
    // No cap to speak of: the descriptors run out first.
    Database.configure({ connections: 1000000 });
    (async () => {
      const dbs = [];
      let error;
      for (let i = 0; i < 200 && !error; i++) {
        try {
          const db = await Database.open(${JSON.stringify(dir)} + '/t' + i + '.db', { readers: 2 });
          dbs.push(db);
          // A TEMP table keeps the writer's connection open: nothing can
          // close to make room.
          await db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (' + i + '); CREATE TEMP TABLE held(x)');
        } catch (e) {
          error = { code: e.code, message: e.message };
        }
      }
      const values = await Promise.all(dbs.slice(0, 5).map((db) => db.prepare('SELECT v FROM t').get().then((r) => r.v)));
      const open = Database.stats().connections;
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ error, values, open, held: dbs.length }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { error, values, open, held } = JSON.parse(child.stdout);
  // Every writer kept its connection: none was closed to make room.
  assert.ok(open >= held - 1, `${open} connections open for ${held} databases`);
  assert.ok(error, 'the descriptors ran out');
  // When the connection's own open runs out, the message says so and what
  // to change; a WAL file SQLite opens later fails with its own message.
  assert.match(error.message, /^unable to open database file/);
  if (/too many open files/.test(error.message)) assert.match(error.message, /Database\.configure\(\{ connections \}\)/);
  assert.deepEqual(values, [0, 1, 2, 3, 4]);
});

test('out of file descriptors while other connections idle: the open (a reader, the writer, the checkpointer) waits for the ones idle longest to close, and every call answers', { skip: process.platform !== 'linux' }, async () => {
  const dir = path.join(tmp.dir, 'emfile-idle');
  fs.mkdirSync(dir);
  // Made here, with descriptors to spare: the child only opens and reads.
  for (let i = 0; i < 120; i++) {
    const db = await Database.open(path.join(dir, `t${i}.db`));
    await db.exec(`CREATE TABLE t(v); INSERT INTO t VALUES (${i})`);
    await db.close();
  }
  const child = await withFileLimit(
    96,
    `
    const { Database } = require(process.env.OFFLOOP_INDEX);
    // The cap is far above what 96 descriptors allow: only running out
    // tells the process to close idle connections.
    Database.configure({ connections: 1000000, idleTimeout: 600000 });
    (async () => {
      const dbs = [];
      const failures = [];
      const values = [];
      // One after another: each open and its first read, while the
      // connections opened before sit idle.
      for (let i = 0; i < 120; i++) {
        try {
          const db = await Database.open(${JSON.stringify(dir)} + '/t' + i + '.db', { readers: 2 });
          dbs.push(db);
          values.push((await db.prepare('SELECT v FROM t').get()).v);
        } catch (e) {
          failures.push(i + ': ' + e.message);
        }
      }
      const peak = Database.stats().connections;
      // Then every one at once: readers open while others must close.
      const again = await Promise.all(dbs.map((db) => db.prepare('SELECT v + 0 AS v FROM t').get().then((r) => r.v, (e) => e.message)));
      // And a checkpoint on each: its checkpointer opens now, for it.
      const checkpoints = await Promise.all(dbs.map((db) => db.checkpoint('PASSIVE').then((r) => typeof r.logFrames, (e) => e.message)));
      await Promise.all(dbs.map((db) => db.close()));
      console.log(JSON.stringify({ failures, values, again, checkpoints, peak, after: Database.stats().connections }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { failures, values, again, checkpoints, peak, after: left } = JSON.parse(child.stdout);
  const expected = Array.from({ length: 120 }, (_, i) => i);
  assert.deepEqual(failures, []);
  assert.deepEqual(values, expected);
  assert.deepEqual(again, expected);
  assert.deepEqual(checkpoints, Array(120).fill('number'));
  // 96 descriptors cannot hold 120 connections: idle ones closed.
  assert.ok(peak < 120, `${peak} connections open`);
  assert.equal(left, 0);
});

test("a checkpointer's nudge that waited at the cap while the writer closed its idle connection opens nothing: that close copied the WAL", async () => {
  // The tenant's checkpointer has run once, so after an idle close it
  // opens again only for work. 15 databases then hold a connection each
  // that cannot close (a TEMP table), and the cap is 16: opening them
  // closed the tenant's two. The tenant's next write opens its writer (the
  // 16th), and the commit nudges the checkpointer, which finds no room and
  // asks the writer, idle now, to close. That close (the file's last
  // connection) copied the WAL: the checkpointer must not open for the
  // nudge, which would keep the file open while the tenant rests.
  const dir = path.join(tmp.dir, 'stale-nudge');
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    const fs = require('node:fs');
    Database.configure({ connections: 16, idleTimeout: 3600000 });
    fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true });
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    (async () => {
      const tenant = await Database.open(${JSON.stringify(dir)} + '/tenant.db', { readers: 0, checkpoint: { thresholdFrames: 1 } });
      await tenant.exec('CREATE TABLE t(v)');
      await tenant.prepare('INSERT INTO t VALUES (?)').run(0);
      while (tenant.stats().checkpoint.runs === 0) await sleep(5);
      const pinned = [];
      for (let i = 0; i < 15; i++) {
        const db = await Database.open(${JSON.stringify(dir)} + '/pinned' + i + '.db', { readers: 0, checkpoint: false });
        await db.exec('CREATE TEMP TABLE held(v)');
        pinned.push(db);
      }
      const before = { connections: Database.stats().connections, runs: tenant.stats().checkpoint.runs };
      await tenant.prepare('INSERT INTO t VALUES (?)').run(1);
      for (let i = 0; i < 500 && Database.stats().connections > 15; i++) await sleep(10);
      const seen = [];
      for (let i = 0; i < 30; i++) {
        seen.push(Database.stats().connections);
        await sleep(10);
      }
      const { runs } = tenant.stats().checkpoint;
      const wal = fs.existsSync(${JSON.stringify(dir)} + '/tenant.db-wal');
      const values = (await tenant.prepare('SELECT v FROM t').all()).map((r) => r.v);
      await Promise.all([...pinned, tenant].map((db) => db.close()));
      console.log(JSON.stringify({ before, seen, runs, wal, values }));
    })();
    `,
  );
  assert.equal(child.code, 0, child.stderr);
  const { before, seen, runs, wal, values } = JSON.parse(child.stdout);
  assert.deepEqual(before, { connections: 15, runs: 1 });
  // The writer closed for the checkpointer, and nothing opened after it.
  assert.ok(
    seen.every((n) => n === 15),
    `connections over 300 ms: ${seen}`,
  );
  assert.equal(runs, 1);
  assert.equal(wal, false);
  assert.deepEqual(values, [0, 1]);
});
