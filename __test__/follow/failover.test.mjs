// Failover on one host, without namespaces, so its guarantees are tested
// where namespaces cannot be made: processes and a folder replica. A
// paused primary (SIGSTOP past its lease) is replaced by one of two
// standbys (followers with `promote: 'auto'`), which the other then
// follows, and once it runs again it is fenced for good; a primary killed
// under `durability: 'replica'` with concurrent writers loses no
// acknowledged write over several rounds. Each time, the folder's TXIDs
// run without a gap or a repeat, and `litestream restore` of the replica
// equals the last writer's database. The scenarios are shared with the
// namespace test (__test__/replication/failover.mjs).

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { assertContiguous, folderTxids, litestream, renewed, skipWithout, tempDir } from '../replication/helpers.mjs';
import { killedRounds, lostAndBack, values } from '../replication/failover.mjs';

const skip = skipWithout('litestream');

function place() {
  const dir = tempDir();
  const replicaDir = path.join(dir, 'replica');
  const url = pathToFileURL(replicaDir).href;
  const checkReplica = async (file) => {
    assertContiguous(assert, folderTxids(replicaDir));
    const out = path.join(dir, `restored-${Date.now()}.db`);
    await litestream(['restore', '-o', out, url]);
    assert.deepEqual(await values(out), await values(file));
  };
  return { dir, replicaDir, url, replicaOptions: {}, hosts: null, checkReplica };
}

test('a paused primary is replaced by one of two standbys on one host, which the other follows; back, it is fenced for good', { skip }, async (t) => {
  const p = place();
  await lostAndBack(
    t,
    p,
    async (old) => {
      await renewed(p.replicaDir);
      old.proc.kill('SIGSTOP');
    },
    (old) => old.proc.kill('SIGCONT'),
  );
});

test("a primary killed under durability: 'replica' with concurrent writers loses no acknowledged write, over several rounds on one host", { skip }, async (t) => {
  await killedRounds(t, place(), 3);
});
