// Memory (issue 13): resident memory stays bounded over a million
// statements, and databases, statements and iterators dropped without
// close() give back their threads, file descriptors and memory. Each runs
// in a child process of its own, so its RSS is its own; the figures are
// printed (docs/reliability.md quotes them).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { runChild, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('memory');
after(() => tmp.cleanup());

const MiB = 1024 * 1024;

// Shared by the children: RSS, threads and descriptors of the process.
const PROBES = `
const fs = require('node:fs');
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const threads = () => fs.readdirSync('/proc/self/task').length;
const fds = () => fs.readdirSync('/proc/self/fd').length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function settle() {
  for (let i = 0; i < 20; i++) { global.gc(); await sleep(5); }
}
`;

test('RSS stays bounded over a million statements (batches, single calls, iterators)', { timeout: 170000 }, async (t) => {
  const child = await runChild(
    tmp.dir,
    `${PROBES}
    const { Database } = require(OFFLOOP);
    (async () => {
      const db = await Database.open(${JSON.stringify(tmp.file())}, { readers: 2 });
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB)');
      const insert = db.prepare('INSERT INTO t(v, b) VALUES (?, ?)');
      const get = db.prepare('SELECT v, b FROM t WHERE id = ?');
      const page = db.prepare('SELECT id, v FROM t WHERE id > ? ORDER BY id LIMIT 300');
      const blob = new Uint8Array(64).fill(5);
      let statements = 0;
      const samples = [];
      const round = async (r) => {
        // 900 inserts in one batch, 90 single reads in flight at once, and
        // one iterator over 300 rows: about 1,000 statements and 1,300 rows.
        await db.batch(Array.from({ length: 900 }, (_, i) => [insert, ['v' + r + '-' + i, blob]]));
        const reads = [];
        for (let i = 0; i < 90; i++) reads.push(get.get(1 + ((r * 97 + i * 13) % (900 * (r + 1)))));
        for (const row of await Promise.all(reads)) if (row.b.length !== 64) throw new Error('bad row');
        let n = 0;
        for await (const row of page.iterate(r * 300)) n += row.v.length > 0 ? 1 : 0;
        if (n !== 300) throw new Error('bad page ' + n);
        statements += 991;
      };
      let r = 0;
      while (statements < 100_000) await round(r++);
      await settle();
      const warm = rss();
      let peak = warm;
      while (statements < 1_000_000) {
        await round(r++);
        if (r % 50 === 0) {
          peak = Math.max(peak, rss());
          samples.push(rss());
        }
      }
      await settle();
      const end = rss();
      await db.close();
      console.log(JSON.stringify({ statements, warm, peak, end, samples }));
    })();
    `,
    { args: ['--expose-gc'], killAfterMs: 160000 },
  );
  assert.equal(child.signal, null, 'the child hung');
  assert.equal(child.code, 0, child.stderr);
  const { statements, warm, peak, end, samples } = JSON.parse(child.stdout);
  const half = Math.floor(samples.length / 2);
  const firstHalf = Math.max(...samples.slice(0, half));
  const secondHalf = Math.max(...samples.slice(half));
  t.diagnostic(
    `${statements} statements: RSS ${(warm / MiB).toFixed(1)} MiB after the first 100,000, ` +
      `peak ${(peak / MiB).toFixed(1)} MiB (first half ${(firstHalf / MiB).toFixed(1)}, second half ` +
      `${(secondHalf / MiB).toFixed(1)}), ${(end / MiB).toFixed(1)} MiB at the end`,
  );
  assert.ok(statements >= 1_000_000);
  // Every cache is bounded (statements, SQL texts, pages, column names):
  // after the warm-up, 900,000 more statements may not grow RSS by more
  // than the allocator's slack.
  assert.ok(peak - warm < 48 * MiB, `RSS grew by ${((peak - warm) / MiB).toFixed(1)} MiB`);
  // And it levels off: the second half of the run adds (next to) nothing.
  assert.ok(
    secondHalf - firstHalf < 16 * MiB,
    `RSS still climbing: ${(firstHalf / MiB).toFixed(1)} then ${(secondHalf / MiB).toFixed(1)} MiB`,
  );
});

test('databases, statements and iterators dropped without close() release their threads, descriptors and memory', { timeout: 170000 }, async (t) => {
  const file = tmp.file();
  const child = await runChild(
    tmp.dir,
    `${PROBES}
    const { Database } = require(OFFLOOP);
    (async () => {
      const seed = await Database.open(${JSON.stringify(file)}, { readers: 2 });
      await seed.exec("CREATE TABLE t(x); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) INSERT INTO t SELECT x FROM c");
      await seed.close();
      // One open, use and drop first, so what Node starts lazily exists.
      const use = async (i) => {
        const db = await Database.open(${JSON.stringify(file)}, { readers: 2 });
        await db.prepare('SELECT count(*) AS n FROM t').get();
        await db.prepare('SELECT count(*) AS n FROM t WHERE x > ?').get(i);
        // Statements of texts never seen again, and an iterator left half-read.
        for (let k = 0; k < 20; k++) await db.prepare('SELECT x, ' + (i * 20 + k) + ' AS k FROM t LIMIT 1').get();
        const it = db.prepare('SELECT x FROM t').iterate();
        await it.next();
      };
      await use(0);
      await settle();
      const base = { rss: rss(), threads: threads(), fds: fds() };
      let peakThreads = 0;
      for (let i = 1; i <= 100; i++) {
        await use(i);
        if (i % 20 === 0) {
          peakThreads = Math.max(peakThreads, threads());
          await settle();
        }
      }
      for (let i = 0; i < 200 && (threads() > base.threads || fds() > base.fds); i++) await settle();
      const end = { rss: rss(), threads: threads(), fds: fds() };
      // A second hundred: what the first left behind (the allocator's
      // free memory of threads that ended) is reused, not added to.
      for (let i = 101; i <= 200; i++) {
        await use(i);
        if (i % 20 === 0) await settle();
      }
      for (let i = 0; i < 200 && threads() > base.threads; i++) await settle();
      const secondHundred = rss() - end.rss;

      // One database, 20,000 statements of distinct texts dropped (ten
      // times what its caches hold), and 300 iterators abandoned half-read,
      // each closed by the garbage collector: nothing may pin a reader.
      const db = await Database.open(${JSON.stringify(file)}, { readers: 2 });
      await settle();
      const before = rss();
      for (let i = 0; i < 20_000; i += 100) {
        const calls = [];
        for (let k = i; k < i + 100; k++) calls.push(db.prepare('SELECT ' + k + ' AS v, x FROM t LIMIT 1').get());
        (await Promise.all(calls)).forEach((row, k) => { if (row.v !== i + k) throw new Error('bad value'); });
      }
      const abandon = async () => { await db.prepare('SELECT x FROM t').iterate().next(); };
      for (let i = 0; i < 300; i++) {
        await abandon();
        global.gc();
        await new Promise(setImmediate);
      }
      await settle();
      const count = await db.prepare('SELECT count(*) AS n FROM t').get();
      const statementsGrowth = rss() - before;
      await db.close();
      console.log(JSON.stringify({ base, end, secondHundred, peakThreads, statementsGrowth, n: count.n }));
    })();
    `,
    { args: ['--expose-gc'], killAfterMs: 160000 },
  );
  assert.equal(child.signal, null, 'the child hung');
  assert.equal(child.code, 0, child.stderr);
  const { base, end, secondHundred, peakThreads, statementsGrowth, n } = JSON.parse(child.stdout);
  t.diagnostic(
    `100 databases dropped: threads ${base.threads} → ${end.threads} (peak ${peakThreads}), ` +
      `descriptors ${base.fds} → ${end.fds}, RSS ${(base.rss / MiB).toFixed(1)} → ${(end.rss / MiB).toFixed(1)} MiB, ` +
      `${secondHundred >= 0 ? '+' : ''}${(secondHundred / MiB).toFixed(1)} MiB after 100 more; ` +
      `20,000 statements and 300 iterators dropped: RSS +${(statementsGrowth / MiB).toFixed(1)} MiB`,
  );
  assert.equal(end.threads, base.threads, 'threads left behind');
  assert.equal(end.fds, base.fds, 'file descriptors left behind');
  assert.ok(peakThreads > base.threads, 'the databases did start threads');
  assert.ok(end.rss - base.rss < 48 * MiB, `RSS grew by ${((end.rss - base.rss) / MiB).toFixed(1)} MiB`);
  assert.ok(secondHundred < 16 * MiB, `RSS grew by ${(secondHundred / MiB).toFixed(1)} MiB more with the second hundred`);
  assert.ok(statementsGrowth < 48 * MiB, `RSS grew by ${(statementsGrowth / MiB).toFixed(1)} MiB`);
  assert.equal(n, 5000);
});
