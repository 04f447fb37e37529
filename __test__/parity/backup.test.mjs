// backup(): side by side with node:sqlite under Node 24 (results, progress
// reports, errors, argument checks), and what only offloop promises: the
// copy runs on a thread of its own, so writes go on while it runs.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const { backup } = createRequire(import.meta.url)(path.join(ROOT, 'index.js'));
const tmp = tempDir('backup');
after(() => tmp.cleanup());

const FILL = `CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
  INSERT INTO t(v) SELECT printf('%.1000c', 'x') || i FROM n;`;

async function filled() {
  const db = await Database.open(tmp.file('source'));
  await db.exec(FILL);
  return db;
}

/** Row count and integrity of a copy, read through offloop. */
async function inspect(file) {
  const copy = await Database.open(file, { readOnly: true });
  try {
    const { n, top } = await copy.prepare('SELECT count(*) AS n, max(id) AS top FROM t').get();
    const { integrity_check: ok } = await copy.prepare('PRAGMA integrity_check').get();
    // Each insert commits on its own, so a committed state holds ids
    // 1..n without a gap.
    return { n, ok, gapless: top === n };
  } finally {
    await copy.close();
  }
}

test('node:sqlite parity: backup() results, progress and errors', { skip: skipWithoutNode24 }, async (t) => {
  const results = runUnderNode24('backup.cjs');
  for (const r of results) {
    await t.test(r.name, () => assert.deepStrictEqual(r.offloop, r.node));
  }
});

test('writes resolve while a backup waits for its locked target, and the copy completes after', async () => {
  const db = await filled();
  const target = tmp.file('locked-target');
  const holder = await Database.open(target);
  try {
    const tx = await holder.begin({ mode: 'exclusive' });
    let settled = false;
    const copying = db.backup(target, { rate: 1 }).finally(() => {
      settled = true;
    });
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => insert.run(`during ${i}`)));
    assert.deepEqual(
      results.map((r) => r.changes),
      Array(50).fill(1),
    );
    assert.equal(settled, false, 'the backup cannot finish while its target is locked');
    await tx.rollback();
    await holder.close();
    const pages = await copying;
    assert.ok(pages > 100, `copied ${pages} pages`);
    const { n, ok, gapless } = await inspect(target);
    assert.equal(ok, 'ok');
    assert.ok(n >= 400 && n <= 450 && gapless, `the copy holds a committed state, not ${n} rows`);
  } finally {
    await holder.close();
    await db.close();
  }
});

test('many writes and reads during a slow backup (rate 1) all succeed; the copy is one committed state', async () => {
  const db = await filled();
  try {
    const target = tmp.file('slow-copy');
    const reports = [];
    const copying = db.backup(target, { rate: 1, progress: (p) => reports.push(p) });
    const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    const writes = Array.from({ length: 200 }, (_, i) => insert.run(`w${i}`));
    const reads = Array.from({ length: 50 }, () => count.get());
    const written = await Promise.all(writes);
    written.forEach((r, i) => assert.equal(r.changes, 1, `write ${i}`));
    for (const { n } of await Promise.all(reads)) assert.ok(n >= 400 && n <= 600, `read ${n}`);
    const pages = await copying;
    assert.ok(reports.length > 0);
    for (const [i, r] of reports.entries()) {
      assert.equal(r.totalPages >= r.remainingPages && r.remainingPages > 0, true, `report ${i}`);
      if (i > 0) assert.ok(r.remainingPages < reports[i - 1].remainingPages, `report ${i} moves forward`);
    }
    assert.equal(reports.at(-1).totalPages, pages);
    const { n, ok, gapless } = await inspect(target);
    assert.equal(ok, 'ok');
    assert.ok(n >= 400 && n <= 600 && gapless, `the copy holds a committed state, not ${n} rows`);
    assert.equal((await count.get()).n, 600);
  } finally {
    await db.close();
  }
});

test('db.backup() and the module backup() copy the same database', async () => {
  const db = await filled();
  try {
    const a = tmp.file('method');
    const b = tmp.file('module');
    assert.equal(await db.backup(a), await backup(db, b));
    assert.deepEqual(await inspect(a), await inspect(b));
    assert.throws(() => backup({}, b), { code: 'ERR_INVALID_ARG_TYPE' });
  } finally {
    await db.close();
  }
});

test('a backup asked for while the database opens waits for the open', async () => {
  const file = tmp.file('opening');
  const first = await Database.open(file);
  await first.exec(FILL);
  await first.close();
  const db = new Database(file);
  try {
    const target = tmp.file('copy-of-opening');
    assert.ok((await db.backup(target)) > 0);
    assert.equal((await inspect(target)).n, 400);
  } finally {
    await db.close();
  }
});

test('an in-memory database is refused: no connection but the writer can read it', async () => {
  const db = await Database.open(':memory:');
  try {
    await assert.rejects(db.backup(tmp.file('memory-copy')), { code: 'ERR_INVALID_STATE' });
  } finally {
    await db.close();
  }
});
