'use strict';

// Under Node 24: the SQL functions and compile options of node:sqlite's
// SQLite and of offloop's, printed as JSON for builtins.test.mjs.

const { DatabaseSync } = require('node:sqlite');
const { Database } = require('../../index.js');

const FUNCTIONS = "SELECT name || '/' || narg || '/' || type || '/' || flags AS f FROM pragma_function_list ORDER BY 1";
const PRAGMAS = ['recursive_triggers', 'foreign_keys', 'trusted_schema', 'cell_size_check'];

async function main() {
  const node = new DatabaseSync(':memory:');
  const nodeSide = {
    functions: node.prepare(FUNCTIONS).all().map((r) => r.f),
    compileOptions: node.prepare('PRAGMA compile_options').all().map((r) => r.compile_options),
    pragmas: PRAGMAS.map((p) => node.prepare(`PRAGMA ${p}`).get()[p]),
  };
  node.close();
  const db = await Database.open(':memory:');
  const offloopSide = {
    functions: (await db.prepare(FUNCTIONS).all()).map((r) => r.f),
    compileOptions: Database.compileOptions(),
    pragmas: [],
  };
  for (const p of PRAGMAS) offloopSide.pragmas.push((await db.prepare(`PRAGMA ${p}`).get())[p]);
  await db.close();
  process.stdout.write(JSON.stringify({ node: nodeSide, offloop: offloopSide }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
