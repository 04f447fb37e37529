// Row objects have node:sqlite's shape on every run of a statement, from
// the first to the last (the addon caches a column list's names after its
// first use, so later runs take another path): a null prototype, the
// columns as own properties in order, a duplicate name's last value in its
// first position, and names that mean something to JS (`__proto__`,
// `constructor`, digits, quotes) kept as plain data.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Database, ROOT, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('rows');
after(() => tmp.cleanup());

/** Enough runs for every cache on the way to be warm. */
const RUNS = 8;

/** Own keys in order, and the values, of a row: what a caller can see. */
function shape(row) {
  return { proto: Object.getPrototypeOf(row), entries: Reflect.ownKeys(row).map((k) => [k, row[k]]) };
}

const CASES = [
  {
    name: 'plain names',
    sql: "SELECT 1 AS id, 'a' AS name, 2.5 AS score",
    entries: [['id', 1], ['name', 'a'], ['score', 2.5]],
  },
  {
    name: 'a duplicate name: the last value, in the first position',
    sql: "SELECT 1 AS a, 2 AS b, 3 AS a",
    entries: [['a', 3], ['b', 2]],
  },
  {
    name: '__proto__ as a column is data, not the prototype',
    sql: "SELECT 'p' AS __proto__, 7 AS x",
    entries: [['__proto__', 'p'], ['x', 7]],
  },
  {
    name: 'names JS gives meaning to',
    sql: `SELECT 1 AS "constructor", 2 AS "toString", 3 AS "hasOwnProperty", 4 AS "valueOf"`,
    entries: [['constructor', 1], ['toString', 2], ['hasOwnProperty', 3], ['valueOf', 4]],
  },
  {
    name: 'digits sort first, as in any object',
    sql: `SELECT 'z' AS "b", 'one' AS "1", 'zero' AS "0"`,
    entries: [['0', 'zero'], ['1', 'one'], ['b', 'z']],
  },
  {
    name: 'quotes, backslashes, newlines, an empty name and non-ASCII',
    sql: `SELECT 1 AS "it's", 2 AS "back\\slash", 3 AS "line
break", 4 AS "", 5 AS "naïve ✓", 6 AS "\u2028"`,
    entries: [["it's", 1], ['back\\slash', 2], ['line\nbreak', 3], ['', 4], ['naïve ✓', 5], ['\u2028', 6]],
  },
  {
    name: 'no columns',
    sql: 'SELECT * FROM (SELECT 1) WHERE 0',
    entries: null,
  },
];

for (const c of CASES) {
  test(`rows keep node:sqlite's shape on every run, first to last: ${c.name}`, async () => {
    const db = await Database.open(tmp.file());
    try {
      const stmt = db.prepare(c.sql);
      const expected = c.entries === null ? null : { proto: null, entries: c.entries };
      for (let run = 0; run < RUNS; run++) {
        const got = await stmt.get();
        assert.deepEqual(got === undefined ? null : shape(got), expected, `get, run ${run + 1}`);
        const all = await stmt.all();
        assert.deepEqual(all.map(shape), expected === null ? [] : [expected], `all, run ${run + 1}`);
        const iterated = [];
        for await (const row of stmt.iterate()) iterated.push(shape(row));
        assert.deepEqual(iterated, expected === null ? [] : [expected], `iterate, run ${run + 1}`);
      }
    } finally {
      await db.close();
    }
  });
}

test('many rows of one statement, called many times at once, each row its own values', async () => {
  const db = await Database.open(tmp.file());
  try {
    await db.exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER);
      WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200)
      INSERT INTO t SELECT x, 'v' || x, x * 3 FROM c;`);
    const stmt = db.prepare('SELECT id, a, b FROM t WHERE id >= ? ORDER BY id LIMIT 50');
    const starts = Array.from({ length: 64 }, (_, i) => 1 + (i * 7) % 150);
    const results = await Promise.all(starts.map((from) => stmt.all(from)));
    for (const [i, rows] of results.entries()) {
      assert.equal(rows.length, 50);
      for (const [k, row] of rows.entries()) {
        const id = starts[i] + k;
        assert.deepEqual(shape(row), { proto: null, entries: [['id', id], ['a', `v${id}`], ['b', id * 3]] });
      }
    }
  } finally {
    await db.close();
  }
});

test('rows keep their shape in a process that refuses code made from strings', () => {
  // lib/rows.js compiles an object literal per column list; where that is
  // refused, rows are built name by name, the same.
  const script = `
    const { Database } = require(${JSON.stringify(path.join(ROOT, 'index.js'))});
    (async () => {
      const db = await Database.open(':memory:');
      const stmt = db.prepare("SELECT 1 AS a, 'x' AS b, 3 AS a");
      const runs = [];
      for (let run = 0; run < ${RUNS}; run++) {
        for (const row of [await stmt.get(), ...(await stmt.all())]) {
          runs.push([Object.getPrototypeOf(row) === null, Reflect.ownKeys(row).map((k) => [k, row[k]])]);
        }
      }
      await db.close();
      console.log(JSON.stringify(runs));
    })();`;
  const out = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8' });
  const runs = JSON.parse(out);
  assert.equal(runs.length, 2 * RUNS);
  for (const run of runs) assert.deepEqual(run, [true, [['a', 3], ['b', 'x']]]);
});

/** The names of this process's threads. */
function threadNames() {
  return fs.readdirSync('/proc/self/task').map((tid) => {
    try {
      return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      return null;
    }
  });
}

test('the rows of a large result are freed on an offloop-sweeper thread, which ends once idle', { skip: !fs.existsSync('/proc/self/task') }, async () => {
  // src/node/sweeper.rs: the JS thread hands the rows it converted to the
  // sweeper once a drain held at least 1,024 values, instead of freeing
  // them itself; the sweeper ends after a second with nothing to free.
  const db = await Database.open(tmp.file());
  try {
    const stmt = db.prepare(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) SELECT x, printf('v%d', x) AS v FROM c",
    );
    const sweeping = () => threadNames().includes('offloop-sweeper');
    const idle = async () => {
      for (let i = 0; i < 100 && sweeping(); i++) await new Promise((r) => setTimeout(r, 50));
      return !sweeping();
    };
    // One may be left from an earlier test.
    assert.ok(await idle(), 'no sweeper left before');
    for (let run = 0; run < 2; run++) {
      const rows = await stmt.all();
      assert.deepEqual(rows.at(-1), { __proto__: null, x: 2000, v: 'v2000' });
      // The drain hands its rows over once their continuations ran, and a
      // new thread takes its name once it runs.
      for (let i = 0; i < 100 && !sweeping(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(sweeping(), `run ${run + 1}: ${threadNames().join(', ')}`);
      assert.ok(await idle(), `run ${run + 1}: the sweeper ended once idle`);
    }
  } finally {
    await db.close();
  }
});
