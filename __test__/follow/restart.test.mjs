// A follower killed with SIGKILL in the middle of a large catch-up reopens
// and carries on from what it applied, recorded beside the database: its
// content then equals the primary's, table by table, with an intact file.
// Reopened with nothing killed, it carries on without a restore.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Database, tables, tempDir } from '../replication/helpers.mjs';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'follower-child.mjs');

/** Runs the child until it printed `lines` applied TXIDs, then SIGKILLs it. */
function killAfter(file, url, lines) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, file, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let seen = [];
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      seen = out.split('\n').filter(Boolean).map(Number);
      if (seen.length >= lines) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(seen);
      else reject(new Error(`the follower exited on its own (${code})`));
    });
  });
}

test('a follower killed with SIGKILL mid catch-up reopens and ends equal to the primary', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), {
    replica: { url, syncInterval: 10_000, compactionIntervals: [] },
  });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)');
  await primary.syncReplica();
  const file = path.join(dir, 'follower.db');
  const first = await Database.open(file, { follow: { url } });
  const start = first.stats().follow.txid;
  await first.close();
  // A large backlog: 120 TXIDs, each rewriting a few hundred pages.
  const insert = primary.prepare('INSERT OR REPLACE INTO t(id, v) VALUES (?, randomblob(3000))');
  for (let round = 0; round < 120; round++) {
    await primary.batch(Array.from({ length: 100 }, (_, i) => [insert, [(round * 37 + i) % 600]]));
    if (round % 40 === 39) await primary.exec('DELETE FROM t WHERE id % 5 = 0');
    await primary.syncReplica();
  }
  const { txid } = await primary.syncReplica();
  assert.ok(txid > start + 100);
  const applied = await killAfter(file, url, 30);
  assert.ok(applied.length >= 30 && applied.at(-1) < txid, `killed at ${applied.at(-1)} of ${txid}`);
  const follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  try {
    await follower.catchUp({ txid, timeout: 60_000 });
    assert.equal((await follower.prepare('PRAGMA integrity_check').get()).integrity_check, 'ok');
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});

test('a follower closed and reopened carries on from its TXID without a restore', async () => {
  const dir = tempDir();
  const url = pathToFileURL(path.join(dir, 'replica')).href;
  const primary = await Database.open(path.join(dir, 'primary.db'), { replica: { url, syncInterval: 50 } });
  await primary.exec('CREATE TABLE t(x)');
  await primary.syncReplica();
  const file = path.join(dir, 'follower.db');
  let follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  const before = follower.stats().follow.txid;
  await follower.close();
  await primary.exec('INSERT INTO t VALUES (1)');
  const { txid } = await primary.syncReplica();
  follower = await Database.open(file, { follow: { url, pollInterval: 20 } });
  const seen = [];
  follower.on('applied', (e) => seen.push(e.txid));
  try {
    await follower.catchUp({ txid, timeout: 20_000 });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(seen.length > 0 && seen.every((t) => t > before), `applied ${seen} after ${before}`);
    assert.equal(seen.at(-1), txid);
    assert.deepEqual(await tables(follower), await tables(primary));
  } finally {
    await follower.close();
    await primary.close();
  }
});
