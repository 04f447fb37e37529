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
import { isDeepStrictEqual } from 'node:util';
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

// ---------------------------------------------------------------------------
// The defaults of a fresh database: everything a user can read of one
// without changing it. Pragmas that act when read bare are left out.
const ACTING_PRAGMAS = new Set(['incremental_vacuum', 'optimize', 'shrink_memory', 'wal_checkpoint']);

// What differs, each for its reason (docs/sqlite3.md, "What offloop/sqlite3
// does differently from the core, and why", lists them for users).
const DEFAULTS_THAT_DIFFER = {
  'PRAGMA journal_mode': "WAL, offloop's mode for every file database: readers read while the writer writes",
  'PRAGMA synchronous': 'NORMAL, with WAL: a commit survives a crash of the process, and of the machine once the next checkpoint ran',
  'PRAGMA wal_autocheckpoint': "0 on a reader: offloop's checkpointer thread checkpoints, and the writer's backstop is its own",
  'PRAGMA journal_size_limit': "offloop's own limit, so that the WAL shrinks back after a burst of writes",
  'PRAGMA page_count': '1 where sqlite3 reads 0: setting WAL writes the first page of a new file at the open',
  'PRAGMA data_version': 'a counter whose value means nothing but a change since the last read on the same connection: offloop set WAL on another connection first',
  'PRAGMA compile_options': 'another SQLite release, built with more options (sessions, geopoly, percentile, dbpage ...)',
};

async function defaultsOf(sqlite3) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-sqlite3-defaults-'));
  const db = await new Promise((resolve, reject) => {
    const d = new sqlite3.Database(path.join(folder, 'fresh.db'), (err) => (err ? reject(err) : resolve(d)));
  });
  const all = (sql) => new Promise((resolve) => db.all(sql, (err, rows) => resolve(err ? { error: err.message } : rows)));
  try {
    const seen = {};
    for (const { name } of await all('PRAGMA pragma_list')) {
      if (ACTING_PRAGMAS.has(name) || name === 'function_list' || name === 'module_list') continue;
      const rows = await all(`PRAGMA ${name}`);
      // The file's path is the folder's: compare its name.
      seen[`PRAGMA ${name}`] = name === 'database_list' ? rows.map((r) => ({ ...r, file: path.basename(r.file) })) : rows;
    }
    const functions = await all('SELECT name, type, narg FROM pragma_function_list');
    const modules = await all('SELECT name FROM pragma_module_list');
    seen.like = await all("SELECT 'a' LIKE 'A' AS ascii, 'ä' LIKE 'Ä' AS beyond, 'a' GLOB 'A' AS glob");
    seen.doubleQuoted = await all('SELECT "no such column" AS v');
    return {
      seen,
      functions: new Set(functions.map((f) => `${f.name}/${f.narg} (${f.type})`)),
      modules: new Set(modules.map((m) => m.name)),
    };
  } finally {
    await new Promise((resolve) => db.close(resolve));
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

test('a fresh database reads as one of sqlite3: every pragma read bare, LIKE, double-quoted strings; only the listed ones differ', async () => {
  const expected = await defaultsOf(real);
  const actual = await defaultsOf(ours);
  const names = new Set([...Object.keys(expected.seen), ...Object.keys(actual.seen)]);
  const differ = [...names].filter((name) => !isDeepStrictEqual(expected.seen[name], actual.seen[name])).sort();
  assert.deepEqual(differ, Object.keys(DEFAULTS_THAT_DIFFER).sort());
});

test('every function and virtual table module of sqlite3 is there; the extras are the listed ones', async () => {
  const expected = await defaultsOf(real);
  const actual = await defaultsOf(ours);
  assert.deepEqual([...expected.functions].filter((f) => !actual.functions.has(f)), []);
  assert.deepEqual([...expected.modules].filter((m) => !actual.modules.has(m)), []);
  const extraFunctions = [...new Set([...actual.functions].filter((f) => !expected.functions.has(f)).map((f) => f.split('/')[0]))].sort();
  assert.deepEqual(extraFunctions, [
    'geopoly_area', 'geopoly_bbox', 'geopoly_blob', 'geopoly_ccw', 'geopoly_contains_point', 'geopoly_debug',
    'geopoly_group_bbox', 'geopoly_json', 'geopoly_overlap', 'geopoly_regular', 'geopoly_svg', 'geopoly_within',
    'geopoly_xform', 'median', 'percentile', 'percentile_cont', 'percentile_disc', 'soundex',
  ]);
  assert.deepEqual([...actual.modules].filter((m) => !expected.modules.has(m)).sort(), ['geopoly', 'sqlite_dbpage']);
});
