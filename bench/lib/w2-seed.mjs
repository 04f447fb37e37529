// The W2 table that classic (W2), server (W3) and runtimes share: 10,000
// rows of (nul, integer, real, text, blob) in `t`, an empty `w` of the
// same shape for inserts, built with better-sqlite3 in WAL mode and
// checkpointed into the file, so each round starts from a copy of it.

import { createRequire } from 'node:module';
import path from 'node:path';

import { BENCH } from './paths.mjs';
import { percentile, sorted } from './stats.mjs';

export const W2_ROWS = 10_000;

/** W3's `/read`: about a millisecond of SQLite's CPU, a LIKE over every row's text. */
export const W3_READ = 'SELECT count(*) AS n, sum(length(text)) AS bytes FROM t WHERE text LIKE ?';

/**
 * Writes the table to `file`. With `timeRead`, also times W3's read on it
 * (300 runs, the first 100 as warm-up) and returns its median in ms.
 */
export function buildW2Seed(file, { timeRead = false } = {}) {
  const Database = createRequire(path.join(BENCH, 'package.json'))('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE t(nul, integer INTEGER, real REAL, text TEXT, blob BLOB);
    CREATE TABLE w(nul, integer INTEGER, real REAL, text TEXT, blob BLOB);
  `);
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < W2_ROWS; i++) {
      insert.run(null, (i * 1000003) % 2147483647, i * 0.3333, `The quick brown fox jumps over the lazy dog ${i}`, Buffer.alloc(16, i & 0xff));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  let readMs = null;
  if (timeRead) {
    const read = db.prepare(W3_READ);
    const times = [];
    for (let i = 0; i < 300; i++) {
      const t0 = process.hrtime.bigint();
      read.get(`%dog ${i % 10}%`);
      if (i >= 100) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    readMs = percentile(sorted(times), 0.5);
  }
  db.close();
  return readMs;
}
