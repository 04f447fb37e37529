// The headline promise, checked at the system-call level: while the W1
// workload of bench/ runs (20,000 inserts of 2 KiB, back to back and in
// bursts of 200 with 150 ms pauses), the JavaScript thread never syncs,
// reads, writes, opens, locks or truncates the database, its WAL or its
// shared-memory file; and with replication on, it never touches the WAL,
// the replicator's own folder or the replica either: the replicator pool's
// threads do. Nor does it for a follower of that replica under load (polling,
// fetching and applying run on the follower's thread and the writer's). `strace -f -y` prints the thread id on each line and
// the path behind each file descriptor; the JS thread's id is the process id.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { ROOT, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('syscalls');
after(() => tmp.cleanup());

const SYNCS = ['fsync', 'fdatasync', 'msync', 'sync_file_range'];
const FILE_IO = ['pread64', 'pwrite64', 'read', 'write', 'openat', 'ftruncate', 'fcntl', 'flock', 'close'];

const WORKLOAD = `
const { Database } = require(${JSON.stringify(path.join(ROOT, 'index.js'))});
const [dir] = process.argv.slice(2);
const blob = new Uint8Array(2048).fill(7);
async function run(name, pattern, count = 20000, replica = undefined) {
  const db = await Database.open(dir + '/' + name + '.db', { journalSizeLimit: 4 * 1024 * 1024, replica });
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
  const insert = db.prepare('INSERT INTO t(b) VALUES (?)');
  for (let i = 0; i < count; i++) {
    await insert.run(blob);
    if (pattern === 'bursts' && i % 200 === 199) await new Promise((r) => setTimeout(r, 150));
  }
  const { n } = await db.prepare('SELECT count(*) AS n FROM t').get();
  const txid = replica ? (await db.syncReplica()).txid : 0;
  const stats = db.stats().checkpoint;
  await db.close();
  return { n, runs: stats.runs, txid };
}
async function follow(count) {
  const url = 'file://' + dir + '/followed';
  const primary = await Database.open(dir + '/primary.db', { replica: { url, syncInterval: 50 } });
  await primary.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
  await primary.syncReplica();
  const follower = await Database.open(dir + '/follower.db', { follow: { url, pollInterval: 20 } });
  const insert = primary.prepare('INSERT INTO t(b) VALUES (?)');
  const read = follower.prepare('SELECT count(*) AS n FROM t');
  for (let i = 0; i < count; i++) {
    await insert.run(blob);
    if (i % 50 === 0) await Promise.all([read.get(), read.get()]);
  }
  const { txid } = await primary.syncReplica();
  await follower.catchUp({ txid });
  const { n } = await read.get();
  await follower.close();
  await primary.close();
  return { n, txid };
}
(async () => {
  const constant = await run('constant', 'constant');
  const bursts = await run('bursts', 'bursts');
  const replicated = await run('replicated', 'constant', 5000, { url: 'file://' + dir + '/replica', syncInterval: 100 });
  const followed = await follow(3000);
  console.log(JSON.stringify({ pid: process.pid, constant, bursts, replicated, followed }));
})();
`;

function strace() {
  const probe = spawnSync('strace', ['-V']);
  assert.equal(
    probe.error,
    undefined,
    'strace is needed for this test (.ci/run installs it; locally: apt-get install strace)',
  );
}

test('under the W1 workload, with replication on and with a follower under load, the JS thread makes no sync and no database, WAL or replica file I/O; offloop threads do', async () => {
  strace();
  const script = path.join(tmp.dir, 'workload.cjs');
  const trace = path.join(tmp.dir, 'trace.txt');
  fs.writeFileSync(script, WORKLOAD);
  const args = [
    '-f',
    '-qq',
    '-y',
    '--seccomp-bpf',
    '-o',
    trace,
    '-e',
    `trace=${[...SYNCS, ...FILE_IO].join(',')}`,
    process.execPath,
    script,
    tmp.dir,
  ];
  const { code, stdout, stderr } = await new Promise((resolve, reject) => {
    const child = spawn('strace', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
  });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout.trim().split('\n').pop());
  assert.equal(result.constant.n, 20000);
  assert.equal(result.bursts.n, 20000);
  assert.ok(result.constant.runs > 0 && result.bursts.runs > 0, 'the checkpointer ran');
  assert.equal(result.replicated.n, 5000);
  assert.ok(result.replicated.txid > 0, 'the replica holds the commits');
  assert.equal(result.followed.n, 3000, 'the follower caught up');

  const jsThread = String(result.pid);
  const dir = tmp.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const dbFile = new RegExp(
    `${dir}/((constant|bursts|replicated|primary|follower)\\.db(-wal|-shm|-journal|-replica|-follow)?\\b|replica/|followed/)`,
  );
  const replicaFile = new RegExp(`${dir}/(replicated\\.db-replica|replica)/`);
  const followerFile = new RegExp(`${dir}/follower\\.db(-wal|-follow)?\\b`);
  const onJsThread = { syncs: [], fileIo: [] };
  const elsewhere = { syncs: 0, dbWrites: 0, replicaWrites: 0, followerWrites: 0 };
  for (const line of fs.readFileSync(trace, 'utf8').split('\n')) {
    const match = /^(\d+)\s+(\w+)\(/.exec(line);
    if (!match) continue;
    const [, tid, call] = match;
    const isSync = SYNCS.includes(call);
    const touchesDb = dbFile.test(line);
    if (tid === jsThread) {
      if (isSync) onJsThread.syncs.push(line);
      else if (touchesDb) onJsThread.fileIo.push(line);
    } else {
      if (isSync) elsewhere.syncs += 1;
      if (call === 'pwrite64' && touchesDb) elsewhere.dbWrites += 1;
      if ((call === 'pwrite64' || call === 'write') && replicaFile.test(line)) elsewhere.replicaWrites += 1;
      if ((call === 'pwrite64' || call === 'write') && followerFile.test(line)) elsewhere.followerWrites += 1;
    }
  }
  assert.deepEqual(onJsThread.syncs, [], 'syncs on the JS thread');
  assert.deepEqual(onJsThread.fileIo.slice(0, 10), [], 'database file I/O on the JS thread');
  // Not vacuous: the work did happen, on offloop's threads.
  assert.ok(elsewhere.syncs > 10, `${elsewhere.syncs} syncs on offloop threads`);
  assert.ok(elsewhere.dbWrites > 40000, `${elsewhere.dbWrites} database writes on offloop threads`);
  assert.ok(elsewhere.replicaWrites > 0, `${elsewhere.replicaWrites} replica writes on offloop threads`);
  assert.ok(elsewhere.followerWrites > 0, `${elsewhere.followerWrites} follower writes on offloop threads`);
});
