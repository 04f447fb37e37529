// docs/node-sqlite.md lists every public member of node:sqlite with its
// offloop counterpart. This checks the tables against both libraries as
// they are: every member node:sqlite has (under Node 24) is listed, nothing
// else is, a member marked "yes" exists in offloop under the same name, one
// marked "partly" says how it differs, and one marked "no" is really
// missing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../engine-helpers.mjs';
import { runUnderNode24, skipWithoutNode24 } from './node24.mjs';

const STATUSES = new Set(['yes', 'partly', 'no']);

/** `{ section: [{ name, status, difference }] }` from the document. */
function readTables() {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'node-sqlite.md'), 'utf8');
  const tables = {};
  let section = null;
  for (const line of text.split('\n')) {
    const heading = /^## `([^`]+)`/.exec(line);
    if (heading) {
      section = heading[1];
      tables[section] = [];
      continue;
    }
    const row = /^\| `([^`]+)` \|([^|]*)\|([^|]*)\|([^|]*)\|$/.exec(line);
    if (row && section !== null) {
      tables[section].push({ name: row[1], status: row[3].trim(), difference: row[4].trim() });
    }
  }
  return tables;
}

test('docs/node-sqlite.md lists every node:sqlite member with a true status', { skip: skipWithoutNode24 }, () => {
  const { node, present } = runUnderNode24('members.cjs');
  const tables = readTables();
  assert.deepEqual(Object.keys(tables).sort(), Object.keys(node).sort());
  for (const [section, names] of Object.entries(node)) {
    const rows = tables[section];
    assert.deepEqual(
      rows.map((r) => r.name).sort(),
      [...names].sort(),
      `the ${section} table lists exactly node:sqlite's members`,
    );
    for (const { name, status, difference } of rows) {
      const where = `${section}: ${name}`;
      assert.ok(STATUSES.has(status), `${where}: status "${status}"`);
      const has = present[section].includes(name);
      if (status === 'yes') assert.ok(has, `${where} is marked yes but offloop has no member of that name`);
      if (status === 'no') assert.ok(!has, `${where} is marked no but offloop has it: update the table`);
      if (status === 'partly') assert.notEqual(difference, '', `${where} is marked partly without saying how`);
    }
  }
});
