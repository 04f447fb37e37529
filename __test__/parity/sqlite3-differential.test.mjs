// Differential test: offloop/sqlite3 against the real `sqlite3` package
// (node-sqlite3 6, built from source by `npm install`).
//
// Each case of sqlite3-cases.cjs, sqlite3-backup-cases.cjs and
// sqlite3-module-cases.cjs runs twice in this process, once on each
// module, with a fresh folder each time; what its callbacks and events saw
// (values encoded type by type, errors by message, errno, code and own
// keys, `this` where it matters, the order things happened in) must be
// equal. One subtest per case.
//
// Differences kept on purpose are listed in docs/sqlite3.md; the ones a
// case would show are in KNOWN below and run as `todo`, each with its
// reason. VERSION, SOURCE_ID and VERSION_NUMBER are compared by type: the
// two packages bundle different SQLite releases.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const real = require('sqlite3');
const ours = require('offloop/sqlite3');
const cases = {
  ...require('./sqlite3-cases.cjs').cases,
  ...require('./sqlite3-backup-cases.cjs').cases,
  ...require('./sqlite3-module-cases.cjs').cases,
};

const KNOWN = {
  'module/async-resources-of-each-callbacks':
    "offloop/sqlite3 calls each()'s row and completion callbacks in the sqlite3.Statement.Each resource, so the caller's async context reaches them; sqlite3 calls them outside any resource",
  'configure/limit-and-busy-timeout':
    "offloop's engine reports a statement over LIMIT_SQL_LENGTH as 'string or blob too big' (the code's text), where SQLite's own message is 'statement too long'",
};

// A case that never finishes is a failure, not a hang.
const CASE_TIMEOUT_MS = 20_000;

async function runCase(sqlite3, name, fn) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-sqlite3-diff-'));
  const log = [];
  const open = [];
  const ctx = {
    log: (...entry) => log.push(entry),
    file: (base) => path.join(folder, base),
    done: (db) => {
      open.push(db);
      return db;
    },
  };
  let timer;
  try {
    await Promise.race([
      fn(sqlite3, ctx),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} did not finish`)), CASE_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    log.push(['case threw', err.message]);
  } finally {
    clearTimeout(timer);
    for (const db of open) await new Promise((resolve) => db.close(() => resolve()));
    fs.rmSync(folder, { recursive: true, force: true });
  }
  return log;
}

for (const [name, fn] of Object.entries(cases)) {
  test(name, { todo: KNOWN[name] }, async () => {
    const expected = await runCase(real, name, fn);
    const actual = await runCase(ours, name, fn);
    assert.deepEqual(actual, expected);
  });
}
