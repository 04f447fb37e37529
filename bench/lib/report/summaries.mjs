// What the README's performance table and the goals table in
// docs/performance.md say about each benchmark, read from its results file
// (bench/results/<name>.json as the benchmark wrote it). One function per
// benchmark turns one run's JSON into rows: every figure in a row comes from
// that run, and offloop's figure stands beside its peer's from the same
// run. The goals are BENCH.md's, as each benchmark recorded them where it
// did. This file never reads or writes a file and never formats a table;
// a results file whose shape it does not know makes its function throw,
// and the caller reports and skips that file.

import { count, lowerBy, megabytes, median, ms, rate, ratio, seconds, us } from './format.mjs';
import { cores } from './cores-summary.mjs';
import { one } from './pick.mjs';
import { tenants } from './tenants-summary.mjs';

const PERF = 'docs/performance.md';

/** Names of entries in `list` (by `key`) that are not in `known`: rows this report leaves out. */
function unknownNames(list, key, known) {
  const names = new Set((list ?? []).map((x) => x[key]));
  return [...names].filter((n) => !known.includes(n));
}

function checkpoint(r) {
  const run = (config, pattern) =>
    one(r.runs, (x) => x.config === config && x.pattern === pattern, `run ${config} ${pattern}`);
  const on = (p) => run('offloop-checkpointer-on-node20', p);
  const on24 = (p) => run('offloop-checkpointer-on-node24', p);
  const peer = (p) => run('better-sqlite3-node20', p);
  const floor = (p) => run('none-node20', p);
  const goal = r.goal;
  const slow = Math.max(on('constant').callsOver5ms, on('bursts').callsOver5ms);
  const slow24 = Math.max(on24('constant').callsOver5ms, on24('bursts').callsOver5ms);
  const delay = Math.max(on('constant').eventLoopDelayMs.max, on('bursts').eventLoopDelayMs.max);
  const wal = Math.max(on('constant').walBytes, on('bursts').walBytes, on24('constant').walBytes, on24('bursts').walBytes);
  const why = `${PERF}#w1--the-checkpoint-stall`;
  return {
    rows: [
      {
        measure: `[W1](${why}): \`fsync\` calls on the JS thread in ${count(r.workload.inserts)} inserts`,
        offloop: count(on('constant').syncs.jsThread),
        peer: `better-sqlite3 ${count(peer('constant').syncs.jsThread)}`,
      },
      {
        measure: `[W1](${why}): of those inserts, calls over ${r.workload.slowCallMs} ms, with inserts back to back / in bursts`,
        offloop: `${on('constant').callsOver5ms} / ${on('bursts').callsOver5ms}`,
        peer: `better-sqlite3 ${peer('constant').callsOver5ms} / ${peer('bursts').callsOver5ms}`,
      },
    ],
    goals: [
      {
        goal: 'no sync on the JS thread',
        result: `${on('constant').syncs.jsThread} (better-sqlite3 ${peer('constant').syncs.jsThread})`,
        met: on('constant').syncs.jsThread <= goal.jsThreadSyncs && on24('constant').syncs.jsThread <= goal.jsThreadSyncs,
        why,
      },
      {
        goal: `event-loop delay max under ${goal.eventLoopDelayMaxMs} ms`,
        result: `${ms(on('constant').eventLoopDelayMs.max)} / ${ms(on('bursts').eventLoopDelayMs.max)} (no database: ${ms(floor('constant').eventLoopDelayMs.max)} / ${ms(floor('bursts').eventLoopDelayMs.max)})`,
        met: delay < goal.eventLoopDelayMaxMs,
        why,
      },
      {
        goal: `at most ${goal.slowCalls} call over 5 ms per pattern`,
        result: `Node 20: ${on('constant').callsOver5ms} / ${on('bursts').callsOver5ms}; Node 24: ${on24('constant').callsOver5ms} / ${on24('bursts').callsOver5ms}`,
        met: slow <= goal.slowCalls && slow24 <= goal.slowCalls,
        why,
      },
      {
        goal: `WAL at the end under ${megabytes(goal.walBytes)}`,
        result: `at most ${megabytes(wal)}`,
        met: wal < goal.walBytes,
        why,
      },
    ],
  };
}

function classic(r) {
  const peer = (config) => one(r.peers, (p) => p.config === config, `peer ${config}`);
  const cell = (config, key) => {
    const c = peer(config).cells[key];
    if (c === undefined) throw new Error(`no cell ${key} for ${config}`);
    return c.opsPerSecond;
  };
  const bs3 = 'better-sqlite3-node20';
  const nodeSqlite = 'node-sqlite-node24';
  const peerTask = (task) => (task === 'insert100-batch' ? 'insert100-transaction' : task);
  const pair = (task, mode) => {
    const o20 = cell('offloop-node20', `${task}:${mode}`);
    const o24 = cell('offloop-node24', `${task}:${mode}`);
    const p20 = cell(bs3, `${peerTask(task)}:sync`);
    const p24 = cell(nodeSqlite, `${peerTask(task)}:sync`);
    return { o20, o24, p20, p24, r20: o20 / p20, r24: o24 / p24 };
  };
  const why = `${PERF}#w2--the-classic-five`;
  const row = (measure, task, mode) => {
    const p = pair(task, mode);
    return {
      measure: `[W2](${why}): ${measure}`,
      offloop: `${rate(p.o20)} (${ratio(p.r20)} better-sqlite3's) on Node 20; ${rate(p.o24)} (${ratio(p.r24)} \`node:sqlite\`'s) on Node 24`,
      peer: `better-sqlite3 ${rate(p.p20)}; \`node:sqlite\` ${rate(p.p24)}`,
    };
  };
  return {
    rows: [
      row('`get()` of one row, 64 calls in flight', 'get', 'inflight'),
      row('`all()` of 100 rows, 64 in flight', 'all', 'inflight'),
      row('100 inserts per `db.batch()`, 64 batches in flight', 'insert100-batch', 'inflight'),
    ],
    goals: r.goals.map((g) => {
      const p = pair(g.task, g.mode);
      return {
        goal: `${g.text}: at least ${g.min.toFixed(1)}× the peer`,
        result: `${ratio(p.r20)} better-sqlite3; ${ratio(p.r24)} \`node:sqlite\``,
        met: p.r20 >= g.min && p.r24 >= g.min,
        why,
      };
    }),
  };
}

function roundtrip(r) {
  const conf = (name) => one(r.configurations, (c) => c.config === name, `configuration ${name}`);
  const why = 'docs/roundtrip.md';
  const get = conf('offloop-get/pinned');
  const getUnpinned = conf('offloop-get/unpinned');
  const sqlite3Unpinned = conf('sqlite3-get/unpinned');
  return {
    rows: [
      {
        measure: `[RT](${why}): one awaited \`get()\`, pinned to one CPU, time per call`,
        offloop: `${us(get.usPerCall)} (floor, the same round trip with no SQLite work: ${us(conf('floor/pinned').usPerCall)})`,
        peer: `node-sqlite3 ${us(conf('sqlite3-get/pinned').usPerCall)}; better-sqlite3 ${us(conf('bs3-get/pinned').usPerCall)}`,
      },
      {
        measure: `[RT](${why}#waiting-without-halting): the same, unpinned, on vCPUs that halt when idle`,
        offloop: us(getUnpinned.usPerCall),
        peer: `node-sqlite3 ${us(sqlite3Unpinned.usPerCall)}`,
      },
      {
        measure: `[RT](${why}): context switches per lone awaited \`get()\`, pinned`,
        offloop: get.switchesPerCall.toFixed(1),
        peer: `node-sqlite3 ${conf('sqlite3-get/pinned').switchesPerCall.toFixed(1)}`,
      },
    ],
    goals: r.goals.map((g) => ({
      goal: `${g.mode}: ${g.text} ${g.target}${g.unit}`,
      result: `${g.value}${g.unit}`,
      met: g.met,
      why,
    })),
  };
}

function server(r) {
  const run = (config) => one(r.runs, (x) => x.config === config, `run ${config}`);
  const why = `${PERF}#w3--a-real-server`;
  const pair = (mine, theirs) => {
    const o = run(mine);
    const p = run(theirs);
    return {
      o,
      p,
      throughput: o.readWritePerSecond / p.readWritePerSecond,
      health: p.health.latencyMs.p99 / o.health.latencyMs.p99,
    };
  };
  const n20 = pair('offloop-node20', 'better-sqlite3-node20');
  const n24 = pair('offloop-node24', 'node-sqlite-node24');
  const kysely = pair('kysely-offloop-node20', 'kysely-better-sqlite3-node20');
  const drizzle = pair('drizzle-offloop-node20', 'drizzle-better-sqlite3-node20');
  return {
    rows: [
      {
        measure: `[W3](${why}): an HTTP server's \`/read\` + \`/write\` requests/s, 1 ms queries`,
        offloop: `${rate(n20.o.readWritePerSecond)} (${ratio(n20.throughput)})`,
        peer: `better-sqlite3 ${rate(n20.p.readWritePerSecond)}`,
      },
      {
        measure: `[W3](${why}): under that load, \`/health\` (no database) p99`,
        offloop: `${ms(n20.o.health.latencyMs.p99)} (${lowerBy(n20.health)})`,
        peer: `better-sqlite3 ${ms(n20.p.health.latencyMs.p99)}`,
      },
      {
        measure: `[W3](${why}) through Kysely / Drizzle: requests/s; \`/health\` p99`,
        offloop: `${ratio(kysely.throughput)} / ${ratio(drizzle.throughput)}; ${lowerBy(kysely.health)} / ${lowerBy(drizzle.health)}`,
        peer: 'the same library on better-sqlite3: 1×',
      },
    ],
    goals: [
      {
        goal: `\`/health\` p99 at least ${r.goal.healthP99Factor}× lower than the peer's`,
        result: `${ratio(n20.health)} better-sqlite3; ${ratio(n24.health)} \`node:sqlite\``,
        met: n20.health >= r.goal.healthP99Factor && n24.health >= r.goal.healthP99Factor,
        why,
      },
      {
        goal: `\`/read\` + \`/write\` throughput at least ${r.goal.throughputFactor}× the peer's`,
        result: `${ratio(n20.throughput)} better-sqlite3; ${ratio(n24.throughput)} \`node:sqlite\``,
        met: n20.throughput >= r.goal.throughputFactor && n24.throughput >= r.goal.throughputFactor,
        why,
      },
    ],
  };
}

function readers(r) {
  const conf = (name) => one(r.configurations, (c) => c.config === name, `configuration ${name}`);
  const one1 = conf('offloop-1');
  const two = conf('offloop-2');
  const peer = conf('better-sqlite3');
  return {
    rows: [
      {
        measure: `[W4](${PERF}#w4--reader-scaling): a ~10 ms query, 2 readers against 1, on 2 cores`,
        offloop: `${rate(two.queriesPerSecond)} (${ratio(two.queriesPerSecond / one1.queriesPerSecond)} one reader's)`,
        peer: `better-sqlite3 ${rate(peer.queriesPerSecond)}`,
      },
    ],
    goals: [],
  };
}

function mmap(r) {
  const covering = one(r.settings, (s) => s.label === 'covering', 'setting covering').bytes;
  const scan = (library, bytes) =>
    one(r.runs, ({ library: name, mmapRequested }) => name === library && mmapRequested === bytes, `${library} scan with mmap at ${bytes} bytes`).scanMs.median;
  const gain = (library) => 1 - scan(library, covering) / scan(library, 0);
  const pct = (x) => `${Math.round(x * 100)}%`;
  return {
    rows: [
      {
        measure: `[mmap](${PERF}#mmap--memory-mapped-reads): a full scan with the whole file mapped, against none`,
        offloop: `${pct(gain('offloop'))} faster`,
        peer: `better-sqlite3 ${pct(gain('better-sqlite3'))} faster`,
      },
    ],
    goals: [],
  };
}

function replicate(r) {
  const ins = (mode) => one(r.insert.modes, (m) => m.mode === mode, `insert mode ${mode}`);
  const lag = (mode) => one(r.lag.modes, (m) => m.mode === mode, `lag mode ${mode}`);
  const off = ins('off');
  const s3 = ins('offloop-s3');
  const folder = ins('offloop-folder');
  const sidecar = ins('litestream-s3');
  const why = `${PERF}#rep--replication`;
  const restores = (restorer, server, bytes) =>
    r.restore.runs.filter((x) => x.restorer === restorer && x.server === server && x.bytes >= bytes);
  const gib = restores('offloop', 's3rver', 1 << 30);
  if (gib.length === 0) throw new Error('no 1 GiB restore from s3rver');
  const gibOver = median(gib.map((x) => x.overLinkLimit));
  return {
    rows: [
      {
        measure: `[REP](${why}): inserts/s while replicating every commit to S3, against none`,
        offloop: `${rate(s3.rowsPerSecond)} (${ratio(s3.rowsPerSecond / off.rowsPerSecond)})`,
        peer: `not replicating ${rate(off.rowsPerSecond)}; Litestream sidecar ${rate(sidecar.rowsPerSecond)} (${ratio(sidecar.rowsPerSecond / off.rowsPerSecond)})`,
      },
      {
        measure: `[REP](${why}): lag p99 to S3 at ${count(r.lag.rate)} commits/s, ${r.lag.syncIntervalMs} ms sync interval`,
        offloop: ms(lag('offloop-s3').lagMs.p99),
        peer: `Litestream sidecar ${ms(lag('litestream-s3').lagMs.p99)}`,
      },
    ],
    goals: [
      {
        goal: `replication costs under ${Math.round((1 - r.goal.throughputRatio) * 100)}% of insert throughput`,
        result: `${ratio(folder.rowsPerSecond / off.rowsPerSecond)} to a folder, ${ratio(s3.rowsPerSecond / off.rowsPerSecond)} to S3`,
        met: Math.min(folder.rowsPerSecond, s3.rowsPerSecond) / off.rowsPerSecond >= r.goal.throughputRatio,
        why,
      },
      {
        goal: `lag p99 under ${ms(r.goal.lagP99Ms)} at ${count(r.lag.rate)} commits/s`,
        result: `${ms(lag('offloop-folder').lagMs.p99)} folder, ${ms(lag('offloop-s3').lagMs.p99)} S3`,
        met: Math.max(lag('offloop-folder').lagMs.p99, lag('offloop-s3').lagMs.p99) < r.goal.lagP99Ms,
        why,
      },
      {
        goal: `full restore within ${r.goal.restoreOverLinkLimit}× of the link's limit`,
        result: `1 GiB from s3rver ${ratio(gibOver)}`,
        met: gibOver <= r.goal.restoreOverLinkLimit,
        why,
      },
    ],
  };
}

function paged(r) {
  const why = `${PERF}#pr--the-paged-restore`;
  const bySize = r.sizes.map((s) => {
    const pagedRuns = s.runs.filter((x) => x.kind === 'paged');
    const litestream = s.runs.filter((x) => x.kind === 'litestream');
    if (pagedRuns.length === 0) throw new Error(`no paged run at ${s.mib} MiB`);
    return {
      mib: s.mib,
      first: median(pagedRuns.map((x) => x.firstResponseMs)),
      firstMax: Math.max(...pagedRuns.map((x) => x.firstResponseMs)),
      open: median(pagedRuns.map((x) => x.openMs)),
      filledOver: median(pagedRuns.map((x) => x.overLinkLimit)),
      litestreamSeconds: litestream.length ? median(litestream.map((x) => x.seconds)) : null,
    };
  });
  const largest = bySize[bySize.length - 1];
  const smallest = bySize[0];
  const firsts = bySize.map((s) => s.first);
  const size = (mib) => (mib >= 1024 ? `${mib / 1024} GiB` : `${mib} MiB`);
  return {
    rows: [
      {
        measure: `[PR](${why}): a ${size(largest.mib)} database opened from its S3 replica through a 20 ms, 100 MB/s link, to its first query answered (median)`,
        offloop: ms(largest.first),
        peer: largest.litestreamSeconds === null ? '—' : `\`litestream restore\` ${seconds(largest.litestreamSeconds)}`,
      },
    ],
    goals: [
      {
        goal: `first response under ${r.goal.firstResponseMs} ms at every size, ${size(smallest.mib)} to ${size(largest.mib)} (medians)`,
        result: `${ms(Math.min(...firsts))} to ${ms(Math.max(...firsts))}`,
        met: Math.max(...firsts) < r.goal.firstResponseMs,
        why,
      },
      {
        goal: 'paged open time flat in the size',
        result: `${ms(smallest.open)} at ${size(smallest.mib)}, ${ms(largest.open)} at ${size(largest.mib)}`,
        met: largest.open / smallest.open <= r.goal.openFlatRatio,
        why,
      },
      {
        goal: `every page local within ${r.goal.filledOverLinkLimit}× of the link's limit`,
        result: bySize.map((s) => `${ratio(s.filledOver)} at ${size(s.mib)}`).join(', '),
        met: bySize.every((s) => s.filledOver <= r.goal.filledOverLinkLimit),
        why,
      },
    ],
  };
}

function follow(r) {
  const why = `${PERF}#follow--followers`;
  const lag = (kind, intervalMs) =>
    one(r.lag, (l) => l.kind === kind && l.intervalMs === intervalMs, `lag ${kind} ${intervalMs} ms`);
  const fast = lag('s3', 100);
  const slow = lag('s3', 1000);
  const idle = fast.requestsPerMinute.idle;
  const readerRatio = r.readers.offloop.duringMs.p99 / r.readers.offloop.noneMs.p99;
  return {
    rows: [
      {
        measure: `[FOLLOW](${why}): a follower of an S3 replica through a 20 ms link at ${count(fast.commitsPerSecond)} commits/s, lag p99 with sync and poll at 100 ms; S3 LIST requests a minute while idle`,
        offloop: `${ms(fast.lagMs.offloop.p99)}; ${count(idle.offloop.list)}`,
        peer: `\`litestream restore -f\` ${ms(fast.lagMs.litestream.p99)}; ${count(idle.litestream.list)}`,
      },
    ],
    goals: [
      {
        goal: 'lag p99 ≤ `syncInterval` + `pollInterval` + 250 ms',
        result: r.lag.map((l) => `${l.kind} ${l.intervalMs}/${l.intervalMs}: ${ms(l.lagMs.offloop.p99)} (bound ${ms(l.lagGoalMs)})`).join('; '),
        met: r.lag.every((l) => l.lagMs.offloop.p99 <= l.lagGoalMs),
        why,
      },
      {
        goal: 'idle: one request per `pollInterval`, no LIST',
        result: `${count(slow.requestsPerMinute.idle.offloop.list)} LIST, ${count(slow.requestsPerMinute.idle.offloop.get)} GET a minute at 1000 ms`,
        met: r.lag.every((l) => l.requestsPerMinute.idle.offloop.list === 0),
        why,
      },
      {
        goal: 'reader p99 during applies within 2× of none',
        result: ratio(readerRatio),
        met: readerRatio <= 2,
        why,
      },
    ],
  };
}

function failover(r) {
  const why = `${PERF}#failover--one-fenced-writer`;
  const commits = (durability, writers) =>
    one(r.commits, (c) => c.durability === durability && c.writers === writers, `commits ${durability} ${writers}`);
  const replica64 = commits('replica', 64);
  const local64 = commits('local', 64);
  const f = r.failover;
  const bound = f.leaseTtlMs + f.pollIntervalMs + 1000;
  return {
    rows: [
      {
        measure: `[FAILOVER](${why}): commits/s with \`durability: 'replica'\` (acknowledged once in S3), 64 writers, 20 ms link; acknowledged writes lost over ${f.rounds.length} failovers`,
        offloop: `${rate(replica64.commitsPerSecond)}; ${count(f.lost)} of ${count(f.acknowledged)}`,
        peer: `\`'local'\` ${rate(local64.commitsPerSecond)}`,
      },
    ],
    goals: [
      { goal: 'acknowledged writes lost: 0', result: `${count(f.lost)} of ${count(f.acknowledged)}`, met: f.lost === r.goal.lost, why },
      {
        goal: `\`'replica'\` at least ${count(r.goal.replicaCommitsPerSecondAt64)} commits/s with 64 writers`,
        result: `${count(replica64.commitsPerSecond)}/s`,
        met: replica64.commitsPerSecond >= r.goal.replicaCommitsPerSecondAt64,
        why,
      },
      {
        goal: 'failover at most `leaseTtl` + `pollInterval` + 1 s',
        result: `p50 ${ms(f.failoverP50Ms)}, max ${ms(f.failoverMaxMs)} (bound ${ms(bound)})`,
        met: f.failoverMaxMs <= bound,
        why,
      },
    ],
  };
}

const SQLITE3_SERVERS = [
  'knex+sqlite3',
  'knex+offloop',
  'sequelize+sqlite3',
  'sequelize+offloop',
];

function sqlite3(r) {
  const why = `${PERF}#sqlite3--the-drop-in`;
  const srv = (peer) => one(r.servers, (s) => s.peer === peer && s.threadNice === 0, `server ${peer}`);
  const starve = (peer) => one(r.starvation, (s) => s.peer === peer && s.threadNice === 0, `starvation ${peer}`);
  const orm = (name) => {
    const o = srv(`${name}+offloop`);
    const p = srv(`${name}+sqlite3`);
    return { throughput: o.readWritePerSecond / p.readWritePerSecond, health: p.health.p99 / o.health.p99 };
  };
  const knex = orm('knex');
  const sequelize = orm('sequelize');
  const none = starve('none').readMs.p99;
  const offloop = starve('offloop').readMs.p99 / none;
  const peer = starve('sqlite3').readMs.p99 / none;
  const notes = [];
  const left = unknownNames(r.servers, 'peer', SQLITE3_SERVERS);
  if (left.length) notes.push(`servers not in the report: ${left.join(', ')}`);
  const leftStarving = unknownNames(r.starvation, 'peer', ['none', 'sqlite3', 'offloop']);
  if (leftStarving.length) notes.push(`starvation peers not in the report: ${leftStarving.join(', ')}`);
  // Opening, one get and closing, one database at a time (runs since 2026-12-05).
  const opens = r.open ? { o: one(r.open, (x) => x.peer === 'offloop', 'open offloop'), p: one(r.open, (x) => x.peer === 'sqlite3', 'open sqlite3') } : null;
  const openRows = opens
    ? [
        {
          measure: `[SQLITE3](${why}): open, one \`get()\` and close, one database at a time: open median / p99; all three`,
          offloop: `${ms(opens.o.openMs.p50)} / ${ms(opens.o.openMs.p99)}; ${ms(opens.o.totalMs.p50)}`,
          peer: `\`sqlite3\` ${ms(opens.p.openMs.p50)} / ${ms(opens.p.openMs.p99)}; ${ms(opens.p.totalMs.p50)}`,
        },
      ]
    : [];
  const openGoals = opens
    ? [
        {
          goal: `opening a database within ${r.goal.openP50FactorOfSqlite3}× of \`sqlite3\`'s (median)`,
          result: `${ratio(opens.o.openMs.p50 / opens.p.openMs.p50)} (${ms(opens.o.openMs.p50)} against ${ms(opens.p.openMs.p50)})`,
          met: opens.o.openMs.p50 / opens.p.openMs.p50 <= r.goal.openP50FactorOfSqlite3,
          why: `${PERF}#opening-a-database`,
        },
      ]
    : [];
  // node-sqlite3's fixture: queued stmt.run() calls (runs since 2026-12-05).
  const fixture = r.fixture?.length
    ? { o: one(r.fixture, (x) => x.peer === 'offloop', 'fixture offloop'), p: one(r.fixture, (x) => x.peer === 'sqlite3', 'fixture sqlite3') }
    : null;
  const fixtureRows = fixture
    ? [
        {
          measure: `[SQLITE3](${why}): node-sqlite3's fixture, ${count(fixture.o.calls)} \`stmt.run()\` queued in one \`serialize()\` loop: time; peak RSS`,
          offloop: `${seconds(fixture.o.seconds)} (${ratio(fixture.o.seconds / fixture.p.seconds)}); ${count(fixture.o.peakRssMB)} MB (${ratio(fixture.o.peakRssMB / fixture.p.peakRssMB)})`,
          peer: `\`sqlite3\` ${seconds(fixture.p.seconds)}; ${count(fixture.p.peakRssMB)} MB`,
        },
      ]
    : [];
  const fixtureGoals = fixture
    ? [
        {
          goal: `node-sqlite3's fixture within ${r.goal.fixtureTimeFactor}× of \`sqlite3\`'s time, at most its peak RSS`,
          result: `${ratio(fixture.o.seconds / fixture.p.seconds)} the time, ${ratio(fixture.o.peakRssMB / fixture.p.peakRssMB)} the peak RSS`,
          met: fixture.o.seconds / fixture.p.seconds <= r.goal.fixtureTimeFactor && fixture.o.peakRssMB / fixture.p.peakRssMB <= r.goal.fixturePeakRssFactor,
          why: `${PERF}#node-sqlite3s-fixture`,
        },
      ]
    : [];
  return {
    notes,
    rows: [
      {
        measure: `[SQLITE3](${why}): Knex / Sequelize through \`offloop/sqlite3\` against the same ORM on \`sqlite3\`: requests/s; \`/health\` p99`,
        offloop: `${ratio(knex.throughput)} / ${ratio(sequelize.throughput)}; ${lowerBy(knex.health)} / ${lowerBy(sequelize.health)}`,
        peer: '1×',
      },
      {
        measure: `[SQLITE3](${why}): \`fs.readFile\` p99 beside four slow queries, against none`,
        offloop: ratio(offloop),
        peer: `\`sqlite3\` ${ratio(peer)}`,
      },
      ...openRows,
      ...fixtureRows,
    ],
    goals: [
      {
        goal: 'on each ORM, at least `sqlite3`\'s throughput',
        result: `Knex ${ratio(knex.throughput)}, Sequelize ${ratio(sequelize.throughput)}`,
        met: knex.throughput >= r.goal.throughputFactor && sequelize.throughput >= r.goal.throughputFactor,
        why,
      },
      {
        goal: `\`/health\` p99 at least ${r.goal.healthP99Factor}× lower than on \`sqlite3\``,
        result: `Knex ${ratio(knex.health)}, Sequelize ${ratio(sequelize.health)}`,
        met: knex.health >= r.goal.healthP99Factor && sequelize.health >= r.goal.healthP99Factor,
        why,
      },
      {
        goal: `\`fs.readFile\` p99 beside four slow queries within ${r.goal.fileReadP99FactorOfNone}× of none`,
        result: `${ratio(offloop)} (\`sqlite3\` ${ratio(peer)})`,
        met: offloop <= r.goal.fileReadP99FactorOfNone,
        why,
      },
      ...openGoals,
      ...fixtureGoals,
    ],
  };
}

const RUNTIME_LABEL = { node: 'Node', bun: 'Bun', deno: 'Deno' };
const CELL_LABEL = { 'get:awaited': 'get awaited', 'get:inflight': 'get 64 in flight', 'all:awaited': 'all awaited', 'all:inflight': 'all 64 in flight' };

function runtimes(r) {
  const why = 'docs/install.md#performance-in-bun-and-deno';
  const names = r.runtimes.map((x) => x.name);
  for (const name of ['node', 'bun', 'deno']) if (!names.includes(name)) throw new Error(`no runtime ${name}`);
  const label = (name) => `${RUNTIME_LABEL[name]} ${one(r.runtimes, (x) => x.name === name, `runtime ${name}`).version}`;
  const peers = r.runtimes.map((x) => `\`${x.peer}\` in ${RUNTIME_LABEL[x.name]}`).join(', ');
  const cell = (name, key) => {
    const v = r.ratios[name]?.[key];
    if (!Number.isFinite(v)) throw new Error(`no ratio ${key} in ${name}`);
    return v;
  };
  const w2Row = (measure, mode) => ({
    measure: `[RUNTIMES](${why}): ${measure}, against the runtime's own SQLite`,
    offloop: names.map((n) => `${RUNTIME_LABEL[n]} ${ratio(cell(n, `get:${mode}`))} / ${ratio(cell(n, `all:${mode}`))}`).join('; '),
    peer: `${peers}: 1×`,
  });
  const w3 = (name) => one(r.goalResults, (g) => g.goal === 'w3' && g.runtime === name, `W3 goal for ${name}`);
  const w2Goals = names
    .filter((n) => n !== 'node')
    .map((n) => {
      const gs = r.goalResults.filter((g) => g.goal === 'w2' && g.runtime === n);
      if (gs.length === 0) throw new Error(`no W2 goal for ${n}`);
      return {
        goal: `in ${label(n)}, W2's ratios to its own SQLite at least ${r.goal.sameRatioFactor} of offloop's in Node (get, all(100); awaited, 64 in flight)`,
        result: gs.map((g) => `${CELL_LABEL[g.cell]} ${ratio(g.ratio)} (Node ${ratio(g.nodeRatio)})`).join('; '),
        met: gs.every((g) => g.met),
        why,
      };
    });
  return {
    rows: [
      w2Row('`get()` / `all()` of 100 rows, 64 calls in flight', 'inflight'),
      w2Row('`get()` / `all()` of 100 rows, awaited one at a time', 'awaited'),
      {
        measure: `[RUNTIMES](${why}): W3's \`/health\` p99 beside \`/read\` + \`/write\` load, against the runtime's own SQLite`,
        offloop: names.map((n) => `${RUNTIME_LABEL[n]} ${lowerBy(w3(n).factor)}`).join('; '),
        peer: peers,
      },
    ],
    goals: [
      ...w2Goals,
      ...names.map((n) => ({
        goal: `in ${label(n)}, W3's \`/health\` p99 at least ${r.goal.healthP99Factor}× lower than on its own SQLite`,
        result: lowerBy(w3(n).factor),
        met: w3(n).met,
        why,
      })),
    ],
  };
}

/**
 * Every results file the report reads, by name (bench/results/<name>.json),
 * in the order its rows appear, with the page that explains the benchmark
 * (where its own table goes) and its short name for the goals table.
 * `overview: false` keeps a benchmark out of the README's table and the
 * goals table (its own page shows its rows and goals): RUNTIMES and
 * TENANTS and CORES, whose rows would take the README past its 250 lines
 * and performance.md past its 500.
 */
export const SUMMARIES = [
  { name: 'checkpoint', page: 'docs/performance.md', benchmark: 'W1', summarize: checkpoint },
  { name: 'roundtrip', page: 'docs/roundtrip.md', benchmark: 'RT', summarize: roundtrip },
  { name: 'classic', page: 'docs/performance.md', benchmark: 'W2', summarize: classic },
  { name: 'server', page: 'docs/performance.md', benchmark: 'W3', summarize: server },
  { name: 'readers', page: 'docs/performance.md', benchmark: 'W4', summarize: readers },
  { name: 'mmap', page: 'docs/performance.md', benchmark: 'mmap', summarize: mmap },
  { name: 'replicate', page: 'docs/performance.md', benchmark: 'REP', summarize: replicate },
  { name: 'follow', page: 'docs/performance.md', benchmark: 'FOLLOW', summarize: follow },
  { name: 'paged', page: 'docs/performance.md', benchmark: 'PR', summarize: paged },
  { name: 'failover', page: 'docs/performance.md', benchmark: 'FAILOVER', summarize: failover },
  { name: 'sqlite3', page: 'docs/performance.md', benchmark: 'SQLITE3', summarize: sqlite3 },
  { name: 'runtimes', page: 'docs/install.md', benchmark: 'RUNTIMES', summarize: runtimes, overview: false },
  { name: 'tenants', page: 'bench/README.md', benchmark: 'TENANTS', summarize: tenants, overview: false },
  { name: 'cores', page: 'docs/cores.md', benchmark: 'CORES', summarize: cores, overview: false },
];

/**
 * Results files the report knows and leaves out on purpose, with why: they
 * measure one change against the build before it, not today's build
 * against its peers.
 */
export const NOT_SUMMARIZED = {
  'error-path': 'a before/after comparison of one change (error stacks), not a peer benchmark',
};
