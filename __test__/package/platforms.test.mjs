// Each addon that `npm run build:all` (or build-target.mjs) left in
// npm/<platform>/ installs from its release tarball as a user's would (npm
// picking it by os, cpu and libc) and passes the platform subset
// (platform/subset.mjs) under a Node of its own platform: the host's own
// natively, the arm64 builds under qemu-user with an arm64 Node, the musl
// builds with a musl Node, the Windows build under Wine with the Windows
// Node 22. Its SQLite has the compile options of the build from source.
//
// A target that was not built (CI builds the host's and win32-x64 on every
// run, the other Linux ones and macOS only with OFFLOOP_CROSS=1), or whose
// Node this machine has no way to run (.ci/tools, .ci/platform-tools; macOS
// runs only on a Mac, in the release workflow), is skipped with the reason.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { TARGETS, addonName, packagedAddon } from '../../scripts/targets.mjs';
import { install, runSubset } from './platform/install.mjs';
import { runnerFor } from './platform/runners.mjs';

const { Database } = createRequire(import.meta.url)('../../index.js');

// Under qemu-user the subset runs some ten times slower than natively.
const SUBSET_TIMEOUT_MS = 300_000;

/**
 * The compile options, less the compiler's name (gcc here, clang in zig)
 * and the mutexes, which are the platform's own threads (MUTEX_PTHREADS on
 * Unix, MUTEX_W32 on Windows).
 */
function sqliteOptions(options) {
  return options.filter((o) => !o.startsWith('COMPILER=') && !o.startsWith('MUTEX_')).sort();
}

for (const target of TARGETS) {
  const { platform } = target;
  const runner = runnerFor(platform);
  let skip = false;
  const build = target.os === 'win32' ? `node scripts/build-target.mjs ${platform}` : 'npm run build:all';
  if (!fs.existsSync(packagedAddon(platform))) skip = `npm/${platform}/ holds no build (${build})`;
  else if (runner.missing) skip = `cannot run a ${platform} Node here: ${runner.missing}`;

  test(`the ${platform} package installs and passes the subset under a ${platform} Node`, { skip }, () => {
    const installed = install(platform);
    try {
      const run = runSubset(installed.dir, runner.node, {
        timeoutMs: SUBSET_TIMEOUT_MS,
        env: runner.env,
        outputToFile: runner.outputToFile,
      });
      assert.equal(run.status, 0, run.output);
      // The status alone is not enough: under Wine, a crash handed to its
      // debugger has ended with status 0. The facts come from the last test.
      assert.ok(run.facts, `subset.mjs ended before its last test:\n${run.output}`);
      assert.equal(run.facts.arch, target.cpu);
      if (target.libc) assert.equal(run.facts.glibc === null, target.libc === 'musl', `glibc: ${run.facts.glibc}`);
      assert.deepEqual(run.facts.addons, [path.posix.join('node_modules', `offloop-${platform}`, addonName(platform))]);
      assert.equal(run.facts.sqliteVersion, Database.sqliteVersion);
      assert.deepEqual(sqliteOptions(run.facts.compileOptions), sqliteOptions(Database.compileOptions()));
    } finally {
      installed.cleanup();
    }
  });
}
