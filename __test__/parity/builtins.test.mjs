// offloop's SQLite is built like node:sqlite's (Node 24): the same SQL
// functions and the same compile options, apart from the differences listed
// here on purpose. A new difference, either way, fails the test.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Database } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

// Functions only offloop has: libsqlite3-sys builds with SQLITE_SOUNDEX.
const OFFLOOP_ONLY_FUNCTIONS = ['soundex/1/s/2099200'];

// Compile options that differ, and why (.cargo/config.toml explains the
// flags offloop sets).
const NODE_ONLY_OPTIONS = [
  /^COMPILER=/, // another compiler
  /^MAX_MMAP_SIZE=0x7fff0000$/, // offloop raises the mmap ceiling to 64 GiB
  // Node's build names it, yet `PRAGMA recursive_triggers` reads 0 there as
  // here (compared below), so leaving it out changes nothing observable.
  /^DEFAULT_RECURSIVE_TRIGGERS$/,
];
const OFFLOOP_ONLY_OPTIONS = [
  /^COMPILER=/,
  /^MAX_MMAP_SIZE=0x1000000000$/,
  // libsqlite3-sys's own flags. Foreign keys are on by default in both
  // (node:sqlite turns them on per connection); API armor makes misuse an
  // error, not a crash; extensions load only when allowed (see
  // allowExtension); STAT4 gives the planner better statistics; URI
  // filenames are always accepted (node:sqlite accepts `file:` URLs too).
  /^DEFAULT_FOREIGN_KEYS$/,
  /^ENABLE_API_ARMOR$/,
  // sqlite_dbpage, through which a follower writes the pages of each TXID.
  /^ENABLE_DBPAGE_VTAB$/,
  /^ENABLE_LOAD_EXTENSION$/,
  /^ENABLE_STAT4$/,
  /^HAVE_ISNAN$/,
  /^SOUNDEX$/,
  /^USE_URI$/,
];

const minus = (a, b) => a.filter((x) => !b.includes(x));

let sides = null;
let failure = null;
if (!skipWithoutNode24) {
  try {
    sides = runUnderNode24('builtins.cjs');
  } catch (err) {
    failure = err;
  }
}

test('the SQL functions are node:sqlite’s, plus soundex', { skip: skipWithoutNode24 }, () => {
  assert.equal(failure, null);
  assert.deepEqual(minus(sides.node.functions, sides.offloop.functions), []);
  assert.deepEqual(minus(sides.offloop.functions, sides.node.functions), OFFLOOP_ONLY_FUNCTIONS);
});

test('the compile options are node:sqlite’s, apart from the listed ones', { skip: skipWithoutNode24 }, () => {
  assert.equal(failure, null);
  const unlisted = (options, listed) => options.filter((o) => !listed.some((re) => re.test(o)));
  assert.deepEqual(unlisted(minus(sides.node.compileOptions, sides.offloop.compileOptions), NODE_ONLY_OPTIONS), []);
  assert.deepEqual(
    unlisted(minus(sides.offloop.compileOptions, sides.node.compileOptions), OFFLOOP_ONLY_OPTIONS),
    [],
  );
});

test('connection defaults that come from compile options match node:sqlite', { skip: skipWithoutNode24 }, () => {
  assert.equal(failure, null);
  assert.deepEqual(sides.offloop.pragmas, sides.node.pragmas);
});

test('math and percentile functions run on readers and on the writer', async () => {
  const db = await Database.open(':memory:');
  try {
    const row = await db
      .prepare('SELECT sqrt(16) AS s, pow(2, 10) AS p, ln(1) AS l, ceil(1.2) AS c, round(pi(), 5) AS pi')
      .get();
    assert.deepEqual({ ...row }, { s: 4, p: 1024, l: 0, c: 2, pi: 3.14159 });
    await db.exec('CREATE TABLE v(x); INSERT INTO v VALUES (1), (2), (3), (10)');
    const stats = await db.prepare('SELECT median(x) AS m, percentile(x, 25) AS p25 FROM v').get();
    assert.deepEqual({ ...stats }, { m: 2.5, p25: 1.75 });
  } finally {
    await db.close();
  }
});
