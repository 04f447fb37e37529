// Helpers of the replication tests: find the real tools (litestream, the
// moto S3 server), start and stop them on loopback, run a mixed workload,
// and compare two databases table by table. Owns no test; never touches a
// database the test did not hand it.

import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import offloop from '../../index.js';

export const { Database } = offloop;
const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// How long a tool may take to start or to answer one command.
const TOOL_DEADLINE_MS = 30_000;

/**
 * The path of a tool: in the repository's .venv/bin (where `npm test` puts
 * it, scripts/test-tools.mjs), else on the PATH. Missing: an error under CI, else null (the caller
 * skips, saying why).
 */
export function findTool(name) {
  const candidates = [path.join(ROOT, '.venv', 'bin', name)];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir) candidates.push(path.join(dir, name));
  }
  const found = candidates.find((p) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (found) return found;
  if (process.env.CI) throw new Error(`${name} is missing: run node scripts/test-tools.mjs`);
  return null;
}

/**
 * The lease of the folder replica at `replicaDir`: its lock.json (`lock`)
 * and the process lease it names (`file`, `record`: null when it names
 * none), whose expiry is the lease's.
 */
export function folderLease(replicaDir) {
  const lock = JSON.parse(fs.readFileSync(path.join(replicaDir, 'lock.json'), 'utf8'));
  if (!lock.process_lease) return { lock, file: null, record: null, expiresAt: Date.parse(lock.expires_at) };
  const file = path.join(path.dirname(replicaDir), lock.process_lease);
  const record = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { lock, file, record, expiresAt: Date.parse(record.expires_at) };
}

/**
 * Resolves just after the writer of the folder replica at `replicaDir`
 * renewed its process lease. A folder's lease object is replaced under an
 * exclusive flock, and a process stopped while it holds that lock blocks
 * every other change of it until it runs again: a test that pauses a
 * writer pauses it here, never inside a renewal.
 */
export async function renewed(replicaDir) {
  const { file } = folderLease(replicaDir);
  const before = fs.readFileSync(file, 'utf8');
  const deadline = Date.now() + 30_000;
  while (fs.readFileSync(file, 'utf8') === before) {
    if (Date.now() > deadline) throw new Error('the lease was not renewed');
    await sleep(5);
  }
  // The lock is held until the folder is synced after the rename.
  await sleep(100);
}

/** A skip message for `test(..., { skip })` when a tool is missing. */
export function skipWithout(...names) {
  const missing = names.filter((n) => findTool(n) === null);
  return missing.length === 0 ? false : `${missing.join(', ')} not installed (node scripts/test-tools.mjs installs it)`;
}

// Every folder tempDir() made, removed when the test file's process ends
// (databases of a gigabyte and more are made here, hundreds per run).
const madeDirs = [];
process.once('exit', () => {
  for (const dir of madeDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Resolves to `check()`'s first truthy value, asked every 25 ms; throws
 * once `deadlineMs` passed without one.
 */
export async function waitFor(what, check, deadlineMs = 30_000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A new folder, removed when this process exits. */
export function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-replica-'));
  madeDirs.push(dir);
  return dir;
}

/** The environment Litestream runs in: no CA bundle it could choke on. */
export function toolEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.AWS_CA_BUNDLE;
  return env;
}

/** Runs `litestream ...args`; resolves to its stdout. */
export async function litestream(args, extraEnv = {}) {
  const { stdout } = await run(findTool('litestream'), args, {
    env: toolEnv(extraEnv),
    timeout: TOOL_DEADLINE_MS,
  });
  return stdout;
}

export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export const S3_KEYS = { accessKeyId: 'offloop-test', secretAccessKey: 'offloop-test-secret' };

/**
 * Starts moto (through `s3_test_server`, which serves its writes one at
 * a time as S3 does) on a free loopback port and creates `buckets`.
 * Returns `{ endpoint, port, stop }`.
 */
export async function startS3(buckets = ['replica']) {
  const port = await freePort();
  const child = spawn(findTool('s3_test_server'), ['-H', '127.0.0.1', '-p', String(port)], {
    env: toolEnv(),
    stdio: 'ignore',
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + TOOL_DEADLINE_MS;
  for (;;) {
    try {
      const res = await fetch(endpoint);
      await res.arrayBuffer();
      break;
    } catch (err) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`s3_test_server did not start: ${err.message}`);
      }
      await sleep(100);
    }
  }
  for (const bucket of buckets) {
    const res = await fetch(`${endpoint}/${bucket}`, { method: 'PUT' });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`could not create bucket ${bucket}: ${res.status}`);
  }
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
  };
  return { endpoint, port, stop };
}

/**
 * The S3 server of one test file: a moto with the bucket `replica`,
 * started before the file's tests (then `setUp()`, the file's own
 * set-up that needs it) and stopped after them; never started when `skip`
 * says why not. Its `endpoint` and `port` are read once the tests run.
 * One hook does both: Node 20 does not wait for one top-level `before`
 * hook to end before it starts the next.
 */
export function s3ForFile(skip, setUp = async () => {}) {
  let s3 = null;
  before(async () => {
    if (skip) return;
    s3 = await startS3(['replica']);
    await setUp();
  });
  after(async () => {
    await s3?.stop();
  });
  return {
    get endpoint() {
      return s3.endpoint;
    },
    get port() {
      return s3.port;
    },
  };
}

/**
 * A TCP relay on a free loopback port to `targetPort`, which the test can
 * take down (connections refused) and bring back: an S3 server that goes
 * away and returns with its data.
 */
export async function startRelay(targetPort) {
  const port = await freePort();
  const sockets = new Set();
  let server = null;
  const up = () =>
    new Promise((resolve, reject) => {
      if (server !== null) return resolve();
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  const down = () =>
    new Promise((resolve) => {
      if (server === null) return resolve();
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
      server = null;
    });
  await up();
  return { port, endpoint: `http://127.0.0.1:${port}`, up, down };
}

/**
 * A mixed workload: single statements, a batch, a transaction, updates,
 * deletes, blobs big enough for overflow pages, and a table created midway.
 */
export async function mixedWorkload(db, rounds = 3) {
  await db.exec('CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, name TEXT, body BLOB)');
  const insert = db.prepare('INSERT INTO items(name, body) VALUES (?, ?)');
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < 20; i++) await insert.run(`single ${round}.${i}`, blob(100 + i * 50, round + i));
    await db.batch(Array.from({ length: 10 }, (_, i) => [insert, [`batch ${round}.${i}`, blob(200, i)]]));
    await db.transaction(async (tx) => {
      const ins = tx.prepare('INSERT INTO items(name, body) VALUES (?, ?)');
      for (let i = 0; i < 10; i++) await ins.run(`tx ${round}.${i}`, blob(9000 + i, round));
    });
    await db.prepare('UPDATE items SET body = ? WHERE id % 7 = ?').run(blob(12_000, round), round);
    await db.prepare('DELETE FROM items WHERE id % 11 = ?').run(round);
    if (round === 1) {
      await db.exec('CREATE TABLE later(k TEXT PRIMARY KEY, v REAL) WITHOUT ROWID');
    }
    if (round >= 1) {
      await db.prepare('INSERT INTO later(k, v) VALUES (?, ?)').run(`k${round}`, round / 3);
    }
  }
}

function blob(size, seed) {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  return b;
}

/** Every table's rows, by table name, in rowid (or key) order. */
export async function tables(db) {
  const names = await db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all();
  const out = {};
  for (const { name } of names) {
    const rows = await db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all();
    out[name] = rows.map((r) => Object.values(r).map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)));
  }
  return out;
}

/** Opens a database file read-only and returns its tables and integrity. */
export async function inspect(file) {
  const db = await Database.open(file, { readOnly: true, readers: 0 });
  try {
    const integrity = (await db.prepare('PRAGMA integrity_check').get()).integrity_check;
    return { integrity, tables: await tables(db) };
  } finally {
    await db.close();
  }
}

/** The L0 TXIDs of a folder replica, ascending. */
export function folderTxids(replicaDir, level = 0) {
  const dir = path.join(replicaDir, 'ltx', String(level));
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.ltx'))
    .map((n) => n.slice(0, -4).split('-').map((h) => Number.parseInt(h, 16)))
    .sort((a, b) => a[0] - b[0]);
}

/** Asserts the ranges are contiguous: each starts right after the last. */
export function assertContiguous(assert, ranges) {
  for (let i = 1; i < ranges.length; i++) {
    assert.equal(ranges[i][0], ranges[i - 1][1] + 1, `TXIDs ${JSON.stringify(ranges)} have a gap or a duplicate at ${i}`);
  }
}

/**
 * Runs `litestream replicate` on the database `file` as a sidecar, with a
 * control socket (and `topYaml`, lines of the config's top level, such as
 * a snapshot interval); returns `{ sync, stop }`: `sync()` forces a sync
 * and resolves once the replica has it.
 */
export async function startLitestream(file, replicaYaml, extraEnv = {}, topYaml = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-litestream-'));
  const socket = path.join(dir, 'control.sock');
  const config = path.join(dir, 'litestream.yml');
  fs.writeFileSync(
    config,
    [...topYaml, `socket:`, `  enabled: true`, `  path: ${socket}`, `dbs:`, `  - path: ${file}`, `    replica:`, ...replicaYaml.map((l) => `      ${l}`), ''].join('\n'),
  );
  const child = spawn(findTool('litestream'), ['replicate', '-config', config], {
    env: toolEnv(extraEnv),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => {
    log += d;
  });
  const sync = async () => {
    const deadline = Date.now() + TOOL_DEADLINE_MS;
    for (;;) {
      try {
        return JSON.parse(await litestream(['sync', '-wait', '-json', '-socket', socket, file], extraEnv));
      } catch (err) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`litestream sync failed: ${err.message}\n${log}`);
        await sleep(200);
      }
    }
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
  };
  return { sync, stop };
}
