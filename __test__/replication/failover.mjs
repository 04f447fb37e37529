// The failover scenarios, run across hosts (failover-netns.test.mjs: the
// S3 server, the primary and two standbys each in a network namespace of
// its own) and on one host (__test__/follow/failover.test.mjs: processes
// and a folder replica). A primary (a lease-writer.mjs process) is lost;
// two standbys, followers with `promote: 'auto'`, race to promote; one
// wins, the other keeps following it. What every scenario checks: the
// winner holds every write the old primary acknowledged under
// `durability: 'replica'`; an old primary that comes back is fenced and
// never acknowledges a write again; exactly one writer wrote each TXID;
// and the replica restores to the winner's database.
//
// It owns the scenarios' steps and checks. It never makes hosts or a
// store: the test files hand it a `place` that does.

import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Database, waitFor } from './helpers.mjs';
import { Writer } from './hosts.mjs';

export const TTL = 3000;
export const POLL = 100;
// Every wait for a promotion or a write gives up after this long.
const DEADLINE_MS = 60_000;

/**
 * A place to run failovers in: `{ dir, url, replicaOptions, hosts: [primary, standby1, standby2] }`
 * (hosts null on one host), and `checkReplica(file)`, which asserts that
 * no TXID was written twice and that the replica restores to `file`.
 */
export class Failover {
  constructor(t, place) {
    this.place = place;
    this.procs = [];
    t.after(async () => {
      for (const p of this.procs) await p.kill();
    });
  }

  start(file, extra, host) {
    const w = new Writer(path.join(this.place.dir, file), this.place.url, { ...this.place.replicaOptions, ...extra }, host);
    this.procs.push(w);
    return w;
  }

  /** The primary, opened with a few writes in the replica. */
  async primary(file, extra = {}) {
    const w = this.start(file, { leaseTtl: TTL, syncInterval: 100, ...extra }, this.place.hosts?.[0] ?? null);
    await w.next((m) => m.opened);
    await w.write(20, DEADLINE_MS);
    await replicated(w);
    return w;
  }

  /** A standby: a follower with `promote: 'auto'`, opened. */
  async standby(file, host, extra = {}) {
    const w = this.start(file, { follow: true, promote: 'auto', pollInterval: POLL, leaseTtl: TTL, ...extra }, host);
    const opened = await w.next((m) => m.opened || m.openFailed);
    assert.ok(opened.opened, opened.message);
    w.file = path.join(this.place.dir, file);
    return w;
  }

  /**
   * Waits for one of `standbys` to promote, then for the first write it
   * acknowledges. Resolves to `{ winner, others, failoverMs }`, timed from
   * `lostAt`; checks that the others did not promote and still follow.
   */
  async promotion(standbys, lostAt) {
    const deadline = Date.now() + DEADLINE_MS;
    let winner;
    while ((winner = standbys.find((s) => s.messages.some((m) => m.promoted !== undefined))) === undefined) {
      if (Date.now() > deadline) throw new Error('no standby promoted');
      await sleep(10);
    }
    winner.send({ write: 1 });
    await winner.next((m) => m.acked || m.refused, DEADLINE_MS);
    const failoverMs = Date.now() - lostAt;
    assert.equal(winner.refusedCodes().length, 0, JSON.stringify(winner.messages));
    const others = standbys.filter((s) => s !== winner);
    for (const other of others) {
      const { follow } = await other.statsOf();
      assert.notEqual(follow, null, 'two standbys promoted');
      assert.equal(other.messages.filter((m) => m.promoted !== undefined).length, 0);
    }
    return { winner, others, failoverMs };
  }
}

export async function replicated(w) {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const s = await w.stats();
    if (s !== null && s.txid > 0 && s.pendingFiles === 0 && s.pendingBytes === 0 && s.lagMs === 0) return s.txid;
    if (Date.now() > deadline) throw new Error(`never replicated: ${JSON.stringify(s)}`);
    await sleep(50);
  }
}

/** The rows of table t in `file` (read here: the hosts share this filesystem). */
export async function values(file) {
  const db = await Database.open(file, { readOnly: true });
  try {
    return (await db.prepare('SELECT v FROM t ORDER BY v').all()).map((r) => r.v);
  } finally {
    await db.close();
  }
}

/** A standby that lost goes on following the winner: it reaches the winner's TXID. */
export async function followsWinner(loser, winner) {
  await winner.write(5, DEADLINE_MS);
  const txid = await replicated(winner);
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const { follow } = await loser.statsOf();
    if (follow.txid >= txid) return;
    if (Date.now() > deadline) throw new Error(`the other standby stopped following at ${follow.txid} (< ${txid})`);
    await sleep(50);
  }
}

/** The old primary, back: every write it is asked for rejects ERR_OFFLOOP_FENCED, and it says why. */
export async function checkFenced(old) {
  old.messages.length = 0;
  await old.write(10, DEADLINE_MS);
  await old.write(10, DEADLINE_MS);
  assert.deepEqual(old.acked(), [], 'a fenced primary acknowledged a write');
  const refused = old.refusedCodes();
  assert.equal(refused.length, 20);
  for (const code of refused) assert.equal(code, 'ERR_OFFLOOP_FENCED');
  // Lapsed, it refused them; its next renewal that reaches the replica
  // finds the lease taken and fences it for good.
  const stats = await waitFor('the fence', async () => {
    const s = await old.stats();
    return s.fenced && s;
  }, 60_000);
  assert.match(stats.lastError, /lease/);
}

/** A primary cut off by `await lose(old)` and given back by `restore(old)`: a standby takes over, the old one is fenced. */
export async function lostAndBack(t, place, lose, restore) {
  const f = new Failover(t, place);
  const old = await f.primary('a.db');
  const standbys = [await f.standby('b.db', place.hosts?.[1] ?? null), await f.standby('c.db', place.hosts?.[2] ?? null)];
  await lose(old);
  const lostAt = Date.now();
  const { winner, others, failoverMs } = await f.promotion(standbys, lostAt);
  t.diagnostic(`failover: ${failoverMs} ms from the loss to the new writer's first acknowledged write (leaseTtl ${TTL} ms, pollInterval ${POLL} ms)`);
  restore(old);
  await checkFenced(old);
  await followsWinner(others[0], winner);
  await place.checkReplica(winner.file);
}

/**
 * A primary killed (SIGKILL) under `durability: 'replica'` with concurrent
 * writers, `rounds` times: each time a standby takes over, holds every
 * acknowledged write, and a new standby replaces it.
 */
export async function killedRounds(t, place, rounds) {
  const f = new Failover(t, place);
  const hosts = place.hosts ?? [null, null, null];
  const durable = { durability: 'replica' };
  let current = await f.primary('db0.db', durable);
  let standbys = [await f.standby('s1.db', hosts[1], durable), await f.standby('s2.db', hosts[2], durable)];
  let freeHost = hosts[0];
  const acked = [];
  const times = [];
  for (let round = 1; round <= rounds; round++) {
    current.send({ write: 64 });
    current.send({ write: 64 });
    const deadline = Date.now() + DEADLINE_MS;
    while (current.acked().length < 40) {
      if (Date.now() > deadline) {
        const refused = current.messages.filter((m) => m.refused).slice(0, 3);
        throw new Error(`round ${round}: ${current.acked().length} writes acknowledged; refused: ${JSON.stringify(refused)}`);
      }
      await sleep(10);
    }
    const lostAt = Date.now();
    await current.kill();
    acked.push(...current.acked());
    const { winner, others, failoverMs } = await f.promotion(standbys, lostAt);
    times.push(failoverMs);
    const have = new Set(await values(winner.file));
    const missing = acked.filter((v) => !have.has(v));
    assert.deepEqual(missing, [], `round ${round}: ${missing.length} of ${acked.length} acknowledged writes missing`);
    acked.push(...winner.acked());
    const nextHost = winner.host;
    current = winner;
    standbys = [...others, await f.standby(`s${round + 2}.db`, freeHost, durable)];
    freeHost = nextHost;
  }
  t.diagnostic(`failover times over ${rounds} rounds: ${times.join(', ')} ms (leaseTtl ${TTL} ms, pollInterval ${POLL} ms)`);
  await followsWinner(standbys[0], current);
  await place.checkReplica(current.file);
}
