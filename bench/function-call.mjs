// function-call — what one call of a JS user function costs. SQLite calls
// it on a SQLite thread, and each call is a round trip to the JS thread and
// back (src/node/functions.rs). Measured as a query that calls the function
// once per row over N rows, minus the same query with the function's work
// written in SQL; node:sqlite (which calls the function on the JS thread
// itself) is measured the same way when Node 24 is installed.
//
//   npm run bench -- function-call [--rows N] [--runs N]
//
// Prints the median per-call cost of each; writes no result files.

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { nodes, ROOT } from './lib/paths.mjs';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '20000' }, runs: { type: 'string', default: '5' }, child: { type: 'string' } },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
const SERIES = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)';
const WITH_FUNCTION = `${SERIES} SELECT sum(plus_one(x)) AS s FROM c`;
const IN_SQL = `${SERIES} SELECT sum(x + 1) AS s FROM c`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median per-row nanoseconds of `query()` over RUNS runs. */
async function perRow(query) {
  await query();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    await query();
    times.push(Number(process.hrtime.bigint() - start) / ROWS);
  }
  return median(times);
}

async function offloop() {
  const { Database } = (await import('node:module')).createRequire(path.join(ROOT, 'package.json'))(ROOT);
  const db = await Database.open(path.join(os.tmpdir(), `offloop-function-call-${process.pid}.db`), { readers: 1 });
  db.function('plus_one', { deterministic: true }, (x) => x + 1);
  const withFn = db.prepare(WITH_FUNCTION);
  const inSql = db.prepare(IN_SQL);
  const fn = await perRow(() => withFn.get(ROWS));
  const sql = await perRow(() => inSql.get(ROWS));
  await db.close();
  return { fn, sql };
}

async function nodeSqlite() {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(':memory:');
  db.function('plus_one', { deterministic: true }, (x) => x + 1);
  const withFn = db.prepare(WITH_FUNCTION);
  const inSql = db.prepare(IN_SQL);
  const fn = await perRow(() => withFn.get(ROWS));
  const sql = await perRow(() => inSql.get(ROWS));
  db.close();
  return { fn, sql };
}

function report(name, { fn, sql }) {
  console.log(
    `${name.padEnd(12)} per call ${((fn - sql) / 1000).toFixed(2)} µs ` +
      `(query with the function ${(fn / 1000).toFixed(2)} µs/row, in SQL ${(sql / 1000).toFixed(2)} µs/row)`,
  );
}

if (values.child === 'node-sqlite') {
  process.stdout.write(JSON.stringify(await nodeSqlite()));
} else {
  console.log(`${ROWS} rows, median of ${RUNS} runs`);
  report('offloop', await offloop());
  const { node24 } = nodes();
  if (node24 !== null) {
    const child = spawnSync(node24.bin, [fileURLToPath(import.meta.url), '--child', 'node-sqlite', '--rows', String(ROWS), '--runs', String(RUNS)], {
      encoding: 'utf8',
    });
    if (child.status === 0) report('node:sqlite', JSON.parse(child.stdout));
    else console.log(`node:sqlite: failed\n${child.stderr}`);
  }
}
