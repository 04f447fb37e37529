// Litestream 0.5, as users run it beside an application today: `litestream
// replicate` as a sidecar process with a config file, and `litestream
// restore`. It owns those processes and their config files; it never
// touches the database itself (Litestream does).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import { S3_KEYS, S3_REGION } from './s3-servers.mjs';
import { cpuSecondsFromStat, findTool, processCpuSeconds, toolEnv } from './tools.mjs';

/** How long one `litestream` command may take to answer. */
const COMMAND_DEADLINE_MS = 60_000;
/** What is kept of a process's stderr for an error message. */
const LOG_TAIL = 4000;

/** The environment with the S3 keys Litestream reads. */
export function litestreamEnv() {
  return toolEnv({ AWS_ACCESS_KEY_ID: S3_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey });
}

/** Litestream's URL for an S3 replica at `endpoint` (a server or a link in front of one). */
export function litestreamS3Url({ endpoint, bucket, prefix }) {
  return `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=${S3_REGION}&forcePathStyle=true`;
}

function bin() {
  const found = findTool('litestream');
  if (!found) throw new Error('litestream is not installed (node scripts/test-tools.mjs)');
  return found;
}

/** Runs `litestream ...args` to its end; resolves to its stdout. */
function command(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin(), args, { env: litestreamEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_DEADLINE_MS);
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-LOG_TAIL)));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`litestream ${args[0]} exited with ${code ?? signal}: ${err.trim()}`));
    });
  });
}

/**
 * The replica section of a Litestream config: `{ type: 'file', path }` or
 * `{ type: 's3', endpoint, bucket, prefix }`.
 */
function replicaYaml(replica, syncIntervalMs) {
  const lines =
    replica.type === 'file'
      ? ['type: file', `path: ${replica.path}`]
      : [
          'type: s3',
          `bucket: ${replica.bucket}`,
          `path: ${replica.prefix}`,
          `endpoint: ${replica.endpoint}`,
          `region: ${S3_REGION}`,
          'force-path-style: true',
          `access-key-id: ${S3_KEYS.accessKeyId}`,
          `secret-access-key: ${S3_KEYS.secretAccessKey}`,
        ];
  return [...lines, `sync-interval: ${syncIntervalMs}ms`];
}

/**
 * Starts `litestream replicate -config F` on the database `db`, with its
 * config and control socket in `dir`. Resolves once Litestream has synced
 * the database once. Returns `{ pid, sync(), cpuSeconds(), stop() }`.
 */
export async function startLitestream({ db, replica, dir, syncIntervalMs = 1000 }) {
  fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(dir, 'litestream.sock');
  const config = path.join(dir, 'litestream.yml');
  fs.writeFileSync(
    config,
    [
      'socket:',
      '  enabled: true',
      `  path: ${socket}`,
      'dbs:',
      `  - path: ${db}`,
      '    replica:',
      ...replicaYaml(replica, syncIntervalMs).map((l) => `      ${l}`),
      '',
    ].join('\n'),
  );
  const child = spawn(bin(), ['replicate', '-config', config], { env: litestreamEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => (log = (log + d).slice(-LOG_TAIL)));
  let lastCpu = 0;
  const cpuSeconds = () => {
    lastCpu = processCpuSeconds(child.pid) ?? lastCpu;
    return lastCpu;
  };
  /** Forces a sync; resolves to Litestream's `{ txid, replica_txid }` once the replica has it. */
  const sync = async () => {
    const deadline = Date.now() + COMMAND_DEADLINE_MS;
    for (;;) {
      try {
        return JSON.parse(await command(['sync', '-wait', '-json', '-socket', socket, db]));
      } catch (err) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`litestream sync failed: ${err.message}\n${log}`);
        await sleep(200);
      }
    }
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    cpuSeconds();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
  };
  await sync();
  return { pid: child.pid, sync, cpuSeconds, stop, log: () => log };
}

/**
 * Starts `litestream replicate -config F` in directory mode (Litestream
 * 0.5's `dbs: - dir:`): every file in `dbDir` whose name matches
 * `pattern`, found by one scan at Litestream's start, each replicated under
 * the replica's path by its own name (`<path>/<name>/ltx/...`). The config
 * goes in `configDir`. Resolves as soon as the process runs: which
 * databases the replica holds is the caller's to watch. Returns `{ pid,
 * cpuSeconds(), exit(), log(), errors(), stop() }`: `exit()` is null while
 * it runs, then `{ code, signal }`; `errors()` counts the ERROR lines it
 * logged and keeps the first few.
 */
export async function startLitestreamDirectory({ dbDir, pattern = '*.db', replica, configDir, syncIntervalMs = 1000 }) {
  fs.mkdirSync(configDir, { recursive: true });
  const config = path.join(configDir, 'litestream.yml');
  fs.writeFileSync(
    config,
    [
      'dbs:',
      `  - dir: ${dbDir}`,
      `    pattern: "${pattern}"`,
      '    replica:',
      ...replicaYaml(replica, syncIntervalMs).map((l) => `      ${l}`),
      '',
    ].join('\n'),
  );
  // Litestream 0.5 logs to stdout.
  const child = spawn(bin(), ['replicate', '-config', config], { env: litestreamEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let partial = '';
  const errors = { count: 0, first: [] };
  const onLog = (d) => {
    log = (log + d).slice(-LOG_TAIL);
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      if (!line.includes('level=ERROR')) continue;
      errors.count += 1;
      if (errors.first.length < 5) errors.first.push(line.slice(0, 500));
    }
  };
  child.stdout.on('data', onLog);
  child.stderr.on('data', onLog);
  let exit = null;
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  let lastCpu = 0;
  return {
    pid: child.pid,
    cpuSeconds: () => (lastCpu = processCpuSeconds(child.pid) ?? lastCpu),
    exit: () => exit,
    log: () => log,
    errors: () => ({ count: errors.count, first: [...errors.first] }),
    stop: async () => {
      if (exit) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
      await exited;
    },
  };
}

/**
 * Runs `litestream restore -o out url`. Resolves to `{ wallMs, cpuSeconds }`:
 * the wall time from spawn to exit and the CPU time Litestream used (read
 * by a shell that waited for it, from its children's times).
 */
export function litestreamRestore({ url, out, timeoutMs }) {
  const statFile = `${out}.cpu`;
  // The shell runs Litestream, then records its own /proc stat, whose
  // cutime/cstime fields hold the CPU time of the child it waited for.
  const script = '"$@"; s=$?; cat /proc/$$/stat > "$STAT_FILE"; exit $s';
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('sh', ['-c', script, 'sh', bin(), 'restore', '-o', out, url], {
      env: { ...litestreamEnv(), STAT_FILE: statFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (d) => (log = (log + d).slice(-LOG_TAIL)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs ?? 600_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallMs = performance.now() - started;
      let cpuSeconds = null;
      try {
        cpuSeconds = cpuSecondsFromStat(fs.readFileSync(statFile, 'utf8'), { children: true });
      } catch {
        // No stat: the shell was killed.
      }
      fs.rmSync(statFile, { force: true });
      if (code !== 0) return reject(new Error(`litestream restore exited with ${code ?? signal}: ${log.trim()}`));
      resolve({ wallMs, cpuSeconds });
    });
  });
}
