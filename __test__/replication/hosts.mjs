// Hosts for the lease and failover tests: writer processes
// (lease-writer.mjs) on this host or on hosts made of Linux network
// namespaces, and the hosts themselves: each a namespace with one veth
// link to a bridge in a namespace of its own, addressed in 10.231.0.0/24.
// Those addresses exist only inside the namespaces this file creates; it
// adds no device, address or route to the machine's own network, and
// deletes every namespace it made, on success, failure or exit.
//
// It owns the namespaces, their links and the processes it starts in them.
// It never decides what a test checks.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { S3_KEYS, findTool, toolEnv } from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Every wait for a process gives up after this long.
const DEADLINE_MS = 30_000;
const SUBNET = '10.231.0';
// The S3 server's port on its host.
const S3_PORT = 9000;

/** A writer process (lease-writer.mjs) opening `file` on `url` with `options`, on `host` (null: this host). */
export class Writer {
  constructor(file, url, options, host = null) {
    this.host = host;
    this.messages = [];
    this.waiters = [];
    this.rounds = 0;
    const args = [path.join(HERE, 'lease-writer.mjs'), file, url, JSON.stringify(options)];
    const [cmd, argv] = host === null ? [process.execPath, args] : ['ip', ['netns', 'exec', host.ns, process.execPath, ...args]];
    this.proc = spawn(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: toolEnv() });
    this.proc.on('message', (m) => {
      this.messages.push(m);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** The first message `pick` accepts, taken from those received. */
  async next(pick, deadlineMs = DEADLINE_MS) {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const i = this.messages.findIndex(pick);
      if (i >= 0) return this.messages.splice(i, 1)[0];
      if (Date.now() > deadline) throw new Error(`the writer did not answer: ${JSON.stringify(this.messages)}`);
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error('the writer exited');
      await Promise.race([new Promise((resolve) => this.waiters.push(resolve)), sleep(100)]);
    }
  }

  send(msg) {
    this.proc.send(msg);
  }

  /**
   * Runs `n` concurrent inserts in the process; resolves once each is
   * acknowledged or refused. Each round has an id of its own, which the
   * process echoes: a round asked for earlier without waiting (a bare
   * `send({ write })`) never stands in for this one.
   */
  async write(n, deadlineMs = DEADLINE_MS) {
    const round = ++this.rounds;
    this.send({ write: n, round });
    await this.next((m) => m.round === round, deadlineMs);
  }

  /** stats().replica, asked of the process. */
  async stats() {
    return (await this.statsOf()).stats;
  }

  /** `{ stats, follow }`: stats().replica and stats().follow, asked of the process. */
  async statsOf() {
    this.send({ stats: true });
    return this.next((m) => m.stats !== undefined);
  }

  acked() {
    return this.messages.filter((m) => m.acked).map((m) => m.acked);
  }

  /** The codes of the writes refused so far. */
  refusedCodes() {
    return this.messages.filter((m) => m.refused).map((m) => m.refused);
  }

  async kill(signal = 'SIGKILL') {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = once(this.proc, 'exit');
    this.proc.kill(signal);
    await exited;
  }
}

/** false when namespaces can be made here; else why not (and under CI, an error). */
export function netnsSkip() {
  let why = null;
  if (process.platform !== 'linux') why = 'network namespaces are Linux only';
  else if (process.getuid?.() !== 0) why = 'making network namespaces needs root';
  else {
    try {
      execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    } catch {
      why = 'the ip command is needed';
    }
  }
  if (why !== null && process.env.CI) throw new Error(`the failover tests cannot run: ${why}`);
  return why ?? false;
}

function ip(...args) {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** One host: a network namespace with one link (eth0) to the others. */
class Host {
  constructor(ns, address, sw, port) {
    this.ns = ns;
    this.address = address;
    // The bridge's end of this host's link, in the switch's namespace.
    this.sw = sw;
    this.port = port;
  }

  /** Runs `cmd args` on this host and resolves to its stdout. */
  run(cmd, args, env = {}) {
    const child = spawn('ip', ['netns', 'exec', this.ns, cmd, ...args], { env: toolEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(Buffer.concat(out).toString());
        else reject(new Error(`${cmd} ${args.join(' ')} on ${this.ns}: exit ${code}: ${Buffer.concat(err)}`));
      });
    });
  }

  /**
   * Cuts this host off (a partition): the bridge's end of its link goes
   * down, as a cable pulled at the switch, so its packets go nowhere and
   * its own interface stays configured. `heal` plugs it back.
   */
  partition() {
    ip('-n', this.sw, 'link', 'set', this.port, 'down');
  }

  heal() {
    ip('-n', this.sw, 'link', 'set', this.port, 'up');
  }
}

/**
 * Makes hosts named `names`, joined to one bridge; resolves to
 * `{ hosts: { name: Host }, destroy() }`. `destroy` deletes every
 * namespace made (processes the test started there must be ended first).
 */
export function createHosts(names) {
  const tag = `ofl${process.pid % 100000}`;
  const made = [];
  const destroy = () => {
    for (const ns of made.splice(0).reverse()) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // Gone already.
      }
    }
  };
  process.once('exit', destroy);
  try {
    const sw = `${tag}-switch`;
    ip('netns', 'add', sw);
    made.push(sw);
    ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', sw, 'link', 'set', 'br0', 'up');
    const hosts = {};
    names.forEach((name, i) => {
      const ns = `${tag}-${name}`;
      ip('netns', 'add', ns);
      made.push(ns);
      const port = `p${i}`;
      ip('-n', sw, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      ip('-n', sw, 'link', 'set', port, 'master', 'br0');
      ip('-n', sw, 'link', 'set', port, 'up');
      const address = `${SUBNET}.${i + 1}`;
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      hosts[name] = new Host(ns, address, sw, port);
    });
    return { hosts, destroy };
  } catch (err) {
    destroy();
    throw err;
  }
}

/**
 * Starts moto on `host` with one versioned bucket `bucket` (every PUT of a
 * key keeps a version, so a test can tell whether a key was ever written
 * twice). Resolves to `{ endpoint, stop, versions(prefix) }`.
 */
export async function startS3On(host, bucket) {
  const moto = spawn('ip', ['netns', 'exec', host.ns, findTool('s3_test_server'), '-H', host.address, '-p', String(S3_PORT)], {
    env: toolEnv(),
    stdio: 'ignore',
  });
  const endpoint = `http://${host.address}:${S3_PORT}`;
  // Requests to moto are made from its own host, by node.
  const request = (method, target, body = null) =>
    host.run(process.execPath, [
      '-e',
      `fetch(${JSON.stringify(endpoint + target)}, { method: ${JSON.stringify(method)}, body: ${JSON.stringify(body)} })` +
        '.then(async (r) => { process.stdout.write(await r.text()); process.exit(r.ok ? 0 : 1); })',
    ]);
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    try {
      await request('GET', '/');
      break;
    } catch (err) {
      if (Date.now() > deadline || moto.exitCode !== null) {
        moto.kill('SIGKILL');
        throw new Error(`moto did not start: ${err.message}`);
      }
      await sleep(200);
    }
  }
  await request('PUT', `/${bucket}`);
  await request(
    'PUT',
    `/${bucket}?versioning`,
    '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>',
  );
  const stop = async () => {
    if (moto.exitCode !== null || moto.signalCode !== null) return;
    const exited = once(moto, 'exit');
    moto.kill('SIGKILL');
    await exited;
  };
  /** Every version of every key under `prefix`, as `{ key: count }`. */
  const versions = async (prefix) => {
    const xml = await request('GET', `/${bucket}?versions&prefix=${encodeURIComponent(prefix)}&max-keys=100000`);
    const counts = {};
    for (const m of xml.matchAll(/<Version>[\s\S]*?<Key>([^<]+)<\/Key>[\s\S]*?<\/Version>/g)) {
      counts[m[1]] = (counts[m[1]] ?? 0) + 1;
    }
    return counts;
  };
  return { endpoint, stop, versions };
}

/** The S3 options of a writer on any host reaching `endpoint`. */
export function s3Options(endpoint) {
  return { endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_KEYS };
}
