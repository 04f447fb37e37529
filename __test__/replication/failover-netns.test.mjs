// Failover across hosts: the S3 server (moto) on one network namespace,
// the primary on a second, the writers that take over on a third and a
// fourth. A partitioned primary (every packet dropped) and a paused one
// (SIGSTOP past its lease) are fenced once they come back and never
// acknowledge a write again; a primary killed under `durability: 'replica'`
// with concurrent writers loses no acknowledged write, over several
// rounds; and in every case exactly one writer wrote each TXID (the bucket
// keeps every version of every key: none was written twice), and
// `litestream restore` of the final replica equals the last writer's
// database. Until followers can promote themselves, the writer that takes
// over is a different database opening the same replica with `restore`
// once the old lease expired.
//
// Skips with a message when namespaces cannot be made (not root); under CI
// that is a failure.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Database, S3_KEYS, findTool, skipWithout, tempDir } from './helpers.mjs';
import { Writer, createHosts, netnsSkip, s3Options, startS3On } from './hosts.mjs';

const skip = netnsSkip() || skipWithout('moto_server', 'litestream');
const TTL = 3000;
const BUCKET = 'replica';
const URL = `s3://${BUCKET}/db`;
// Opening while the old lease is live is refused; the next try comes this soon.
const RETRY_MS = 250;
// A takeover must happen within this long (the lease plus ample slack).
const TAKEOVER_DEADLINE_MS = 60_000;

/** Hosts, the S3 server and a folder for the databases, torn down by `t.after`. */
async function world(t, names) {
  const { hosts, destroy } = createHosts(['s3', ...names]);
  const writers = [];
  let s3 = null;
  t.after(async () => {
    for (const w of writers) await w.kill();
    await s3?.stop();
    destroy();
  });
  s3 = await startS3On(hosts.s3, BUCKET);
  const dir = tempDir();
  const options = (extra) => ({ leaseTtl: TTL, syncInterval: 100, ...s3Options(s3.endpoint), ...extra });
  const writer = (file, extra, host) => {
    const w = new Writer(path.join(dir, file), URL, options(extra), host);
    writers.push(w);
    return w;
  };
  return { hosts, s3, dir, writer };
}

/** Opens a writer on `host` as soon as the lease lets it; resolves to it, opened. */
async function takeOver(world, file, extra, host) {
  const deadline = Date.now() + TAKEOVER_DEADLINE_MS;
  for (;;) {
    const w = world.writer(file, { restore: 'full', ...extra }, host);
    const answer = await w.next((m) => m.opened || m.openFailed);
    if (answer.opened) return w;
    assert.equal(answer.openFailed, 'ERR_OFFLOOP_REPLICA', answer.message);
    assert.match(answer.message, /lease is held by/);
    await w.kill();
    // A refused open may have restored the file already: start afresh.
    for (const f of fs.readdirSync(world.dir).filter((n) => n.startsWith(file))) {
      fs.rmSync(path.join(world.dir, f), { recursive: true, force: true });
    }
    if (Date.now() > deadline) throw new Error('no takeover before the deadline');
    await sleep(RETRY_MS);
  }
}

async function writeRound(w, n) {
  w.send({ write: n });
  await w.next((m) => m.round, TAKEOVER_DEADLINE_MS);
}

async function replicated(w) {
  const deadline = Date.now() + TAKEOVER_DEADLINE_MS;
  for (;;) {
    const s = await w.stats();
    if (s.txid > 0 && s.pendingFiles === 0 && s.lagMs === 0) return;
    if (Date.now() > deadline) throw new Error(`never replicated: ${JSON.stringify(s)}`);
    await sleep(50);
  }
}

/** The rows of table t in `file` (read here: the hosts share this filesystem). */
async function values(file) {
  const db = await Database.open(file, { readOnly: true });
  try {
    return (await db.prepare('SELECT v FROM t ORDER BY v').all()).map((r) => r.v);
  } finally {
    await db.close();
  }
}

/** No key of the replica was ever written twice, and `litestream restore` of it (from `host`) equals `file`. */
async function checkOneWriter(world, host, file) {
  const versions = await world.s3.versions('db/0000/');
  const l0 = Object.keys(versions).filter((k) => k.endsWith('.ltx'));
  assert.ok(l0.length > 0);
  const twice = l0.filter((k) => versions[k] > 1);
  assert.deepEqual(twice, [], 'TXID files written more than once');
  const out = path.join(world.dir, `restored-${Date.now()}.db`);
  const endpoint = encodeURIComponent(world.s3.endpoint);
  await host.run(findTool('litestream'), ['restore', '-o', out, `${URL}?endpoint=${endpoint}&forcePathStyle=true`], {
    AWS_ACCESS_KEY_ID: S3_KEYS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey,
  });
  assert.deepEqual(await values(out), await values(file));
}

/** The old primary, back: every write it is asked for rejects ERR_OFFLOOP_FENCED, and it says why. */
async function checkFenced(old) {
  old.messages.length = 0;
  await writeRound(old, 10);
  await writeRound(old, 10);
  assert.deepEqual(old.acked(), [], 'a fenced primary acknowledged a write');
  const refused = old.messages.filter((m) => m.refused);
  assert.equal(refused.length, 20);
  for (const r of refused) assert.equal(r.refused, 'ERR_OFFLOOP_FENCED', r.message);
  // Lapsed, it refused them; its next renewal that reaches S3 finds the
  // lease taken and fences it for good.
  const deadline = Date.now() + 60_000;
  let stats = await old.stats();
  while (!stats.fenced) {
    assert.ok(Date.now() < deadline, 'timed out waiting for the fence');
    await sleep(50);
    stats = await old.stats();
  }
  assert.match(stats.lastError, /lease/);
}

test('a partitioned primary is replaced on another host once its lease expired, and when the link returns it is fenced and never acknowledges a write again', { skip }, async (t) => {
  const w = await world(t, ['primary', 'second']);
  const old = w.writer('a.db', {}, w.hosts.primary);
  await old.next((m) => m.opened);
  await writeRound(old, 20);
  await replicated(old);
  const cut = Date.now();
  w.hosts.primary.partition();
  const fresh = await takeOver(w, 'b.db', { durability: 'replica' }, w.hosts.second);
  await writeRound(fresh, 20);
  t.diagnostic(`failover: ${Date.now() - cut} ms from the cut to the new writer's first acknowledged writes (leaseTtl ${TTL} ms)`);
  assert.equal(fresh.acked().length, 20);
  w.hosts.primary.heal();
  await checkFenced(old);
  await writeRound(fresh, 10);
  await checkOneWriter(w, w.hosts.second, path.join(w.dir, 'b.db'));
});

test('a paused primary (SIGSTOP past its lease, then SIGCONT) is fenced and never acknowledges a write again', { skip }, async (t) => {
  const w = await world(t, ['primary', 'second']);
  const old = w.writer('a.db', {}, w.hosts.primary);
  await old.next((m) => m.opened);
  await writeRound(old, 20);
  await replicated(old);
  old.proc.kill('SIGSTOP');
  const fresh = await takeOver(w, 'b.db', { durability: 'replica' }, w.hosts.second);
  await writeRound(fresh, 20);
  old.proc.kill('SIGCONT');
  await checkFenced(old);
  await writeRound(fresh, 10);
  await checkOneWriter(w, w.hosts.second, path.join(w.dir, 'b.db'));
});

test("a primary killed under durability: 'replica' with concurrent writers loses no acknowledged write, over several rounds across hosts", { skip }, async (t) => {
  const names = ['primary', 'second', 'third'];
  const w = await world(t, names);
  const acked = [];
  let current = w.writer('db0.db', { durability: 'replica' }, w.hosts.primary);
  await current.next((m) => m.opened);
  let file = 'db0.db';
  for (let round = 1; round <= 3; round++) {
    current.send({ write: 64 });
    current.send({ write: 64 });
    const deadline = Date.now() + TAKEOVER_DEADLINE_MS;
    while (current.acked().length < 40) {
      if (Date.now() > deadline) throw new Error('too few writes acknowledged');
      await sleep(10);
    }
    await current.kill();
    acked.push(...current.acked());
    file = `db${round}.db`;
    current = await takeOver(w, file, { durability: 'replica' }, w.hosts[names[round % names.length]]);
    const have = new Set(await values(path.join(w.dir, file)));
    const missing = acked.filter((v) => !have.has(v));
    assert.deepEqual(missing, [], `round ${round}: ${missing.length} of ${acked.length} acknowledged writes missing`);
  }
  await writeRound(current, 10);
  await checkOneWriter(w, w.hosts.third, path.join(w.dir, file));
});
