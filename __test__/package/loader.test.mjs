// The loader (native.js) picks the platform package of every target, with
// process.platform, process.arch and the C library made to look like that
// target's: each run loads native.js afresh in a child Node whose module
// loader answers for the platform packages (their package.json and their
// addon) and records what was asked for. No addon is loaded.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT, TARGETS } from '../../scripts/targets.mjs';

const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NATIVE = path.join(ROOT, 'native.js');

/** Loads native.js as on `os`/`cpu`/`libc`; returns the requests it made and what it returned. */
function loadAs({ os, cpu, libc }) {
  const child = `
    const Module = require('node:module');
    Object.defineProperty(process, 'platform', { value: ${JSON.stringify(os)} });
    Object.defineProperty(process, 'arch', { value: ${JSON.stringify(cpu)} });
    const glibc = ${JSON.stringify(libc === 'glibc' ? '2.36' : undefined)};
    process.report.getReport = () => ({ header: glibc ? { glibcVersionRuntime: glibc } : {} });
    const asked = [];
    const load = Module._load;
    Module._load = function (request, parent, isMain) {
      if (request.startsWith('offloop-')) {
        asked.push(request);
        if (request.endsWith('/package.json')) return { version: ${JSON.stringify(version)} };
        return { loadedFrom: request };
      }
      return load.call(this, request, parent, isMain);
    };
    // Only the platform package may answer: no build from source beside it.
    const fs = require('node:fs');
    const exists = fs.existsSync;
    fs.existsSync = (file) => (String(file).endsWith('.node') ? false : exists(file));
    const addon = require(${JSON.stringify(NATIVE)});
    process.stdout.write(JSON.stringify({ asked, addon }));
  `;
  const result = spawnSync(process.execPath, ['-e', child], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

for (const target of TARGETS) {
  test(`on ${target.os} ${target.cpu}${target.libc ? ` with ${target.libc}` : ''}, the loader loads offloop-${target.platform}`, () => {
    const pkg = `offloop-${target.platform}`;
    assert.deepEqual(loadAs(target), { asked: [`${pkg}/package.json`, pkg], addon: { loadedFrom: pkg } });
  });
}

test('on a platform without a prebuilt package, the loader says so and names the ones there are', () => {
  const child = `
    Object.defineProperty(process, 'platform', { value: 'freebsd' });
    Object.defineProperty(process, 'arch', { value: 'x64' });
    try { require(${JSON.stringify(NATIVE)}); } catch (err) { process.stdout.write(JSON.stringify({ code: err.code, message: err.message })); }
  `;
  const result = spawnSync(process.execPath, ['-e', child], { encoding: 'utf8' });
  const { code, message } = JSON.parse(result.stdout);
  assert.equal(code, 'ERR_OFFLOOP_NATIVE_ADDON');
  assert.match(message, /no prebuilt binary for freebsd-x64 \(there are: linux-x64-gnu, .*win32-x64-msvc\)/);
});
