// A writer whose next TXID name is taken: whatever holds the name (bytes
// that are no LTX file, an empty object, another writer's LTX file), the
// writer is fenced, on a folder replica and on S3 (moto): every later write
// rejects with ERR_OFFLOOP_FENCED, reads go on, the object stays as it was
// and nothing is written past it. Its own create of the name, whose answer
// was lost on the way back (a relay drops it), is its own and fences
// nothing; nor does a refusal that finds nothing there (a relay answers
// S3's 409 for a create racing another), which is tried again. Owns these cases only; the lease's own fencing is
// lease.test.mjs's.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Database, S3_KEYS, assertContiguous, freePort, s3ForFile, skipWithout, tempDir } from './helpers.mjs';

const skipS3 = skipWithout('s3_test_server');
// A writer that is not fenced when it should be waits on its replica for
// good: each test fails after this long rather than hang.
const TEST_TIMEOUT_MS = 60_000;
const s3 = s3ForFile(skipS3);

const hex = (n) => n.toString(16).padStart(16, '0');
const ltxName = (txid) => `${hex(txid)}-${hex(txid)}.ltx`;

/** A folder replica: where its files are, and how to read and put one. */
function folderReplica(dir) {
  const root = path.join(dir, 'replica');
  const l0 = (name) => path.join(root, 'ltx', '0', name);
  return {
    options: { url: pathToFileURL(root).href },
    async get(txid) {
      return fs.readFileSync(l0(ltxName(txid)));
    },
    // As another process would: created only if the name is free.
    async create(txid, bytes) {
      fs.writeFileSync(l0(ltxName(txid)), bytes, { flag: 'wx' });
    },
    /** [min, max] TXID of every LTX file, every level. */
    async ranges() {
      const ltx = path.join(root, 'ltx');
      return fs.readdirSync(ltx).flatMap((level) =>
        fs
          .readdirSync(path.join(ltx, level))
          .filter((n) => n.endsWith('.ltx'))
          .map((n) => [level, ...n.slice(0, -4).split('-').map((h) => parseInt(h, 16))]),
      );
    },
  };
}

/** The L0 files of `replica` as [min, max] TXIDs, ascending. */
async function l0Ranges(replica) {
  return (await replica.ranges())
    .filter(([level]) => level === '0')
    .map(([, min, max]) => [min, max])
    .sort((a, b) => a[0] - b[0]);
}

/** An S3 replica in moto's bucket `replica`, reached at `endpoint`. */
function s3Replica(prefix, endpoint = s3.endpoint) {
  const key = (txid) => `${prefix}/0000/${ltxName(txid)}`;
  const object = (k) => `${s3.endpoint}/replica/${k}`;
  return {
    options: { url: `s3://replica/${prefix}`, endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_KEYS },
    async get(txid) {
      const res = await fetch(object(key(txid)));
      assert.equal(res.status, 200, key(txid));
      return Buffer.from(await res.arrayBuffer());
    },
    // As another party would: S3's create-only PUT (readable by the
    // test's own unsigned GET).
    async create(txid, bytes) {
      const headers = { 'If-None-Match': '*', 'x-amz-acl': 'public-read' };
      const res = await fetch(object(key(txid)), { method: 'PUT', body: bytes, headers });
      await res.arrayBuffer();
      assert.equal(res.status, 200, `PUT ${key(txid)}`);
    },
    async ranges() {
      const res = await fetch(`${s3.endpoint}/replica?list-type=2&prefix=${encodeURIComponent(`${prefix}/`)}`);
      const listing = await res.text();
      return [...listing.matchAll(/<Key>[^<]*\/([0-9a-f]{4})\/([0-9a-f]{16})-([0-9a-f]{16})\.ltx<\/Key>/g)].map((m) => [
        String(parseInt(m[1], 16)),
        parseInt(m[2], 16),
        parseInt(m[3], 16),
      ]);
    },
  };
}

/**
 * An LTX file at `txid` that another writer wrote: a database of its own,
 * replicating to a folder of its own, written and synced until its replica
 * has reached that TXID.
 */
async function anotherWritersLtx(dir, txid) {
  const other = folderReplica(path.join(dir, 'other'));
  const db = await Database.open(path.join(dir, 'other.db'), { replica: { ...other.options, lease: false } });
  try {
    await db.exec('CREATE TABLE t(v TEXT)');
    for (let at = (await db.syncReplica()).txid; at < txid; at = (await db.syncReplica()).txid) {
      await db.exec("INSERT INTO t VALUES ('theirs')");
    }
    return await other.get(txid);
  } finally {
    await db.close();
  }
}

const TAKERS = {
  'bytes that are no LTX file': async () => Buffer.from('not an LTX file, and shorter than its header'),
  'an empty object': async () => Buffer.alloc(0),
  "another writer's LTX file": anotherWritersLtx,
};

async function checkFenced(replica, taker) {
  const dir = tempDir();
  // Uploads only when syncReplica() asks: the sync interval never runs out.
  const db = await Database.open(path.join(dir, 'a.db'), {
    replica: { ...replica.options, leaseTtl: 60_000, syncInterval: 3_600_000 },
  });
  try {
    await db.exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('kept')");
    const { txid } = await db.syncReplica();
    const taken = txid + 1;
    const bytes = await taker(dir, taken);
    await replica.create(taken, bytes);

    // Committed here, and its upload finds the name taken.
    await db.exec("INSERT INTO t VALUES ('lost')");
    await assert.rejects(db.syncReplica());
    const stats = db.stats().replica;
    assert.equal(stats.fenced, true);
    assert.match(stats.lastError, new RegExp(`TXID ${hex(taken)} is already in the replica`));
    for (const v of ['later', 'and later']) {
      await assert.rejects(db.prepare('INSERT INTO t VALUES (?)').run(v), { code: 'ERR_OFFLOOP_FENCED' });
    }
    await assert.rejects(db.syncReplica());
    assert.deepEqual((await db.prepare('SELECT v FROM t ORDER BY rowid').all()).map((r) => r.v), ['kept', 'lost'], 'reads go on');
    await assert.rejects(db.syncReplica());

    assert.deepEqual(await replica.get(taken), bytes, 'the object is as its writer left it');
    const past = (await replica.ranges()).filter(([, , max]) => max > taken);
    assert.deepEqual(past, [], 'nothing written past the taken name');
    const l0 = await l0Ranges(replica);
    assert.deepEqual(l0.at(-1), [taken, taken]);
  } finally {
    await db.close();
  }
}

for (const [what, taker] of Object.entries(TAKERS)) {
  test(`a folder replica whose next TXID name holds ${what} fences the writer: writes reject ERR_OFFLOOP_FENCED, reads go on, the file stays, nothing follows it`, { timeout: TEST_TIMEOUT_MS }, async () => {
    await checkFenced(folderReplica(tempDir()), taker);
  });

  test(`an S3 replica whose next TXID key holds ${what} fences the writer: writes reject ERR_OFFLOOP_FENCED, reads go on, the object stays, nothing follows it`, { skip: skipS3, timeout: TEST_TIMEOUT_MS }, async () => {
    await checkFenced(s3Replica(`taken-${Object.keys(TAKERS).indexOf(what)}`), taker);
  });
}

/**
 * A relay to S3 that can spoil one exchange: armed with a request line's
 * start, it either passes that request on to S3 and, when S3 answers,
 * closes the connection instead of passing the answer back
 * (`loseAnswerTo`), or answers it itself without passing it on
 * (`answerInstead`). Each resolves once it has done so.
 */
async function startFaultyRelay(targetPort) {
  const port = await freePort();
  let armed = null;
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    let losing = null;
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.on('data', (chunk) => {
      if (armed !== null && chunk.toString('latin1').startsWith(armed.request)) {
        const fault = armed;
        armed = null;
        if (fault.answer !== undefined) {
          upstream.destroy();
          client.end(fault.answer);
          fault.resolve();
          return;
        }
        losing = fault;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (losing !== null) {
        client.destroy();
        upstream.destroy();
        losing.resolve();
        return;
      }
      client.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    loseAnswerTo(request) {
      return new Promise((resolve) => {
        armed = { request, resolve };
      });
    },
    answerInstead(request, answer) {
      return new Promise((resolve) => {
        armed = { request, answer, resolve };
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test("a create of the next TXID key whose answer was lost is the writer's own: it is not fenced, the write resolves and later writes go on", { skip: skipS3, timeout: TEST_TIMEOUT_MS }, async () => {
  const relay = await startFaultyRelay(s3.port);
  const replica = s3Replica('retried', relay.endpoint);
  const db = await Database.open(path.join(tempDir(), 'a.db'), {
    replica: { ...replica.options, leaseTtl: 60_000, durability: 'replica' },
  });
  try {
    await db.exec('CREATE TABLE t(v TEXT)');
    const { txid } = await db.syncReplica();
    const next = txid + 1;
    const lost = relay.loseAnswerTo(`PUT /replica/retried/0000/${ltxName(next)} `);
    await db.exec("INSERT INTO t VALUES ('first')");
    await lost;
    const stats = db.stats().replica;
    assert.equal(stats.fenced, false, stats.lastError);
    for (const v of ['second', 'third']) await db.prepare('INSERT INTO t VALUES (?)').run(v);
    assert.equal(db.stats().replica.fenced, false);
    const l0 = await l0Ranges(replica);
    assertContiguous(assert, l0);
    assert.ok(l0.at(-1)[1] >= next + 2, JSON.stringify(l0));
  } finally {
    await db.close();
    await relay.close();
  }
});

test('a create of the next TXID key refused with nothing there (S3\'s 409 ConditionalRequestConflict) is tried again, not fenced', { skip: skipS3, timeout: TEST_TIMEOUT_MS }, async () => {
  const relay = await startFaultyRelay(s3.port);
  const replica = s3Replica('conflict', relay.endpoint);
  const db = await Database.open(path.join(tempDir(), 'a.db'), {
    replica: { ...replica.options, leaseTtl: 60_000, durability: 'replica' },
  });
  try {
    await db.exec('CREATE TABLE t(v TEXT)');
    const { txid } = await db.syncReplica();
    const next = txid + 1;
    const body =
      '<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code>' +
      '<Message>A conflicting conditional operation is currently in progress against this resource.</Message></Error>';
    const answered = relay.answerInstead(
      `PUT /replica/conflict/0000/${ltxName(next)} `,
      `HTTP/1.1 409 Conflict\r\nContent-Type: application/xml\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    await db.exec("INSERT INTO t VALUES ('first')");
    await answered;
    assert.equal(db.stats().replica.fenced, false, db.stats().replica.lastError);
    await db.prepare('INSERT INTO t VALUES (?)').run('second');
    const l0 = await l0Ranges(replica);
    assertContiguous(assert, l0);
    assert.ok(l0.at(-1)[1] >= next + 1, JSON.stringify(l0));
  } finally {
    await db.close();
    await relay.close();
  }
});
