'use strict';

// offloop/metrics: offloop's Prometheus metrics on a prom-client Registry.
// Calls are counted and timed from the `offloop:<operation>` tracing
// channels as they settle; everything else (queues, checkpoints, WAL,
// replica, follower) is read from the open databases' stats when the
// registry is scraped, and the SQLite threads from the process's. Labels are bounded: a database gets series of its
// own only when `options.databases` lists it. This file only subscribes and
// reads counters; it never starts work on a database.

const diagnosticsChannel = require('node:diagnostics_channel');

const { CLOSED } = require('./core.js');
const { databaseStats, processStats } = require('./stats.js');
const { openCores } = require('./open-databases.js');
const { OPERATIONS, absolutePath, databasePath } = require('./tracing.js');

// Seconds: from a tenth of a millisecond (a cached point read) to ten seconds.
const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The thread role a call ran on, from its context's `thread` name. */
function roleOf(ctx) {
  const thread = ctx.thread;
  if (typeof thread !== 'string') return 'none';
  if (thread.includes('reader')) return 'reader';
  if (thread.includes('writer')) return 'writer';
  return 'other';
}

/** Adds `value` to series `labels` of `sums` (a Map keyed by the labels' JSON). */
function add(sums, labels, value) {
  const key = JSON.stringify(labels);
  const entry = sums.get(key);
  if (entry === undefined) sums.set(key, { labels, value });
  else entry.value += value;
}

/** Keeps the largest `value` of series `labels`. */
function keepMax(sums, labels, value) {
  const key = JSON.stringify(labels);
  const entry = sums.get(key);
  if (entry === undefined) sums.set(key, { labels, value });
  else entry.value = Math.max(entry.value, value);
}

/** What the scrape-time metrics read from one database's stats, as [name, labels, value, merge]. */
function* readings(s) {
  yield ['offloop_open_databases', {}, 1, add];
  const roles = [
    ['writer', [s.writer]],
    ['reader', s.readers],
  ];
  for (const [role, lanes] of roles) {
    yield ['offloop_connections', { role }, lanes.length, add];
    for (const t of lanes) {
      yield ['offloop_queued_jobs', { role }, t.queued, add];
      yield ['offloop_jobs_total', { role }, t.executed, add];
      yield ['offloop_queue_wait_max_seconds', { role }, t.waitMaxMs / 1000, keepMax];
    }
  }
  const c = s.checkpoint;
  yield ['offloop_connections', { role: 'checkpointer' }, c.active ? 1 : 0, add];
  yield ['offloop_checkpoints_total', {}, c.runs, add];
  yield ['offloop_checkpoint_frames_total', {}, c.framesCopied, add];
  yield ['offloop_checkpoint_max_seconds', {}, c.maxMs / 1000, keepMax];
  yield ['offloop_checkpointer_failed', {}, c.active ? 0 : 1, add];
  yield ['offloop_wal_bytes', {}, c.walBytes, add];
  yield ['offloop_wal_frames', {}, c.walFrames, add];
  const r = s.replica;
  if (r !== null) {
    yield ['offloop_threads', { role: 'replicator' }, 1, add];
    yield ['offloop_replica_lag_seconds', {}, r.lagMs / 1000, keepMax];
    yield ['offloop_replica_pending_bytes', {}, r.pendingBytes, add];
    yield ['offloop_replica_shipped_bytes_total', {}, r.bytesShipped, add];
    yield ['offloop_replica_failing', {}, r.lastError === null ? 0 : 1, add];
    const lease = r.leaseHolder === null ? 'none' : r.fenced ? 'fenced' : 'held';
    yield ['offloop_replica_lease', { state: lease }, 1, add];
  }
  const f = s.follow;
  if (f !== null) {
    yield ['offloop_follower_staleness_seconds', {}, f.stalenessMs / 1000, keepMax];
    yield ['offloop_follower_failing', {}, f.lastError === null ? 0 : 1, add];
  }
}

// The scrape-time metrics: name → [type, help, label names besides `db`].
const READ_ON_SCRAPE = {
  offloop_open_databases: ['Gauge', 'Databases open in this process', []],
  offloop_connections: ['Gauge', 'SQLite connections open, by the role of their thread', ['role']],
  offloop_threads: ['Gauge', "offloop's threads, by role: sql (the process's pool of SQLite threads, shared by every database), replicator", ['role']],
  offloop_queued_jobs: ['Gauge', 'Jobs waiting in a queue now, by the role of the thread they wait for', ['role']],
  offloop_jobs_total: ['Counter', 'Jobs run by the open databases, by thread role', ['role']],
  offloop_queue_wait_max_seconds: ['Gauge', 'The longest wait of a job in a queue so far, by thread role', ['role']],
  offloop_checkpoints_total: ['Counter', 'WAL checkpoints run by the checkpointer threads of the open databases', []],
  offloop_checkpoint_frames_total: ['Counter', 'WAL frames copied into the database files by checkpoints', []],
  offloop_checkpoint_max_seconds: ['Gauge', 'The longest checkpoint so far', []],
  offloop_checkpointer_failed: ['Gauge', 'Databases whose checkpointer thread stopped (the writer checkpoints)', []],
  offloop_wal_bytes: ['Gauge', 'Bytes in the WAL files', []],
  offloop_wal_frames: ['Gauge', 'Frames in the WAL files', []],
  offloop_replica_lag_seconds: ['Gauge', 'How long the oldest commit not yet in the replica has waited (the largest)', []],
  offloop_replica_pending_bytes: ['Gauge', 'Bytes waiting for upload to the replica', []],
  offloop_replica_shipped_bytes_total: ['Counter', 'Bytes uploaded to the replica', []],
  offloop_replica_failing: ['Gauge', 'Replicating databases whose last upload or lease renewal failed', []],
  offloop_replica_lease: ['Gauge', 'Replicating databases by lease state: none, held, fenced', ['state']],
  offloop_follower_staleness_seconds: ['Gauge', 'How long since a follower last knew it had the newest TXID (the largest)', []],
  offloop_follower_failing: ['Gauge', 'Followers whose last poll failed', []],
};

/** offloop/metrics for one copy of `prom-client`. */
function createMetrics(client) {
  /**
   * Adds offloop's metrics to `registry`. `options.databases`: the paths
   * of the databases that get series of their own (label `db`, the
   * absolute path); every other database counts only in the series
   * without `db`. Returns a function that unsubscribes and removes them.
   */
  function register(registry, options = {}) {
    if (typeof registry?.registerMetric !== 'function') throw new TypeError('registry must be a prom-client Registry');
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
    const listed = new Set();
    for (const location of options.databases ?? []) {
      if (typeof location !== 'string') throw new TypeError('options.databases must list database paths (strings)');
      listed.add(absolutePath(location));
    }
    const seriesOf = (database, labels) => (listed.has(database) ? { ...labels, db: database } : labels);
    const registers = [registry];

    const calls = new client.Counter({
      name: 'offloop_calls_total',
      help: 'Calls settled, by method, outcome (ok or error) and the role of the thread that ran them (none: no single thread)',
      labelNames: ['method', 'outcome', 'role', 'db'],
      registers,
    });
    const duration = new client.Histogram({
      name: 'offloop_call_duration_seconds',
      help: 'From the call to its settlement, as the JS thread sees it, by method',
      labelNames: ['method', 'db'],
      buckets: BUCKETS,
      registers,
    });
    const queueWait = new client.Histogram({
      name: 'offloop_queue_wait_seconds',
      help: "A statement's wait in its thread's queue, by thread role",
      labelNames: ['role', 'db'],
      buckets: BUCKETS,
      registers,
    });
    const runTime = new client.Histogram({
      name: 'offloop_run_seconds',
      help: "A statement's run on its thread, by thread role",
      labelNames: ['role', 'db'],
      buckets: BUCKETS,
      registers,
    });

    const started = new WeakMap();
    const subscriptions = OPERATIONS.map((operation) => {
      const channel = diagnosticsChannel.tracingChannel(`offloop:${operation}`);
      const settled = (ctx) => {
        const start = started.get(ctx);
        if (start === undefined) return;
        started.delete(ctx);
        const role = roleOf(ctx);
        calls.inc(seriesOf(ctx.database, { method: ctx.method, outcome: 'error' in ctx ? 'error' : 'ok', role }));
        duration.observe(seriesOf(ctx.database, { method: ctx.method }), Number(process.hrtime.bigint() - start) / 1e9);
        if (typeof ctx.queueWait === 'number') queueWait.observe(seriesOf(ctx.database, { role }), ctx.queueWait / 1000);
        if (typeof ctx.runTime === 'number') runTime.observe(seriesOf(ctx.database, { role }), ctx.runTime / 1000);
      };
      const handlers = {
        start: (ctx) => started.set(ctx, process.hrtime.bigint()),
        // A call that threw before it was queued ends here; others at asyncEnd.
        end: (ctx) => {
          if ('error' in ctx) settled(ctx);
        },
        asyncEnd: settled,
      };
      channel.subscribe(handlers);
      return { channel, handlers };
    });

    // The stats are read once per scrape, by whichever metric prom-client
    // collects first (it collects them all in one turn of the event loop).
    let reading = null;
    const readAll = () => {
      if (reading !== null) return reading;
      const sums = {};
      for (const name of Object.keys(READ_ON_SCRAPE)) sums[name] = new Map();
      for (const core of openCores((core) => core.state === CLOSED)) {
        let stats;
        try {
          stats = databaseStats(core.native);
        } catch {
          continue; // Closed since it was counted.
        }
        const database = databasePath(core);
        for (const [name, labels, value, merge] of readings(stats)) merge(sums[name], seriesOf(database, labels), value);
      }
      // The pool runs every database's connections: its threads belong to
      // none of them.
      const { threads } = processStats();
      if (threads > 0) add(sums.offloop_threads, { role: 'sql' }, threads);
      reading = sums;
      setImmediate(() => {
        reading = null;
      });
      return sums;
    };
    for (const [name, [type, help, labelNames]] of Object.entries(READ_ON_SCRAPE)) {
      const counter = type === 'Counter';
      new client[type]({
        name,
        help,
        labelNames: [...labelNames, 'db'],
        registers,
        collect() {
          this.reset();
          for (const { labels, value } of readAll()[name].values()) {
            if (counter) this.inc(labels, value);
            else this.set(labels, value);
          }
        },
      });
    }

    let registered = true;
    return function unregister() {
      if (!registered) return;
      registered = false;
      for (const { channel, handlers } of subscriptions) channel.unsubscribe(handlers);
      for (const name of ['offloop_calls_total', 'offloop_call_duration_seconds', 'offloop_queue_wait_seconds', 'offloop_run_seconds', ...Object.keys(READ_ON_SCRAPE)]) {
        registry.removeSingleMetric(name);
      }
    };
  }

  return { register };
}

module.exports = { createMetrics };
