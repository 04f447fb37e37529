// The wire between lib/ and the addon is named once on each side
// (lib/protocol.js and src/node/protocol.rs); these tests fail when the two
// disagree on a name, a value or the order.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const protocol = require('../../lib/protocol.js');
const native = require('../../native.js');

const fromJs = () => Object.entries(protocol).map(([group, names]) => [group, Object.entries(names)]);

test('lib/protocol.js and the addon name the same groups in the same order', () => {
  assert.deepEqual(
    fromJs().map(([group]) => group),
    native.protocol().map(([group]) => group),
  );
});

test('every group has the same names, values and order on both sides', () => {
  const rust = new Map(native.protocol());
  for (const [group, entries] of fromJs()) {
    assert.deepEqual(entries, rust.get(group), `group ${group}`);
  }
});

test('no two names of a group share a value', () => {
  for (const [group, entries] of fromJs()) {
    const values = entries.map(([, v]) => v);
    assert.equal(new Set(values).size, values.length, `group ${group}`);
  }
});
