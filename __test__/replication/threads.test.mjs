// The threads replication costs the process: every replica store shares
// one I/O runtime, every database's replication runs on one replicator
// pool, and the databases replicating into one folder share one lease
// thread, so replicating many databases adds no replication thread per
// database; every database's commits still reach its replica; and once
// every database is closed, no replication thread is left. Threads are read
// by name from /proc/self/task (Linux).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Database, inspect, tempDir, waitFor } from './helpers.mjs';

const skip = process.platform === 'linux' ? false : 'reads /proc/self/task';
// Databases replicating at once: many more than the pool's threads.
const DATABASES = 100;
// The shared runtime's threads at most: 2 workers and 8 for a folder's
// blocking file operations (crates/replica/src/store/io_runtime.rs).
const RUNTIME_THREADS = 10;
// The replicator pool's threads at most on any machine: 4 workers, 4
// started past them when all are held by slow stores, and the timer
// (crates/replica/src/pool.rs).
const POOL_THREADS = 9;

/** Threads of this process whose name starts with `prefix`. */
function threadsNamed(prefix) {
  let n = 0;
  for (const id of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${id}/comm`, 'utf8').startsWith(prefix)) n++;
    } catch {
      // The thread ended while being read.
    }
  }
  return n;
}

test('a hundred replicating databases share one pool of threads, each reaches its replica, and closing them all leaves no replication thread', { skip }, async () => {
  const dir = tempDir();
  // `offloop-replicator`, `offloop-replicator-timer` and
  // `offloop-replica-io` all read `offloop-replica` there: names are cut
  // to 15 bytes.
  const before = threadsNamed('offloop-replica');
  let most = 0;
  const count = () => {
    most = Math.max(most, threadsNamed('offloop-replica') - before);
  };
  const dbs = [];
  for (let i = 0; i < DATABASES; i++) {
    dbs.push(await Database.open(path.join(dir, `t${i}.db`), { replica: { url: `file://${path.join(dir, `r${i}`)}`, syncInterval: 100 } }));
    count();
  }
  await Promise.all(
    dbs.map(async (db, i) => {
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
      await db.prepare('INSERT INTO t(v) VALUES (?)').run(`tenant ${i}`);
    }),
  );
  // No syncReplica(): each database's own sync round ships its commits.
  await waitFor('every commit in its replica', () => {
    count();
    return dbs.every((db) => {
      const { replica } = db.stats();
      return replica.txid >= 1 && replica.lagMs === 0 && replica.pendingFiles === 0;
    });
  });
  assert.ok(
    most <= POOL_THREADS + RUNTIME_THREADS,
    `${most} replication threads for ${DATABASES} databases: one pool and one runtime (at most ${POOL_THREADS + RUNTIME_THREADS}) expected`,
  );
  assert.equal(threadsNamed('offloop-lease'), 1, 'one lease thread for every database replicating into one folder');

  await Promise.all(dbs.map((db) => db.close()));
  // The stores go with their replication, not when the garbage collector
  // takes the closed databases: the handles are still held here.
  await waitFor('every replication thread to end', () => threadsNamed('offloop-replica') === before, 1000);
  assert.equal(threadsNamed('offloop-lease'), 0);
  assert.equal(dbs.length, DATABASES);

  // What each replica holds is what its database held.
  for (let i = 0; i < DATABASES; i += 9) {
    const restored = path.join(dir, `restored${i}.db`);
    await Database.restore(`file://${path.join(dir, `r${i}`)}`, restored);
    assert.deepEqual((await inspect(restored)).tables, { t: [[1, `tenant ${i}`]] });
  }
});
