// The threads replication costs the process: every replica store shares
// one I/O runtime, so replicating many databases adds one replicator
// thread each, not a runtime each, and one lease thread in all for the
// databases replicating into one folder; and once every
// database is closed, no replication thread is left. Threads are read by
// name from /proc/self/task (Linux).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Database, tempDir, waitFor } from './helpers.mjs';

const skip = process.platform === 'linux' ? false : 'reads /proc/self/task';
// Databases replicating at once: more than the shared runtime's threads.
const DATABASES = 24;
// The shared runtime's threads at most: 2 workers and 8 for a folder's
// blocking file operations (crates/replica/src/store/io_runtime.rs).
const RUNTIME_THREADS = 10;

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

test('replicating databases share one I/O runtime, and closing them all leaves no replication thread', { skip }, async () => {
  const dir = tempDir();
  // `offloop-replicator` and `offloop-replica-io` both read
  // `offloop-replica` there: names are cut to 15 bytes.
  const before = threadsNamed('offloop-replica');
  const dbs = await Promise.all(
    Array.from({ length: DATABASES }, (_, i) =>
      Database.open(path.join(dir, `t${i}.db`), { replica: { url: `file://${path.join(dir, `r${i}`)}` } }),
    ),
  );
  await Promise.all(
    dbs.map(async (db, i) => {
      await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
      await db.prepare('INSERT INTO t(v) VALUES (?)').run(`tenant ${i}`);
      const { txid } = await db.syncReplica();
      assert.ok(txid >= 1, `tenant ${i} reached its replica`);
    }),
  );
  const replicating = threadsNamed('offloop-replica') - before;
  assert.ok(
    replicating <= DATABASES + RUNTIME_THREADS,
    `${replicating} replication threads for ${DATABASES} databases: one replicator each and one shared runtime expected`,
  );
  assert.equal(threadsNamed('offloop-lease'), 1, 'one lease thread for every database replicating into one folder');

  await Promise.all(dbs.map((db) => db.close()));
  // The stores go with their replicator threads, not when the garbage
  // collector takes the closed databases: the handles are still held here.
  await waitFor('every replication thread to end', () => threadsNamed('offloop-replica') === before);
  assert.equal(threadsNamed('offloop-lease'), 0);
  assert.equal(dbs.length, DATABASES);
});
