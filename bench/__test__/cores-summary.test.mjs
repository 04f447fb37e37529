// The CORES summary (bench/lib/report/cores-summary.mjs) judges issue 40's
// goals from a results file: the JS thread's CPU against better-sqlite3's
// whole call, pinned; the loop's delay with 256 `all()`s in flight (the
// worst reader count); and the 16-core goals only where the run had 16
// CPUs. It reads the committed bench/results/cores.json and edits copies;
// no benchmark runs here.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { cores } from '../lib/report/cores-summary.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const committed = () => JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'results', 'cores.json'), 'utf8'));
const goal = (summary, start) => summary.goals.find((g) => g.goal.startsWith(start));

test('the JS thread\'s CPU goals compare the pinned offloop call with better-sqlite3\'s pinned call', () => {
  const r = committed();
  const pinned = (query, peer) => r.configurations.find((c) => c.query === query && c.peer === peer && c.pinned);
  const peer = pinned('get', 'better-sqlite3').jsCpuUsPerCall;
  pinned('get', 'offloop').jsCpuUsPerCall = peer * 0.3;
  assert.equal(goal(cores(r), "the JS thread's CPU per `get()`").met, true);
  pinned('get', 'offloop').jsCpuUsPerCall = peer * 0.4;
  const missed = goal(cores(r), "the JS thread's CPU per `get()`");
  assert.equal(missed.met, false);
  assert.equal(missed.result, '0.40×');
});

test('the loop delay goal takes the worst reader count with 256 in flight', () => {
  const r = committed();
  const at256 = r.configurations.filter((c) => c.peer === 'offloop' && c.query === 'all' && c.inFlight === 256 && !c.pinned);
  assert.ok(at256.length > 0);
  for (const c of at256) c.loopDelayP99Ms = 1.5;
  assert.equal(goal(cores(r), 'event-loop delay').met, true);
  at256[0].loopDelayP99Ms = 2.5;
  assert.equal(goal(cores(r), 'event-loop delay').met, false);
});

test('the 16-core goals are judged only on a run with 16 CPUs or more', () => {
  const r = committed();
  r.workload.cores = 2;
  assert.equal(cores(r).goals.filter((g) => g.goal.startsWith('on 16 cores')).length, 0);
  r.workload.cores = 16;
  const many = cores(r).goals.filter((g) => g.goal.startsWith('on 16 cores'));
  assert.equal(many.length, 2);
});

test('a results file without a configuration the table needs is refused', () => {
  const r = committed();
  r.configurations = r.configurations.filter((c) => !(c.peer === 'better-sqlite3' && c.pinned));
  assert.throws(() => cores(r), /no better-sqlite3/);
});
