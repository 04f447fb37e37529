// The S3 servers of the replication benchmarks, each a process of its own
// on a free loopback port, started with their buckets and stopped here:
// moto_server (Python, the one the replication tests use) and s3rver
// (Node, from the bench package, objects in files). It owns those
// processes and s3rver's data folder; it never serves beyond 127.0.0.1.
//
// Why two: moto answers every GET — a ranged one too — by reading the
// whole object first, so each ranged read of a 1 GiB object costs moto
// about half a second of CPU, and a restore that reads a large file in
// parallel ranges measures moto rather than itself. s3rver streams a range
// from its file, as S3 serves it.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { HOST_NODE, benchRequire } from './paths.mjs';
import { findTool, toolEnv } from './tools.mjs';

/** How long a server may take to start answering. */
const START_DEADLINE_MS = 30_000;
/**
 * The keys every client sends: s3rver's built-in account (it checks
 * signatures against it), and any keys do for moto.
 */
export const S3_KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const S3_REGION = 'us-east-1';

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits for `child` to answer HTTP at `endpoint`; returns its handle. */
async function served(name, child, endpoint, port) {
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    try {
      await (await fetch(endpoint)).arrayBuffer();
      break;
    } catch (err) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not start: ${err.message}`);
      }
      await sleep(100);
    }
  }
  return {
    name,
    endpoint,
    port,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/** Starts moto_server with `buckets`. Resolves to `{ name, endpoint, port, pid, stop() }`. */
export async function startMoto({ buckets = [] } = {}) {
  const bin = findTool('moto_server');
  if (!bin) throw new Error('moto_server is not installed (node scripts/test-tools.mjs)');
  const port = await freePort();
  const child = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { env: toolEnv(), stdio: 'ignore' });
  const server = await served('moto', child, `http://127.0.0.1:${port}`, port);
  for (const bucket of buckets) {
    const res = await fetch(`${server.endpoint}/${bucket}`, { method: 'PUT' });
    await res.arrayBuffer();
    if (!res.ok) {
      await server.stop();
      throw new Error(`could not create bucket ${bucket}: ${res.status}`);
    }
  }
  return server;
}

/**
 * Starts s3rver with its objects under `dir` (removed by stop()) and
 * `buckets`. Resolves to `{ name, endpoint, port, pid, stop() }`.
 */
export async function startS3rver({ dir, buckets = [] }) {
  const pkg = benchRequire.resolve('s3rver/package.json');
  const bin = path.join(path.dirname(pkg), JSON.parse(fs.readFileSync(pkg, 'utf8')).bin.s3rver);
  const port = await freePort();
  const args = [bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--no-vhost-buckets'];
  for (const bucket of buckets) args.push('--configure-bucket', bucket);
  const child = spawn(HOST_NODE, args, { stdio: 'ignore' });
  const server = await served('s3rver', child, `http://127.0.0.1:${port}`, port);
  return {
    ...server,
    stop: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
