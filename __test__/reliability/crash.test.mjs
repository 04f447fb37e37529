// Crash rounds (issue 13): a child process writes single rows, transactions
// and batches at once, with the checkpointer kept busy, and is SIGKILLed at
// a random moment. After each kill the database must pass integrity_check,
// hold every write the child saw acknowledged, and hold no part of a
// transaction or batch without the rest. Process crashes only: what each
// `synchronous` level guarantees for a power loss is in docs/reliability.md.
//
// Seeded: OFFLOOP_CRASH_SEED replays a run; the seed is printed either way.
// OFFLOOP_CRASH_ROUNDS sets the number of rounds (default 24).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';
import { createRequire } from 'node:module';

const tmp = tempDir('crash');
after(() => tmp.cleanup());

const SEED = Number(process.env.OFFLOOP_CRASH_SEED ?? Date.now() % 2 ** 31);
const ROUNDS = Number(process.env.OFFLOOP_CRASH_ROUNDS ?? 24);

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
const random = createRequire(import.meta.url)('./seeded-random.cjs').seededRandom;

// The writer: three loops at once, each printing what was acknowledged
// (one line per resolved promise, written before anything else runs).
// Group `g` of size `n` is one single row (n = 1), one transaction or one
// batch: its rows all carry grp = g and n.
const CHILD = `
const fs = require('node:fs');
const { Database } = require(process.argv[2]);
const [file, synchronous, base] = [process.argv[3], process.argv[4], Number(process.argv[5])];
(async () => {
  const db = await Database.open(file, {
    synchronous,
    readers: 2,
    checkpoint: { thresholdFrames: 32, idleMs: 5 },
  });
  await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, n INTEGER NOT NULL, b BLOB)');
  let next = base;
  const blob = (id) => new Uint8Array(500 + (id % 7) * 400).fill(id % 251);
  const ack = (g) => fs.writeSync(1, g + '\\n');
  const insert = db.prepare('INSERT INTO t(id, grp, n, b) VALUES (?, ?, ?, ?)');
  const read = db.prepare('SELECT count(*) AS c FROM t WHERE grp >= ?');
  fs.writeSync(1, 'ready\\n');
  const forever = async (step) => { for (;;) await step(); };
  forever(async () => {
    const id = next++;
    await insert.run(id, id, 1, blob(id));
    ack(id);
  });
  forever(async () => {
    const g = next;
    const ids = [next++, next++, next++, next++, next++];
    await db.transaction(async (tx) => {
      const ins = tx.prepare('INSERT INTO t(id, grp, n, b) VALUES (?, ?, ?, ?)');
      for (const id of ids) await ins.run(id, g, ids.length, blob(id));
    });
    ack(g);
  });
  forever(async () => {
    const g = next;
    const ids = Array.from({ length: 8 }, () => next++);
    await db.batch(ids.map((id) => [insert, [id, g, ids.length, blob(id)]]));
    ack(g);
  });
  forever(() => read.get(base));
})();
`;

/** Runs the child until `killAt(ready)` says, then SIGKILLs it; resolves to the acknowledged groups. */
function crashOnce(script, file, synchronous, base, delayMs, beforeReady) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, path.join(ROOT, 'index.js'), file, synchronous, String(base)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    let timer = null;
    const kill = () => child.kill('SIGKILL');
    // A child that never gets going still dies, so a round never hangs.
    const guard = setTimeout(kill, 20000);
    if (beforeReady) timer = setTimeout(kill, delayMs);
    child.stdout.on('data', (d) => {
      out += d;
      if (timer === null && out.startsWith('ready\n')) timer = setTimeout(kill, delayMs);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      clearTimeout(timer);
      if (signal !== 'SIGKILL') {
        reject(new Error(`the child ended by itself (${code} ${signal}): ${stderr}`));
        return;
      }
      // Only whole lines: an acknowledgement is written in one write.
      const lines = out.split('\n').slice(0, -1);
      resolve({ ready: lines[0] === 'ready', acked: lines.slice(1).map(Number) });
    });
  });
}

test(`${ROUNDS} SIGKILLs at random moments lose no acknowledged write and leave no partial transaction (seed ${SEED})`, { timeout: 170000 }, async (t) => {
  t.diagnostic(`seed ${SEED}: replay with OFFLOOP_CRASH_SEED=${SEED}`);
  const next = random(SEED);
  const script = path.join(tmp.dir, 'writer.cjs');
  fs.writeFileSync(script, CHILD);
  const files = { normal: tmp.file('normal'), full: tmp.file('full') };
  const acknowledged = { normal: new Set(), full: new Set() };
  let totalAcked = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const synchronous = round % 2 === 0 ? 'normal' : 'full';
    // Most kills land in the middle of the writes; one in five anywhere
    // from the start, opening and WAL recovery included.
    const beforeReady = next() < 0.2;
    const delay = Math.floor(beforeReady ? 20 + next() * 300 : 5 + next() * 400);
    const base = (round + 1) * 1_000_000;
    const { acked } = await crashOnce(script, files[synchronous], synchronous, base, delay, beforeReady);
    for (const g of acked) acknowledged[synchronous].add(g);
    totalAcked += acked.length;

    if (!fs.existsSync(files[synchronous])) continue; // killed before it created the file
    const db = await Database.open(files[synchronous], { readers: 0 });
    try {
      assert.equal((await db.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok', `round ${round}`);
      const groups = await db.prepare('SELECT grp, n, count(*) AS c FROM t GROUP BY grp').all().catch((err) => {
        // Killed before the table existed.
        if (/no such table/.test(err.message)) return [];
        throw err;
      });
      const present = new Map(groups.map((g) => [g.grp, g]));
      for (const g of groups) {
        assert.equal(g.c, g.n, `round ${round} (${synchronous}, seed ${SEED}): group ${g.grp} has ${g.c} of its ${g.n} rows`);
      }
      for (const g of acknowledged[synchronous]) {
        assert.ok(present.has(g), `round ${round} (${synchronous}, seed ${SEED}): acknowledged group ${g} is missing`);
      }
    } finally {
      await db.close();
    }
  }
  t.diagnostic(`${ROUNDS} rounds, ${totalAcked} acknowledged writes (single rows, transactions of 5, batches of 8), all present`);
  assert.ok(totalAcked > 0);
});
