// Faults no other test covers (issue 13): a full disk (a real size-limited
// tmpfs when this process may mount one, and the fault-injecting VFS
// always), read, write and sync errors, and database threads that die.
// Each fault must reject the calls it hits with SQLite's code, hang
// nothing, and leave a consistent database that works again once the fault
// clears, with every acknowledged write in it.

import { IO, faultyUri, ioInjected, panicIn, setIo } from './fault-injection.mjs';

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, runChild, tempDir, until } from '../engine-helpers.mjs';

const tmp = tempDir('faults');
const mountPoint = path.join(tmp.dir, 'tmpfs');
let mounted = false;
after(() => {
  setIo(0);
  if (mounted) unmount(mountPoint);
  tmp.cleanup();
});

const KiB = 1024;
const MiB = 1024 * KiB;

async function integrity(db) {
  return (await db.prepare('PRAGMA integrity_check').get()).integrity_check;
}

async function ids(db) {
  return (await db.prepare('SELECT id FROM t ORDER BY id').all()).map((r) => r.id);
}

function offloopThreads() {
  let n = 0;
  for (const task of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${task}/comm`, 'utf8').startsWith('offloop-')) n += 1;
    } catch {
      // The thread ended while we looked.
    }
  }
  return n;
}

// ---------------------------------------------------------------------------
// Full disk

/**
 * Writes 4 KiB rows one at a time until one fails, and returns the ids of
 * those acknowledged and the error. Bounded: a disk that never fills fails
 * the test instead of looping.
 */
async function fillUntilFull(db, firstId) {
  const insert = db.prepare('INSERT INTO t(id, b) VALUES (?, ?)');
  const blob = new Uint8Array(4 * KiB).fill(7);
  const acked = [];
  for (let id = firstId; id < firstId + 5000; id++) {
    try {
      await insert.run(BigInt(id), blob);
      acked.push(id);
    } catch (err) {
      return { acked, error: err };
    }
  }
  throw new Error('the disk never filled');
}

/** The full-disk scenario on `location`; `fill()` and `free()` make and clear the fault. */
async function fullDiskScenario(location, { fill, free }) {
  const db = await Database.open(location, {
    readers: 2,
    checkpoint: { thresholdFrames: 50, idleMs: 20 },
  });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const seed = [];
    const insert = db.prepare('INSERT INTO t(id, b) VALUES (?, ?)');
    for (let id = 1; id <= 20; id++) {
      await insert.run(BigInt(id), new Uint8Array(4 * KiB));
      seed.push(id);
    }
    fill();
    const { acked, error } = await fillUntilFull(db, 21);
    assert.equal(error.code, 'ERR_SQLITE_ERROR', String(error));
    assert.equal(error.sqliteCode, 'SQLITE_FULL');
    assert.equal(error.errcode, 13);
    // Consistent while full: every acknowledged write is there, and only those.
    assert.equal(await integrity(db), 'ok');
    assert.deepEqual(await ids(db), [...seed, ...acked]);
    // A second write while full fails the same way, and nothing hangs.
    await assert.rejects(insert.run(999999n, new Uint8Array(64 * KiB)), { sqliteCode: 'SQLITE_FULL' });

    free();
    const more = [];
    // Few enough that the WAL fits the 4 MiB file system even if the
    // checkpointer falls behind (a loaded machine).
    for (let id = 100000; id < 100100; id++) {
      await insert.run(BigInt(id), new Uint8Array(4 * KiB).fill(1));
      more.push(id);
    }
    // The checkpointer lived through it and the WAL empties again.
    const c = await db.checkpoint('TRUNCATE');
    assert.deepEqual(c, { logFrames: 0, checkpointedFrames: 0 });
    assert.equal(db.stats().checkpoint.active, true, db.stats().checkpoint.error ?? '');
    assert.equal(await integrity(db), 'ok');
    assert.deepEqual(await ids(db), [...seed, ...acked, ...more]);
    return [...seed, ...acked, ...more];
  } finally {
    await db.close();
  }
}

/** Mounts a tmpfs of `size` at `dir`; false when this process may not. */
function mountTmpfs(dir, size) {
  if (process.getuid?.() !== 0) return false;
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { timeout: 10000 });
  return r.status === 0;
}

function unmount(dir) {
  const r = spawnSync('umount', [dir], { timeout: 10000 });
  if (r.status !== 0) spawnSync('umount', ['-l', dir], { timeout: 10000 });
}

mounted = mountTmpfs(mountPoint, '4m');

test(
  'a full file system (a 4 MiB tmpfs): the write rejects with SQLITE_FULL, the database stays consistent, and writes, the checkpointer and the WAL recover once space is freed',
  { skip: mounted ? false : 'this process may not mount a tmpfs; the fault-injecting VFS test below covers it' },
  async () => {
    const file = path.join(mountPoint, 'full.db');
    const ballast = path.join(mountPoint, 'ballast');
    const written = await fullDiskScenario(file, {
      fill() {
        // Everything but the last 256 KiB.
        const free = fs.statfsSync(mountPoint);
        const room = Number(free.bavail) * Number(free.bsize) - 256 * KiB;
        fs.writeFileSync(ballast, Buffer.alloc(Math.max(0, room)));
      },
      free() {
        fs.rmSync(ballast);
      },
    });
    const again = await Database.open(file);
    assert.equal(await integrity(again), 'ok');
    assert.deepEqual(await ids(again), written);
    await again.close();
  },
);

test('a full disk through the fault-injecting VFS: SQLITE_FULL, a consistent database, and recovery once it clears', async () => {
  const file = tmp.file('vfs-full');
  const written = await fullDiskScenario(faultyUri(file), {
    fill: () => setIo(IO.full | IO.allFiles),
    free: () => setIo(0),
  });
  const again = await Database.open(file);
  assert.equal(await integrity(again), 'ok');
  assert.deepEqual(await ids(again), written);
  await again.close();
});

// ---------------------------------------------------------------------------
// I/O errors

test('failed writes, syncs and reads reject the calls they hit with SQLITE_IOERR_*, hang nothing, and leave a consistent database', async () => {
  const file = tmp.file('ioerr');
  // One reader, so the statements below are prepared (and the schema read)
  // on it before the read fault: a fault while SQLite loads the schema
  // surfaces as SQLite's own "no such table", which says nothing of I/O.
  const db = await Database.open(faultyUri(file), { readers: 1, synchronous: 'full', cacheSize: 8 });
  const acked = [];
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const insert = db.prepare('INSERT INTO t(id, b) VALUES (?, ?)');
    const blob = new Uint8Array(2 * KiB).fill(3);
    let next = 1;
    const write = async () => {
      const id = next++;
      await insert.run(id, blob);
      acked.push(id);
    };
    for (let i = 0; i < 200; i++) await write();
    const count = db.prepare('SELECT count(*) AS n FROM t');
    const sum = db.prepare('SELECT sum(length(b)) AS s FROM t');
    const snapshotSum = (r) => r.prepare('SELECT sum(length(b)) AS s FROM t').get();
    for (let i = 0; i < 2; i++) {
      await count.get();
      await sum.get();
      await db.read(snapshotSum);
    }
    const before = ioInjected();

    const cases = [
      ['a write to the WAL', IO.write | IO.wal, 'SQLITE_IOERR_WRITE'],
      ['a sync of the WAL', IO.sync | IO.wal, 'SQLITE_IOERR_FSYNC'],
    ];
    for (const [what, mask, code] of cases) {
      setIo(mask);
      // Many calls at once, of every kind that writes: each one settles.
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 20 }, () => write()),
        db.transaction(async (tx) => {
          await tx.prepare('INSERT INTO t(id, b) VALUES (?, ?)').run(next++, blob);
        }),
        db.batch([[insert, [next++, blob]], [insert, [next++, blob]]]),
        db.exec(`INSERT INTO t(id, b) VALUES (${next++}, x'00')`),
      ]);
      setIo(0);
      for (const o of outcomes) {
        assert.equal(o.status, 'rejected', what);
        assert.equal(o.reason.code, 'ERR_SQLITE_ERROR', `${what}: ${o.reason}`);
        assert.equal(o.reason.sqliteCode, code, `${what}: ${o.reason.message}`);
      }
      // Cleared: writes work again.
      await write();
    }

    // Reads: another write first, so the readers' caches are stale and
    // every page comes from the files.
    await write();
    setIo(IO.read | IO.allFiles);
    const reads = await Promise.allSettled([...Array.from({ length: 10 }, () => sum.get()), db.read(snapshotSum)]);
    setIo(0);
    for (const o of reads) {
      assert.equal(o.status, 'rejected');
      assert.match(o.reason.sqliteCode, /^SQLITE_IOERR/, String(o.reason));
    }

    // A checkpoint whose sync of the database file fails.
    await write();
    setIo(IO.sync | IO.mainDb);
    await assert.rejects(db.checkpoint('TRUNCATE'), { sqliteCode: 'SQLITE_IOERR_FSYNC' });
    setIo(0);
    assert.ok(ioInjected() > before);

    // Everything works again, and the database is exactly what was acknowledged.
    for (let i = 0; i < 50; i++) await write();
    assert.deepEqual(await db.checkpoint('TRUNCATE'), { logFrames: 0, checkpointedFrames: 0 });
    assert.equal(db.stats().checkpoint.active, true);
    assert.equal(await integrity(db), 'ok');
    assert.deepEqual(await ids(db), acked);
    assert.equal((await sum.get()).s, acked.length * 2 * KiB);
  } finally {
    setIo(0);
    await db.close();
  }
  const again = await Database.open(file);
  assert.equal(await integrity(again), 'ok');
  assert.deepEqual(await ids(again), acked);
  await again.close();
});

// ---------------------------------------------------------------------------
// Dead threads

test('a reader that dies is replaced: the call it held rejects with ERR_OFFLOOP_INTERNAL, and every read after it succeeds', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)');
    const sum = db.prepare('SELECT sum(x) AS s FROM t');
    await sum.get(); // learns its route: the reader runs it from now on
    assert.equal((await sum.get()).s, 6);
    const executed = db.stats().readers[0].executed;
    panicIn('reader');
    await assert.rejects(sum.get(), (err) => {
      assert.equal(err.code, 'ERR_OFFLOOP_INTERNAL');
      assert.match(err.message, /thread running this call died/);
      return true;
    });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? sum.get() : db.read((r) => r.prepare('SELECT sum(x) AS s FROM t').get()))));
    for (const r of results) assert.equal(r.s, 6);
    assert.ok(db.stats().readers[0].executed > executed + 100, 'the one reader ran them');
    await db.prepare('INSERT INTO t VALUES (4)').run();
    assert.equal((await sum.get()).s, 10);
  } finally {
    await db.close();
  }
});

test('an iterator whose reader dies rejects its next chunk; a new iterator reads every row', async () => {
  const db = await Database.open(tmp.file(), { readers: 1 });
  try {
    await db.exec('CREATE TABLE t(x); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) INSERT INTO t SELECT x FROM c');
    const all = db.prepare('SELECT x FROM t ORDER BY x');
    await all.get(); // learns its route
    const it = all.iterate();
    assert.equal((await it.next()).value.x, 1);
    // The reader holds the cursor; the next chunk it is asked for kills it.
    panicIn('reader');
    let seen = 1;
    await assert.rejects(
      (async () => {
        for (let r = await it.next(); !r.done; r = await it.next()) seen += 1;
      })(),
      (err) => {
        assert.equal(err.code, 'ERR_OFFLOOP_INTERNAL', String(err));
        return true;
      },
    );
    assert.ok(seen < 3000, `${seen} rows before the error`);
    let n = 0;
    for await (const row of all.iterate()) {
      n += 1;
      assert.equal(row.x, n);
    }
    assert.equal(n, 3000);
  } finally {
    await db.close();
  }
});

test('without OFFLOOP_FAULT_INJECTION=1 at load, fault injection is off: no VFS, and every control throws', async () => {
  const child = await runChild(
    tmp.dir,
    `
    const { Database } = require(OFFLOOP);
    const native = require(require('node:path').join(require('node:path').dirname(OFFLOOP), 'native.js'));
    process.env.OFFLOOP_FAULT_INJECTION = '1'; // too late: read once, at load
    const out = { on: native.faultInjection() };
    for (const [name, f] of [['panic', () => native.faultPanic('writer', 1)], ['io', () => native.faultIo(1)], ['injected', () => native.faultIoInjected()]]) {
      try { f(); out[name] = 'allowed'; } catch (err) { out[name] = err.message; }
    }
    Database.open(${JSON.stringify(`file:${tmp.file('novfs')}?vfs=offloop-faults`)}).then(
      () => out.vfs = 'opened',
      (err) => out.vfs = err.message,
    ).then(() => console.log(JSON.stringify(out)));
    `,
    { env: { OFFLOOP_FAULT_INJECTION: '' } },
  );
  assert.equal(child.code, 0, child.stderr);
  const refused = 'fault injection is off (it is for offloop\'s own tests)';
  assert.deepEqual(JSON.parse(child.stdout), {
    on: false,
    panic: refused,
    io: refused,
    injected: refused,
    vfs: 'no such vfs: offloop-faults',
  });
});

test('a checkpointer that dies hands checkpoints back to the writer: the WAL stays bounded and db.checkpoint() works', async () => {
  const file = tmp.file();
  const db = await Database.open(file, { readers: 1 });
  try {
    await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const insert = db.prepare('INSERT INTO t(b) VALUES (?)');
    panicIn('checkpointer');
    // The checkpointer panics on the next nudge it hears; below the
    // threshold a commit nudges it only if none did in the last idleMs / 4,
    // so commit until one does.
    let rows = 0;
    while (db.stats().checkpoint.active) {
      assert.ok(rows < 20000, 'the checkpointer never stopped');
      await insert.run(new Uint8Array(100));
      rows++;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.match(db.stats().checkpoint.error, /panicked/);
    const blob = new Uint8Array(4 * KiB);
    let largest = 0;
    for (let i = 0; i < 3000; i++) {
      await insert.run(blob);
      if (i % 100 === 0) largest = Math.max(largest, fs.statSync(`${file}-wal`).size);
    }
    // Never checkpointed, 3,000 rows of 4 KiB would make a WAL over 12 MB;
    // SQLite's own automatic checkpoint (1,000 frames) keeps it near 4 MB.
    assert.ok(largest < 8 * MiB, `WAL reached ${largest} bytes`);
    assert.deepEqual(await db.checkpoint('TRUNCATE'), { logFrames: 0, checkpointedFrames: 0 });
    assert.equal((await db.prepare('SELECT count(*) AS n FROM t').get()).n, rows + 3000);
  } finally {
    await db.close();
  }
});

test('a writer that dies fails the database closed: every pending and later call rejects with a clear error, close() resolves, no thread is left', async () => {
  const threadsBefore = offloopThreads();
  const file = tmp.file();
  const db = await Database.open(file, { readers: 2 });
  await db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  const read = db.prepare('SELECT count(*) AS n FROM t');
  await read.get();
  await read.get();

  panicIn('writer');
  // All made at once: the first one the writer takes kills it.
  const pending = [
    ...Array.from({ length: 20 }, (_, i) => insert.run(i)),
    db.exec('INSERT INTO t VALUES (100)'),
    db.batch([[insert, [101]]]),
    db.transaction((tx) => tx.prepare('INSERT INTO t VALUES (102)').run()),
  ];
  const reads = Promise.allSettled(Array.from({ length: 20 }, () => read.get()));
  const settled = await Promise.allSettled(pending);
  for (const s of settled) {
    assert.equal(s.status, 'rejected');
    assert.equal(s.reason.code, 'ERR_OFFLOOP_INTERNAL', String(s.reason));
    assert.match(s.reason.message, /thread running this call died|writer thread died/);
  }
  // Reads already queued ran, or were refused.
  for (const s of await reads) {
    if (s.status === 'fulfilled') assert.equal(s.value.n, 1);
    else assert.equal(s.reason.code, 'ERR_OFFLOOP_INTERNAL');
  }

  const writerDied = (err) => {
    assert.equal(err.code, 'ERR_OFFLOOP_INTERNAL', String(err));
    assert.match(err.message, /the writer thread died .*close\(\) it and open it again/);
    return true;
  };
  await assert.rejects(insert.run(7), writerDied);
  await assert.rejects(read.get(), writerDied);
  await assert.rejects(db.read((r) => r.prepare('SELECT 1 AS one').get()), writerDied);
  await assert.rejects(db.transaction((tx) => tx.prepare('SELECT 1').get()), writerDied);
  await assert.rejects(db.exec('SELECT 1'), writerDied);
  await assert.rejects(db.settings(), writerDied);
  await db.close();
  await until(() => offloopThreads() <= threadsBefore, 'the threads to end');

  // Nothing after the death was committed.
  const again = await Database.open(file);
  assert.equal(await integrity(again), 'ok');
  assert.equal((await again.prepare('SELECT count(*) AS n FROM t').get()).n, 1);
  await again.close();
});
