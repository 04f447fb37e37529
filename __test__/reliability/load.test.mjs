// Load (issue 13): 64 clients at once, for a bounded time, against one
// database: single writes, reads, transactions (some rolled back),
// batches, read snapshots, iterators and cancelled calls. Each client owns
// its rows and keeps a model of them; every result is checked against the
// model as it arrives, and after close() and a reopen the database must
// hold exactly what the models say.
//
// Seeded (OFFLOOP_LOAD_SEED replays a run; the seed is printed);
// OFFLOOP_LOAD_MS sets how long the clients run (default 4000).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';
import { createRequire } from 'node:module';

const tmp = tempDir('load');
after(() => tmp.cleanup());

const SEED = Number(process.env.OFFLOOP_LOAD_SEED ?? Date.now() % 2 ** 31);
const DURATION_MS = Number(process.env.OFFLOOP_LOAD_MS ?? 4000);
const CLIENTS = 64;

const random = createRequire(import.meta.url)('./seeded-random.cjs').seededRandom;

class Rollback extends Error {}

function isCancellation(err) {
  return err instanceof DOMException && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** One client: its rows (id → v), its counter, and the checks it made. */
async function client(db, c, rnd, deadline, counts) {
  const rows = new Map();
  let total = 0; // counters.total: the sum of v added by its transactions
  let nextId = c * 1_000_000 + 1;
  const pick = () => {
    const ids = [...rows.keys()];
    return ids.length === 0 ? null : ids[Math.floor(rnd() * ids.length)];
  };
  const stmt = {
    insert: db.prepare('INSERT INTO t(id, client, v) VALUES (?, ?, ?)'),
    update: db.prepare('UPDATE t SET v = ? WHERE id = ?'),
    remove: db.prepare('DELETE FROM t WHERE id = ?'),
    get: db.prepare('SELECT v FROM t WHERE id = ?'),
    mine: db.prepare('SELECT id, v FROM t WHERE client = ? ORDER BY id'),
    slow: db.prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c'),
  };
  await db.prepare('INSERT INTO counters(client, total) VALUES (?, 0)').run(c);
  const ops = [
    async function insert() {
      const id = nextId++;
      const v = Math.floor(rnd() * 1000);
      const r = await stmt.insert.run(id, c, v);
      assert.deepEqual(r, { changes: 1, lastInsertRowid: id });
      rows.set(id, v);
    },
    async function update() {
      const id = pick();
      if (id === null) return;
      const v = Math.floor(rnd() * 1000);
      assert.equal((await stmt.update.run(v, id)).changes, 1);
      rows.set(id, v);
    },
    async function remove() {
      const id = pick();
      if (id === null) return;
      assert.equal((await stmt.remove.run(id)).changes, 1);
      rows.delete(id);
    },
    async function get() {
      const id = pick();
      if (id === null) return;
      // Issued after the write resolved: it must see it, reader or not.
      assert.equal((await stmt.get.get(id))?.v, rows.get(id));
    },
    async function transaction() {
      const added = Array.from({ length: 3 }, () => [nextId++, Math.floor(rnd() * 1000)]);
      const sum = added.reduce((s, [, v]) => s + v, 0);
      const rollback = rnd() < 0.3;
      try {
        await db.transaction(async (tx) => {
          const ins = tx.prepare('INSERT INTO t(id, client, v) VALUES (?, ?, ?)');
          for (const [id, v] of added) await ins.run(id, c, v);
          await tx.prepare('UPDATE counters SET total = total + ? WHERE client = ?').run(sum, c);
          // Its own uncommitted writes are visible inside it.
          const inside = await tx.prepare('SELECT count(*) AS n FROM t WHERE client = ?').get(c);
          assert.equal(inside.n, rows.size + 3);
          if (rollback) throw new Rollback();
        });
        assert.equal(rollback, false);
        for (const [id, v] of added) rows.set(id, v);
        total += sum;
      } catch (err) {
        if (!(err instanceof Rollback)) throw err;
      }
    },
    async function batch() {
      const added = Array.from({ length: 4 }, () => [nextId++, Math.floor(rnd() * 1000)]);
      const results = await db.batch(added.map(([id, v]) => [stmt.insert, [id, c, v]]));
      assert.deepEqual(results.map((r) => r.changes), [1, 1, 1, 1]);
      for (const [id, v] of added) rows.set(id, v);
    },
    async function snapshot() {
      const [n, sum, counter] = await db.read(async (r) => [
        (await r.prepare('SELECT count(*) AS n FROM t WHERE client = ?').get(c)).n,
        (await r.prepare('SELECT coalesce(sum(v), 0) AS s FROM t WHERE client = ?').get(c)).s,
        (await r.prepare('SELECT total FROM counters WHERE client = ?').get(c)).total,
      ]);
      assert.equal(n, rows.size);
      assert.equal(sum, [...rows.values()].reduce((s, v) => s + v, 0));
      assert.equal(counter, total);
    },
    async function iterate() {
      const seen = [];
      for await (const row of stmt.mine.iterate(c)) seen.push([row.id, row.v]);
      assert.deepEqual(seen, [...rows.entries()].sort((a, b) => a[0] - b[0]));
    },
    async function cancelledRead() {
      const controller = new AbortController();
      const call = stmt.slow.withOptions({ signal: controller.signal }).get(200_000);
      if (rnd() < 0.5) controller.abort();
      else setTimeout(() => controller.abort(), 1);
      try {
        assert.equal((await call).n, 200_000);
        counts.finishedFirst += 1;
      } catch (err) {
        assert.ok(isCancellation(err), String(err));
        counts.cancelled += 1;
      }
    },
    async function cancelledWrite() {
      // Either it ran (its result stands) or it never did: no third way.
      const id = nextId++;
      const v = Math.floor(rnd() * 1000);
      try {
        await stmt.insert.withOptions({ timeout: 1 }).run(id, c, v);
        rows.set(id, v);
        counts.finishedFirst += 1;
      } catch (err) {
        assert.ok(isCancellation(err), String(err));
        counts.cancelled += 1;
      }
    },
  ];
  while (Date.now() < deadline) {
    const op = ops[Math.floor(rnd() * ops.length)];
    await op();
    counts.ops += 1;
  }
  return { c, rows, total };
}

test(`${CLIENTS} clients of mixed work, every result checked, then the exact final state after a reopen (seed ${SEED})`, { timeout: 120000 }, async (t) => {
  t.diagnostic(`seed ${SEED}: replay with OFFLOOP_LOAD_SEED=${SEED}`);
  const file = tmp.file();
  const db = await Database.open(file, { readers: 4, checkpoint: { thresholdFrames: 200 } });
  await db.exec(`
    CREATE TABLE t(id INTEGER PRIMARY KEY, client INTEGER NOT NULL, v INTEGER NOT NULL);
    CREATE INDEX t_client ON t(client);
    CREATE TABLE counters(client INTEGER PRIMARY KEY, total INTEGER NOT NULL);
  `);
  const counts = { ops: 0, cancelled: 0, finishedFirst: 0 };
  const deadline = Date.now() + DURATION_MS;
  const seeds = random(SEED);
  const models = await Promise.all(
    Array.from({ length: CLIENTS }, (_, c) => client(db, c, random(Math.floor(seeds() * 2 ** 31)), deadline, counts)),
  );
  await db.close();
  t.diagnostic(`${counts.ops} operations checked (${counts.cancelled} cancelled, ${counts.finishedFirst} finished before their cancellation)`);

  const again = await Database.open(file, { readers: 1 });
  try {
    assert.equal((await again.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    const rows = await again.prepare('SELECT id, client, v FROM t ORDER BY id').all();
    const expected = models
      .flatMap(({ c, rows: model }) => [...model.entries()].map(([id, v]) => ({ id, client: c, v })))
      .sort((a, b) => a.id - b.id);
    assert.deepEqual(rows.map((r) => ({ ...r })), expected);
    const counters = await again.prepare('SELECT client, total FROM counters ORDER BY client').all();
    assert.deepEqual(counters.map((r) => ({ ...r })), models.map(({ c, total }) => ({ client: c, total })));
  } finally {
    await again.close();
  }
  assert.ok(counts.ops > CLIENTS, `${counts.ops} operations`);
});
