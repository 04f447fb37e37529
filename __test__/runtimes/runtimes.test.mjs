// The runtime subset: offloop in Bun and in Deno, each installed from npm
// at a pinned version by scripts/test-tools.mjs (scripts/runtimes.mjs).
// scenario.cjs runs the same calls in Node and in each runtime, and every
// value must equal Node's; keep-alive.cjs checks that an idle database
// lets the process exit and that a pending call keeps it alive;
// web-worker.mjs runs Deno's own Web Workers; kysely-example.mjs and
// drizzle-example.mjs run each library's own getting-started example on
// offloop's adapter, in Bun and in Node; load.cjs loads offloop where the
// runtime refuses addons. A runtime that is not installed is skipped with
// a message (an error under CI). linger.cjs checks that a quick reply is
// caught before the loop blocks, in each runtime.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { RUNTIMES, runtimeExecutable, runtimesSupported } from '../../scripts/runtimes.mjs';
import { ROOT, tempDir } from '../engine-helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ENTRY = path.join(ROOT, 'index.js');
const tmp = tempDir('runtimes');
after(() => tmp.cleanup());

/** Runs `script` (in this folder) with `command`; a hang is killed. */
function run(command, args, script, scriptArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, path.join(here, script), ...scriptArgs], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

let folders = 0;
function folder() {
  const dir = path.join(tmp.dir, `run-${folders++}`);
  fs.mkdirSync(dir);
  return dir;
}

async function scenario(command, args) {
  const child = await run(command, args, 'scenario.cjs', [ENTRY, folder()]);
  assert.equal(child.signal, null, `the scenario did not end by itself: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  return JSON.parse(child.stdout);
}

let fromNode = null;
function nodeSeen() {
  fromNode ??= scenario(process.execPath, []);
  return fromNode;
}

test('in Node, the scenario completes on the libuv wake-up', async () => {
  assert.equal((await nodeSeen()).waker, 'libuv');
});

// A linger needs a CPU besides the JS thread's: a process confined to one
// never lingers (src/node/linger.rs).
const lingerSkip = os.availableParallelism() < 2 && 'one CPU: no linger';

/** What linger.cjs saw, run with `command args…`. */
async function lingerSeen(command, args) {
  const child = await run(command, args, 'linger.cjs', [ENTRY, path.join(folder(), 'linger.db')]);
  assert.equal(child.signal, null, `the process did not exit by itself: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  return JSON.parse(child.stdout);
}

test('in Node, a reply that comes within microseconds is drained by a linger before the loop blocks, not by a wake-up', { skip: lingerSkip }, async () => {
  assert.deepEqual(await lingerSeen(process.execPath, []), { waker: 'libuv', lingered: true, woken: true, wrong: 0 });
});

for (const runtime of RUNTIMES) {
  const executable = runtimesSupported() ? runtimeExecutable(runtime) : null;
  const missing = `${runtime.name} ${runtime.version} is not installed: run node scripts/test-tools.mjs`;
  if (executable === null && process.env.CI && runtimesSupported()) throw new Error(missing);
  const skip = executable === null ? missing : false;

  test(`${runtime.name}: every value of the scenario equals Node's, on the thread-safe function's wake-up`, { skip }, async () => {
    const [seen, node] = await Promise.all([scenario(executable, runtime.args), nodeSeen()]);
    assert.equal(seen.waker, 'threadsafe-function');
    for (const key of Object.keys(node)) {
      if (key !== 'waker') assert.deepEqual(seen[key], node[key], `${key} differs from Node's`);
    }
    assert.deepEqual(Object.keys(seen), Object.keys(node));
  });

  test(`${runtime.name}: a reply that comes within microseconds is drained by a linger before the loop blocks, not by a wake-up`, { skip: skip || lingerSkip }, async () => {
    assert.deepEqual(await lingerSeen(executable, runtime.args), { waker: 'threadsafe-function', lingered: true, woken: true, wrong: 0 });
  });

  test(`${runtime.name}: an idle open database lets the process exit`, { skip }, async () => {
    const child = await run(executable, runtime.args, 'keep-alive.cjs', ['idle', ENTRY, path.join(folder(), 'idle.db')]);
    assert.equal(child.signal, null, `the process did not exit by itself: ${child.stderr}`);
    assert.equal(child.code, 0, child.stderr);
    assert.equal(child.stdout, 'idle 1\n');
  });

  test(`${runtime.name}: a pending call alone keeps the process alive until it settles`, { skip }, async () => {
    const child = await run(executable, runtime.args, 'keep-alive.cjs', ['pending', ENTRY, path.join(folder(), 'pending.db')]);
    assert.equal(child.signal, null, `the process did not exit by itself: ${child.stderr}`);
    assert.equal(child.code, 0, child.stderr);
    assert.equal(child.stdout, 'settled 2000000\n');
  });
}

const deno = RUNTIMES.find((r) => r.name === 'deno');
const denoExecutable = runtimesSupported() ? runtimeExecutable(deno) : null;

test('deno: two Web Workers and the main thread use offloop at once, each on its own database', { skip: denoExecutable === null && 'deno is not installed' }, async () => {
  const child = await run(denoExecutable, deno.args, 'web-worker.mjs', [ENTRY, folder()]);
  assert.equal(child.signal, null, `the workers did not end by themselves: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  const ids = Array.from({ length: 50 }, (_, i) => i + 1);
  const each = { ids, count: 50, sum: (50 * 49) / 2 };
  assert.deepEqual(JSON.parse(child.stdout), [each, each, each]);
});

const bun = RUNTIMES.find((r) => r.name === 'bun');
const bunExecutable = runtimesSupported() ? runtimeExecutable(bun) : null;

/** What an example printed, run with `command` on a database file of its own. */
async function example(command, args, script) {
  const child = await run(command, args, script, [path.join(folder(), 'example.db')]);
  assert.equal(child.signal, null, `the example did not end by itself: ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  return JSON.parse(child.stdout);
}

const jennifer = (id, gender) => ({ id, first_name: 'Jennifer', last_name: 'Aniston', gender, created_at: 'a current_timestamp' });
const EXAMPLES = [
  {
    library: 'Kysely',
    script: 'kysely-example.mjs',
    adapter: 'offloop/kysely',
    expected: {
      'should find a person with a given id': { undefined: true },
      'should find all people named Arnold': [],
      'should update gender of a person with a given id': { undefined: true },
      'should create a person': jennifer(1, 'woman'),
      'should delete a person with a given id': { undefined: true },
      created: jennifer(2, 'woman'),
      foundById: jennifer(2, 'woman'),
      foundByName: [jennifer(2, 'woman')],
      foundWithNullLastName: [],
      updated: jennifer(2, 'female'),
      deleted: jennifer(2, 'female'),
      afterDelete: [],
      tables: [],
    },
  },
  {
    library: 'Drizzle',
    script: 'drizzle-example.mjs',
    adapter: 'offloop/drizzle',
    expected: [
      ['New user created!'],
      ['Getting all users from the database: ', [{ id: 1, name: 'John', age: 30, email: 'john@example.com' }]],
      ['User info updated!'],
      ['After the update: ', [{ id: 1, name: 'John', age: 31, email: 'john@example.com' }]],
      ['User deleted!'],
      ['After the delete: ', []],
    ],
  },
];

for (const { library, script, adapter, expected } of EXAMPLES) {
  test(`bun: ${library}'s own SQLite example runs on ${adapter} and gives what it gives in Node`, { skip: bunExecutable === null && 'bun is not installed' }, async () => {
    const [inBun, inNode] = await Promise.all([example(bunExecutable, bun.args, script), example(process.execPath, [], script)]);
    assert.deepEqual(inNode, expected);
    assert.deepEqual(inBun, inNode);
  });
}

/** Loads offloop with `command args…`: what it printed and how it ended. */
async function load(command, args) {
  const child = await run(command, args, 'load.cjs', [ENTRY]);
  assert.equal(child.signal, null, `loading did not end by itself: ${child.stderr}`);
  return child;
}

// Where a runtime refuses the addon itself: Deno without --allow-ffi, Node
// with --no-addons (Bun has no such switch). The addon's own refusal, when
// no wake-up can be set up (src/node/waker.rs), is reached in none of the
// three: each has the thread-safe functions it falls back on.
test('deno: without --allow-ffi, loading offloop fails at once, naming Deno, its version and the flag it needs', { skip: denoExecutable === null && 'deno is not installed' }, async () => {
  const args = deno.args.filter((a) => a !== '--allow-ffi');
  const child = await load(denoExecutable, args);
  assert.notEqual(child.code, 0);
  assert.equal(child.stdout, '');
  assert.match(child.stderr, new RegExp(`offloop could not load its native addon for linux-x64-gnu in Deno ${deno.version.replace(/\./g, '\\.')}:`));
  assert.match(child.stderr, /--allow-ffi/);
  assert.equal((await load(denoExecutable, deno.args)).stdout, 'loaded\n');
});

test('node: with --no-addons, loading offloop fails at once, naming Node.js, its version and that addons are disabled', async () => {
  const child = await load(process.execPath, ['--no-addons']);
  assert.notEqual(child.code, 0);
  assert.equal(child.stdout, '');
  assert.match(child.stderr, new RegExp(`offloop could not load its native addon for .* in Node\\.js ${process.versions.node.replace(/\./g, '\\.')}:`));
  assert.match(child.stderr, /loading addons is disabled/);
  assert.match(child.stderr, /ERR_OFFLOOP_NATIVE_ADDON/);
});
