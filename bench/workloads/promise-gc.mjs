// V8's collector against promises that stay pending, with no SQLite and no
// threads (docs/cores.md, "What is left"): `in-flight` async loops each
// await a promise, and a setImmediate loop settles `per-turn` of them a
// turn, in call order, each with 100 null-prototype rows of four columns
// built as lib/rows.js builds them. Reports the settlements a second and
// the event loop's delay p99 while it ran. One JSON line.
//
//   node [--trace-gc-nvp] bench/workloads/promise-gc.mjs [--in-flight 256] [--per-turn 4] [--ms 3000]

import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    'in-flight': { type: 'string', default: '256' },
    'per-turn': { type: 'string', default: '4' },
    ms: { type: 'string', default: '3000' },
  },
});
const IN_FLIGHT = Number(opts['in-flight']);
const PER_TURN = Number(opts['per-turn']);
const ROWS = 100;

// A row maker as lib/rows.js compiles one: a null-prototype literal naming
// every column, then each value stored.
const makeRow = new Function(
  'values',
  'offset',
  `'use strict';
  const row = { __proto__: null, nul: null, integer: null, real: null, text: null };
  row.nul = values[offset]; row.integer = values[offset + 1];
  row.real = values[offset + 2]; row.text = values[offset + 3];
  return row;`,
);

const waiting = [];
let settled = 0;
let running = true;

function result() {
  const values = [];
  for (let i = 0; i < ROWS; i++) values.push(null, settled * ROWS + i, i * 1.5, `text value ${settled * ROWS + i}`);
  const rows = new Array(ROWS);
  for (let r = 0; r < ROWS; r++) rows[r] = makeRow(values, r * 4);
  return rows;
}

function serve() {
  for (let k = 0; k < PER_TURN && waiting.length > 0; k++) {
    waiting.shift()(result());
    settled++;
  }
  if (running) setImmediate(serve);
  else for (const resolve of waiting.splice(0)) resolve([]);
}

const call = () => new Promise((resolve) => waiting.push(resolve));

const delay = monitorEventLoopDelay({ resolution: 1 });
const end = performance.now() + Number(opts.ms);
delay.enable();
setImmediate(serve);
setTimeout(() => {
  running = false;
  delay.disable();
}, Number(opts.ms));
const t0 = performance.now();
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (performance.now() < end) await call();
  }),
);
const wallMs = performance.now() - t0;
console.log(
  JSON.stringify({
    node: process.version,
    inFlight: IN_FLIGHT,
    perTurn: PER_TURN,
    settledPerSecond: Math.round((settled / wallMs) * 1000),
    loopDelayP99Ms: delay.percentile(99) / 1e6,
  }),
);
