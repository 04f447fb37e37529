// The wire between lib/ and the addon is named once on each side
// (lib/protocol.js and src/node/protocol.rs); these tests fail when the two
// disagree on a name, a value or the order, and when the positions of an
// array that crosses (arguments, payloads, records) skip or repeat one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const protocol = require('../../lib/protocol.js');
const native = require('../../native.js');

// A group of several words is camelCase in JS and snake_case in Rust.
const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const fromJs = () => Object.entries(protocol).map(([group, names]) => [snake(group), Object.entries(names)]);

// The groups that name positions in an array that crosses (arguments,
// payloads, records), rather than values.
const POSITIONS = [
  'error',
  'spread_call',
  'spread_batch',
  'batch_entry',
  'refusal',
  'batch_refusal',
  'chunk',
  'unreadable',
  'column',
  'query',
  'checkpoint_result',
  'run_record',
  'rows_record',
];

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

test('each group of positions counts 0, 1, 2, … in order, on both sides', () => {
  for (const side of [native.protocol(), fromJs()]) {
    const groups = new Map(side);
    for (const group of POSITIONS) {
      assert.ok(groups.has(group), `${group} is named`);
      const values = groups.get(group).map(([, v]) => v);
      assert.deepEqual(values, [...values.keys()], `group ${group}`);
    }
  }
});
