// Failover across hosts: the S3 server (moto) on one network namespace,
// the primary on a second, two standbys (followers with `promote: 'auto'`)
// on a third and a fourth. A partitioned primary (its link down) and a
// paused one (SIGSTOP past its lease) are replaced by one standby, which
// promotes itself while the other keeps following it, and once back the
// old primary is fenced and never acknowledges a write again; a primary
// killed under `durability: 'replica'` with concurrent writers loses no
// acknowledged write, over several rounds. In every case exactly one
// writer wrote each TXID (the bucket keeps every version of every key:
// none was written twice), and `litestream restore` of the final replica
// equals the last writer's database. The failover time (from the loss to
// the new writer's first acknowledged write) is reported, not asserted:
// the design bounds its lease and poll parts, not the store's latency.
// The scenarios themselves are in failover.mjs.
//
// Skips with a message when namespaces cannot be made (not root); under CI
// that is a failure.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { S3_KEYS, findTool, skipWithout, tempDir } from './helpers.mjs';
import { killedRounds, lostAndBack, values } from './failover.mjs';
import { createHosts, netnsSkip, s3Options, startS3On } from './hosts.mjs';

const skip = netnsSkip() || skipWithout('s3_test_server', 'litestream');
const BUCKET = 'replica';
const URL = `s3://${BUCKET}/db`;

/** Hosts, the S3 server and a folder for the databases, torn down by `t.after` (after the processes). */
async function place(t) {
  const { hosts, destroy } = createHosts(['s3', 'primary', 'third', 'fourth']);
  let s3 = null;
  t.after(async () => {
    await s3?.stop();
    destroy();
  });
  s3 = await startS3On(hosts.s3, BUCKET);
  const dir = tempDir();
  /** No key of the replica was ever written twice, and `litestream restore` of it (from the third host) equals `file`. */
  const checkReplica = async (file) => {
    const versions = await s3.versions('db/0000/');
    const l0 = Object.keys(versions).filter((k) => k.endsWith('.ltx'));
    assert.ok(l0.length > 0);
    assert.deepEqual(
      l0.filter((k) => versions[k] > 1),
      [],
      'TXID files written more than once',
    );
    const out = `${dir}/restored-${Date.now()}.db`;
    const endpoint = encodeURIComponent(s3.endpoint);
    await hosts.third.run(findTool('litestream'), ['restore', '-o', out, `${URL}?endpoint=${endpoint}&forcePathStyle=true`], {
      AWS_ACCESS_KEY_ID: S3_KEYS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey,
    });
    assert.deepEqual(await values(out), await values(file));
  };
  return { dir, url: URL, replicaOptions: s3Options(s3.endpoint), hosts: [hosts.primary, hosts.third, hosts.fourth], checkReplica };
}

test('a partitioned primary is replaced by one standby on another host, and when the link returns it is fenced and never acknowledges a write again', { skip }, async (t) => {
  const p = await place(t);
  await lostAndBack(
    t,
    p,
    () => p.hosts[0].partition(),
    () => p.hosts[0].heal(),
  );
});

test('a paused primary (SIGSTOP past its lease, then SIGCONT) is replaced by one standby, then fenced and never acknowledges a write again', { skip }, async (t) => {
  const p = await place(t);
  await lostAndBack(
    t,
    p,
    (old) => old.proc.kill('SIGSTOP'),
    (old) => old.proc.kill('SIGCONT'),
  );
});

test("a primary killed under durability: 'replica' with concurrent writers loses no acknowledged write, over several rounds across hosts", { skip }, async (t) => {
  await killedRounds(t, await place(t), 3);
});
