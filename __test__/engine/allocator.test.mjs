// The addon's own memory: on Linux with glibc, the Rust side allocates
// through mimalloc (src/lib.rs), whose frees from another thread take no
// lock. The results a SQLite thread allocates are freed on the JS thread or
// the sweeper, and the jobs the JS thread allocates are freed on a SQLite
// thread; with glibc each such free locked the other thread's arena
// (docs/cores.md).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('allocator');
after(() => tmp.cleanup());

const glibc = process.platform === 'linux' && Boolean(process.report.getReport().header.glibcVersionRuntime);

// Rows of text and blobs of many sizes, read by four readers with 256
// calls in flight, every value checked: the allocations cross threads in
// both directions on every call. Some results are large: a blob past 64
// KiB, and 20,000 rows whose buffer grows past it (on Linux with glibc,
// blocks past 64 KiB come from glibc, smaller ones from mimalloc, and a
// buffer that grows across the line moves from one to the other).
const reads = (file) => `
const { Database } = require(OFFLOOP);
(async () => {
  const db = await Database.open(${JSON.stringify(file)}, { readers: 4 });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB)');
  await db.batch(Array.from({ length: 500 }, (_, i) =>
    ['INSERT INTO t VALUES (?, ?, ?)', [i, 'x'.repeat(i * 7), Buffer.alloc(i * 3, i & 0xff)]]));
  const stmt = db.prepare('SELECT id, s, b FROM t WHERE id >= ? ORDER BY id LIMIT 40');
  const many = db.prepare("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x, printf('%050d', x) AS p FROM c");
  const blob = db.prepare('SELECT zeroblob(?) AS z');
  let bad = 0;
  let calls = 0;
  await Promise.all(Array.from({ length: 256 }, async (_, lane) => {
    for (let k = 0; k < 20; k++) {
      const from = (lane * 20 + k) % 460;
      const rows = await stmt.all(from);
      calls++;
      rows.forEach((r, j) => {
        const i = from + j;
        if (r.id !== i || r.s !== 'x'.repeat(i * 7) || !Buffer.from(r.b).equals(Buffer.alloc(i * 3, i & 0xff))) bad++;
      });
      if (rows.length !== 40) bad++;
      if (k === 0 && lane % 16 === 0) {
        const all = await many.all();
        if (all.length !== 20000 || all.some((r, j) => r.x !== j + 1 || r.p !== String(j + 1).padStart(50, '0'))) bad++;
      }
      if (k === 1 && lane % 16 === 1) {
        const { z } = await blob.get(200000 + lane);
        if (z.length !== 200000 + lane || z.some((b) => b !== 0)) bad++;
      }
    }
  }));
  await db.close();
  console.log(JSON.stringify({ calls, bad }));
})().catch((err) => { console.error(err); process.exitCode = 1; });
`;

test('rows allocated on SQLite threads and freed on others come back whole, 256 in flight on four readers', async () => {
  const r = await runChild(tmp.dir, reads(tmp.file()), { killAfterMs: 60000 });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { calls: 256 * 20, bad: 0 });
});

test('on Linux with glibc, the addon allocates through mimalloc', { skip: !glibc && 'not Linux with glibc' }, async () => {
  // mimalloc announces itself on this variable when it starts; glibc's
  // malloc ignores it.
  const r = await runChild(tmp.dir, reads(tmp.file()), { killAfterMs: 60000, env: { MIMALLOC_VERBOSE: '1' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /mimalloc: process init/);
  assert.deepEqual(JSON.parse(r.stdout), { calls: 256 * 20, bad: 0 });
});

// A restore reads the replica in 1 MiB ranges on the store's threads and
// frees each on another. With mimalloc for every block, a restore of 64
// MiB grew the process's peak memory by about as much as the database;
// with large blocks from glibc it grows by a small fraction of it.
test('Database.restore of a 64 MiB database grows peak memory by under half of it', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
  const file = tmp.file('restore-src');
  const url = `file://${tmp.dir}/restore-replica`;
  const made = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(file)}, { replica: { url: ${JSON.stringify(url)}, syncInterval: 60000 } });
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
      await db.transaction(async (tx) => {
        for (let i = 0; i < 18; i++) await tx.exec('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) INSERT INTO t(b) SELECT randomblob(4000) FROM c');
      });
      await db.syncReplica();
      await db.close();
    })().catch((err) => { console.error(err); process.exitCode = 1; });
    `,
    { killAfterMs: 120000 },
  );
  assert.equal(made.code, 0, made.stderr);
  const restored = await runChild(
    tmp.dir,
    `
    const fs = require('node:fs');
    const { Database } = require(OFFLOOP);
    const mib = (field) => Number(fs.readFileSync('/proc/self/status', 'utf8').split('\\n').find((l) => l.startsWith(field + ':')).split(/\\s+/)[1]) / 1024;
    (async () => {
      await new Promise((r) => setTimeout(r, 200));
      const idle = mib('VmRSS');
      fs.writeFileSync('/proc/self/clear_refs', '5');
      await Database.restore(${JSON.stringify(url)}, ${JSON.stringify(tmp.file('restored'))});
      console.log(JSON.stringify({ growthMiB: mib('VmHWM') - idle, bytes: fs.statSync(${JSON.stringify(file)}).size }));
    })().catch((err) => { console.error(err); process.exitCode = 1; });
    `,
    { killAfterMs: 120000 },
  );
  assert.equal(restored.code, 0, restored.stderr);
  const { growthMiB, bytes } = JSON.parse(restored.stdout);
  assert.ok(bytes >= 64 << 20, `the database is ${bytes} bytes`);
  assert.ok(growthMiB < bytes / (1 << 20) / 2, `peak memory grew by ${growthMiB.toFixed(1)} MiB restoring ${(bytes / (1 << 20)).toFixed(0)} MiB`);
});
