// What the generated results table says about CORES (bench/cores.mjs),
// read from bench/results/cores.json: offloop's rates beside
// better-sqlite3's on the JS thread and its worker pool from the same run,
// the JS thread's CPU per call against better-sqlite3's whole call, and
// the goals that any machine can measure (issue 40). The 16-core goals are
// judged only on a run with at least 16 CPUs. Like every summary, it reads
// no file and formats no table; a results file of another shape makes it
// throw.

import { ms, rate, ratio, us } from './format.mjs';
import { one } from './pick.mjs';

const WHY = 'docs/cores.md';
const MANY_CORES = 16;

/** The configuration that `pred` accepts, with a rate; throws naming `what` if none does. */
function measured(list, pred, what) {
  const found = one(list, pred, what);
  if (!(found.callsPerSecond > 0)) throw new Error(`no ${what} with a rate`);
  return found;
}

export function cores(r) {
  const list = r.configurations ?? [];
  const threads = r.workload?.threads;
  if (!Array.isArray(threads) || threads.length === 0) throw new Error('no reader counts');
  const most = Math.max(...threads);
  const find = (query, peer, more = {}) =>
    measured(
      list,
      (c) =>
        c.query === query &&
        c.peer === peer &&
        Object.entries({ pinned: false, arrays: false, ...more }).every(([k, v]) => c[k] === v),
      `${peer} ${query} ${JSON.stringify(more)}`,
    );
  const b3 = (query, pinned = false) => find(query, 'better-sqlite3', { pinned });
  const mine = (query, more) => find(query, 'offloop', { threads: most, inFlight: 64, ...more });
  const pool = (query) => find(query, 'b3-pool', { threads: most });
  const pinned = (query) => ({
    mine: find(query, 'offloop', { pinned: true, inFlight: 64 }),
    peer: b3(query, true),
  });
  const cpuRatio = (query) => {
    const p = pinned(query);
    return p.mine.jsCpuUsPerCall / p.peer.jsCpuUsPerCall;
  };
  const delays = list.filter((c) => c.peer === 'offloop' && c.query === 'all' && c.inFlight === 256 && !c.pinned);
  if (delays.length === 0) throw new Error('no offloop all() with 256 in flight');
  const delay = Math.max(...delays.map((c) => c.loopDelayP99Ms));
  const against = (c, peer) => `${rate(c.callsPerSecond)} (${ratio(c.callsPerSecond / peer.callsPerSecond)})`;
  const readers = `${most} reader${most === 1 ? '' : 's'}`;
  const rows = [
    {
      measure: `[CORES](${WHY}): \`get()\` by rowid, 64 in flight, ${readers}; against better-sqlite3 on the JS thread`,
      offloop: against(mine('get'), b3('get')),
      peer: `better-sqlite3 ${rate(b3('get').callsPerSecond)}; pool of ${most} workers ${rate(pool('get').callsPerSecond)}`,
    },
    {
      measure: `[CORES](${WHY}): \`all()\` of 100 rows, 64 in flight, ${readers}: objects; \`returnArrays\``,
      offloop: `${against(mine('all'), b3('all'))}; ${against(mine('all', { arrays: true }), b3('all'))}`,
      peer: `better-sqlite3 ${rate(b3('all').callsPerSecond)}; pool of ${most} workers ${rate(pool('all').callsPerSecond)}`,
    },
    {
      measure: `[CORES](${WHY}): the JS thread's CPU per call, pinned to one CPU: \`get()\`; \`all()\` of 100 rows`,
      offloop: `${us(pinned('get').mine.jsCpuUsPerCall)} (${ratio(cpuRatio('get'))}); ${us(pinned('all').mine.jsCpuUsPerCall)} (${ratio(cpuRatio('all'))})`,
      peer: `better-sqlite3's whole call ${us(pinned('get').peer.jsCpuUsPerCall)}; ${us(pinned('all').peer.jsCpuUsPerCall)}`,
    },
  ];
  const goals = [
    {
      goal: "the JS thread's CPU per `get()`, 64 in flight, pinned: ≤ 0.33× better-sqlite3's whole `get()`",
      result: ratio(cpuRatio('get')),
      met: cpuRatio('get') <= 0.33,
      why: WHY,
    },
    {
      goal: "the JS thread's CPU per `all()` of 100 rows, pinned: ≤ 0.20× better-sqlite3's whole `all()`",
      result: ratio(cpuRatio('all')),
      met: cpuRatio('all') <= 0.2,
      why: WHY,
    },
    {
      goal: 'event-loop delay p99, 256 `all()` in flight: ≤ 2 ms',
      result: `${ms(delay)} (the worst of ${delays.length} reader count${delays.length === 1 ? '' : 's'})`,
      met: delay <= 2,
      why: WHY,
    },
  ];
  const cpus = r.workload?.cores ?? r.machine?.cores;
  if (cpus >= MANY_CORES) {
    const get = mine('get').callsPerSecond / b3('get').callsPerSecond;
    goals.push({
      goal: `on ${MANY_CORES} cores or more, \`get()\` with 64 in flight: ≥ 2× better-sqlite3`,
      result: ratio(get),
      met: get >= 2,
      why: WHY,
    });
    const all = mine('all').callsPerSecond / b3('all').callsPerSecond;
    goals.push({
      goal: `on ${MANY_CORES} cores or more, \`all()\` of 100 rows with 64 in flight: ≥ 3× better-sqlite3`,
      result: ratio(all),
      met: all >= 3,
      why: WHY,
    });
  } else {
    rows.push({
      measure: `[CORES](${WHY}): this run had ${cpus} CPUs`,
      offloop: `the ${MANY_CORES}-core goals are not judged here`,
      peer: '—',
    });
  }
  return { rows, goals };
}
