'use strict';

// Validation of the options objects, with node:sqlite's error messages.

const os = require('node:os');

const { argType, nodeError, outOfRange } = require('./errors.js');

const { readLimitOptions } = require('./limits.js');
const { checkpoint: CHECKPOINT, flag: FLAG } = require('./protocol.js');

// In the order node:sqlite checks them (the first bad one is reported);
// `timeout`, an integer, is checked in its place among them.
const BOOLEAN_OPTIONS = [
  ['readOnly', false],
  ['enableForeignKeyConstraints', true],
  ['enableDoubleQuotedStringLiterals', false],
  ['timeout', null],
  ['readBigInts', false],
  ['returnArrays', false],
  ['allowBareNamedParameters', true],
  ['allowUnknownNamedParameters', false],
  ['defensive', true],
];

const STATEMENT_OPTIONS = ['returnArrays', 'readBigInts', 'allowBareNamedParameters', 'allowUnknownNamedParameters'];

// The engine's defaults (crates/engine/src/settings/mod.rs), read once.
const DEFAULTS = require('../native.js').defaults();
// Readers when the caller does not say: one per CPU this process may use,
// at least 2 (one slow read must not hold up every other) and at most the
// engine's default (4). On 2 cores, 2 readers serve one-row reads with 64 in
// flight about 1.5x faster than 4 (the JS thread needs a core too), and a
// CPU-heavy read as fast (docs/performance.md, "Reader count").
const MIN_DEFAULT_READERS = 2;
const DEFAULT_READERS = Math.min(DEFAULTS.readers, Math.max(MIN_DEFAULT_READERS, os.availableParallelism()));
const DEFAULT_TIMEOUT_MS = DEFAULTS.timeout;
const DEFAULT_JOURNAL_SIZE_LIMIT = DEFAULTS.journalSizeLimit;
const CHECKPOINT_DEFAULTS = {
  thresholdFrames: DEFAULTS.checkpointThresholdFrames,
  idleMs: DEFAULTS.checkpointIdleMs,
  backstopFrames: DEFAULTS.checkpointBackstopFrames,
};
// A transaction whose callback issues nothing for this long is rolled back:
// long enough for any real work between two statements, short enough that
// the classic deadlock (awaiting the database inside its own transaction)
// turns into an error before a client gives up.
const DEFAULT_TRANSACTION_IDLE_TIMEOUT_MS = 30000;
// How long close() waits for open transactions and snapshots to end before
// rolling them back: a server shutting down gives requests in flight a few
// seconds, and a transaction longer than this is stuck rather than busy.
const DEFAULT_CLOSE_TIMEOUT_MS = 10000;
// More reader threads than this only add connections and memory.
const MAX_READERS = 64;
const MAX_INT32 = 0x7fffffff;

function readInteger(options, name, fallback, min, max, prefix = 'options.') {
  const value = options[name];
  if (value === undefined) return fallback;
  if (!Number.isInteger(value)) throw argType(`${prefix}${name}`, 'an integer');
  if (value < min || value > max) throw outOfRange(`${prefix}${name}`, min, max, value);
  return value;
}

// `checkpoint: false` turns the checkpointer thread off; an object tunes it.
function readCheckpointOptions(value) {
  if (value === undefined || value === true) value = {};
  if (value === false) return { enabled: false, ...CHECKPOINT_DEFAULTS };
  if (value === null || typeof value !== 'object') {
    throw argType('options.checkpoint', 'a boolean or an object');
  }
  return {
    enabled: true,
    thresholdFrames: readInteger(value, 'thresholdFrames', CHECKPOINT_DEFAULTS.thresholdFrames, 1, MAX_INT32, 'options.checkpoint.'),
    idleMs: readInteger(value, 'idleMs', CHECKPOINT_DEFAULTS.idleMs, 1, MAX_INT32, 'options.checkpoint.'),
    backstopFrames: readInteger(value, 'backstopFrames', CHECKPOINT_DEFAULTS.backstopFrames, 1, MAX_INT32, 'options.checkpoint.'),
  };
}

// `open`, `allowExtension` and `limits`, checked first, as node:sqlite does.
function readNodeOptions(options, out) {
  const { open, allowExtension } = options;
  if (open !== undefined && typeof open !== 'boolean') throw argType('options.open', 'a boolean');
  if (allowExtension !== undefined && typeof allowExtension !== 'boolean') {
    throw argType('options.allowExtension', 'a boolean');
  }
  out.open = open ?? true;
  out.allowExtension = allowExtension ?? false;
  out.limits = readLimitOptions(options.limits);
}

// ---------------------------------------------------------------------------
// Replication (`replica`, `db.replicate()`, `Database.restore()`).

const DEFAULT_SYNC_INTERVAL_MS = 1000;
const DAY_MS = 86_400_000;
// Litestream's default compaction levels: L1 every 30 s, L2 every 5 min,
// L3 every hour.
const DEFAULT_COMPACTION_INTERVALS_MS = [30_000, 300_000, 3_600_000];
// Levels 1 to 8 compact; 9 holds snapshots.
const MAX_COMPACTION_LEVELS = 8;
// 1 GiB waiting for upload at most (see docs/replication.md).
const DEFAULT_MAX_PENDING_BYTES = 1024 * 1024 * 1024;
// The lease's TTL when none is named, and its least: the holder stops a
// second (the clock-skew bound) before its lease expires and renews every
// third of it (see docs/replication.md).
const DEFAULT_LEASE_TTL_MS = 10_000;
const MIN_LEASE_TTL_MS = 3000;
const DURABILITIES = ['local', 'replica'];
const S3_TEXT_OPTIONS = ['endpoint', 'region', 'accessKeyId', 'secretAccessKey', 'sessionToken'];

const CHECKPOINT_MODES = { __proto__: null, ...CHECKPOINT };

/** `db.checkpoint(mode)`'s mode, as its protocol code. */
function readCheckpointMode(mode) {
  if (typeof mode !== 'string') throw argType('mode', 'a string');
  const code = CHECKPOINT_MODES[mode.toUpperCase()];
  if (code === undefined) {
    throw nodeError(
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      `The argument 'mode' must be one of PASSIVE, FULL, RESTART, TRUNCATE. Received '${mode}'`,
    );
  }
  return code;
}

/** `options.restore`: undefined, 'paged' or 'full'. */
function readRestoreMode(options) {
  const value = options.restore;
  if (value === undefined || value === 'paged' || value === 'full') return value;
  if (typeof value !== 'string') throw argType('options.restore', "'paged' or 'full'");
  throw invalidValue('options.restore', `must be 'paged' or 'full'. Received '${value}'`);
}

/** Checks a replica URL: `file:///absolute/dir` or `s3://bucket/prefix`. */
function readReplicaUrl(value, name) {
  if (typeof value !== 'string') throw argType(name, 'a string');
  let url;
  try {
    url = new URL(value);
  } catch {
    throw invalidValue(name, `is not a URL. Received '${value}'`);
  }
  if (url.protocol === 'file:') {
    if (url.host !== '' || url.pathname === '/' || url.search !== '') {
      throw invalidValue(name, `must be file:///absolute/dir. Received '${value}'`);
    }
  } else if (url.protocol === 's3:') {
    if (url.hostname === '' || url.search !== '') {
      throw invalidValue(name, `must be s3://bucket/prefix. Received '${value}'`);
    }
  } else {
    throw invalidValue(name, `must be a file: or s3: URL. Received '${value}'`);
  }
  return value;
}

/**
 * The S3 settings of a replica or restore options object, as `out.s3`:
 * the one shape the addon reads them in (its `S3Connection`).
 */
function readS3Options(value, prefix, out) {
  const s3 = {};
  for (const name of S3_TEXT_OPTIONS) {
    const v = value[name];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw argType(`${prefix}${name}`, 'a string');
    s3[name] = v;
  }
  const forcePathStyle = value.forcePathStyle;
  if (forcePathStyle !== undefined && typeof forcePathStyle !== 'boolean') {
    throw argType(`${prefix}forcePathStyle`, 'a boolean');
  }
  s3.forcePathStyle = forcePathStyle;
  out.s3 = s3;
  return out;
}

/** `options.replica` (or `db.replicate(options)`), defaults filled in. */
function readReplicaOptions(value, prefix = 'options.replica.') {
  if (value === null || typeof value !== 'object') throw argType(prefix.slice(0, -1), 'an object');
  const out = { url: readReplicaUrl(value.url, `${prefix}url`) };
  out.syncIntervalMs = readInteger(value, 'syncInterval', DEFAULT_SYNC_INTERVAL_MS, 1, MAX_INT32, prefix);
  out.snapshotIntervalMs = readInteger(value, 'snapshotInterval', DAY_MS, 1, Number.MAX_SAFE_INTEGER, prefix);
  out.retentionMs = readInteger(value, 'retention', DAY_MS, 1, Number.MAX_SAFE_INTEGER, prefix);
  out.maxPendingBytes = readInteger(
    value,
    'maxPendingBytes',
    DEFAULT_MAX_PENDING_BYTES,
    1,
    Number.MAX_SAFE_INTEGER,
    prefix,
  );
  const intervals = value.compactionIntervals;
  if (intervals === undefined) {
    out.compactionIntervalsMs = DEFAULT_COMPACTION_INTERVALS_MS;
  } else {
    const name = `${prefix}compactionIntervals`;
    if (!Array.isArray(intervals)) throw argType(name, 'an array of integers');
    if (intervals.length > MAX_COMPACTION_LEVELS) {
      throw invalidValue(name, `may list at most ${MAX_COMPACTION_LEVELS} levels (L1 to L8).`);
    }
    out.compactionIntervalsMs = intervals.map((ms, i) => {
      if (!Number.isInteger(ms)) throw argType(`${name}[${i}]`, 'an integer');
      if (ms < 1 || ms > Number.MAX_SAFE_INTEGER) throw outOfRange(`${name}[${i}]`, 1, Number.MAX_SAFE_INTEGER, ms);
      return ms;
    });
  }
  const { durability } = value;
  if (durability !== undefined && !DURABILITIES.includes(durability)) {
    if (typeof durability !== 'string') throw argType(`${prefix}durability`, "'local' or 'replica'");
    throw invalidValue(`${prefix}durability`, `must be 'local' or 'replica'. Received '${durability}'`);
  }
  out.durable = durability === 'replica';
  // Absent: the addon's default (4 ms), named once, in the replica crate.
  out.gatherWindowMs = readInteger(value, 'gatherWindow', undefined, 0, MAX_INT32, prefix);
  // Every writer that replicates holds the replica's lease, unless told
  // `lease: false` (a backup no other writer takes over).
  const { lease } = value;
  if (lease !== undefined && typeof lease !== 'boolean') throw argType(`${prefix}lease`, 'a boolean');
  if (lease === false) {
    if (out.durable) throw invalidValue(`${prefix}lease`, "must not be false with durability: 'replica', which needs the lease");
    if (value.leaseTtl !== undefined) throw invalidValue(`${prefix}leaseTtl`, 'has no meaning with lease: false');
  } else {
    out.leaseTtlMs = readInteger(value, 'leaseTtl', DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS, MAX_INT32, prefix);
  }
  readS3Options(value, prefix, out);
  return out;
}

const DEFAULT_POLL_INTERVAL_MS = 1000;

/** `options.follow`, defaults filled in (`maxStaleness` undefined: no bound). */
function readFollowOptions(value, prefix = 'options.follow.') {
  if (value === null || typeof value !== 'object') throw argType(prefix.slice(0, -1), 'an object');
  const out = { url: readReplicaUrl(value.url, `${prefix}url`) };
  out.pollIntervalMs = readInteger(value, 'pollInterval', DEFAULT_POLL_INTERVAL_MS, 1, MAX_INT32, prefix);
  out.maxStalenessMs = readInteger(value, 'maxStaleness', undefined, 1, Number.MAX_SAFE_INTEGER, prefix);
  const { promote } = value;
  if (promote !== undefined && promote !== 'auto') {
    if (typeof promote !== 'string') throw argType(`${prefix}promote`, "'auto'");
    throw invalidValue(`${prefix}promote`, `must be 'auto'. Received '${promote}'`);
  }
  out.promote = promote;
  readS3Options(value, prefix, out);
  // The replica options of the writer a promotion makes: the same replica,
  // the lease it holds, its durability and how often it uploads.
  const writer = {
    url: value.url,
    leaseTtl: value.leaseTtl ?? DEFAULT_LEASE_TTL_MS,
    durability: value.durability,
    syncInterval: value.syncInterval,
    gatherWindow: value.gatherWindow,
  };
  for (const name of [...S3_TEXT_OPTIONS, 'forcePathStyle']) writer[name] = value[name];
  out.writer = readReplicaOptions(writer, prefix);
  return out;
}

/** `db.catchUp(options)`: `{ txid, timeout, signal }`, each optional. */
function readCatchUpOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  const { txid, signal } = options;
  if (txid !== undefined && (!Number.isSafeInteger(txid) || txid < 0)) {
    throw argType('options.txid', 'a non-negative integer');
  }
  const timeout = readInteger(options, 'timeout', 0, 0, MAX_INT32);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw argType('options.signal', 'an AbortSignal');
  return { txid, timeout, signal };
}

/** `Database.restore(url, path, options)` options. */
function readRestoreOptions(options) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  const out = {};
  const { txid, timestamp, overwrite } = options;
  if (txid !== undefined) {
    if (!Number.isSafeInteger(txid) || txid < 1) throw argType('options.txid', 'a positive integer');
    out.txid = txid;
  }
  if (timestamp !== undefined) {
    const ms = timestamp instanceof Date ? timestamp.getTime() : typeof timestamp === 'string' ? Date.parse(timestamp) : timestamp;
    if (!Number.isFinite(ms)) throw argType('options.timestamp', 'a Date, an ISO date string or milliseconds since the epoch');
    out.timestampMs = ms;
  }
  if (out.txid !== undefined && out.timestampMs !== undefined) {
    throw invalidValue('options.txid', 'and options.timestamp cannot both be set.');
  }
  if (overwrite !== undefined && typeof overwrite !== 'boolean') throw argType('options.overwrite', 'a boolean');
  out.overwrite = overwrite === true;
  readS3Options(options, 'options.', out);
  return out;
}

function readOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw argType('options', 'an object');
  }
  const out = {};
  readNodeOptions(options, out);
  for (const [name, fallback] of BOOLEAN_OPTIONS) {
    const value = options[name];
    if (name === 'timeout') out.timeout = readBusyTimeout(options);
    else if (value === undefined) out[name] = fallback;
    else if (typeof value !== 'boolean') throw argType(`options.${name}`, 'a boolean');
    else out[name] = value;
  }
  out.readers = readInteger(options, 'readers', DEFAULT_READERS, 0, MAX_READERS);
  out.threadNice = readInteger(options, 'threadNice', 0, 0, 19);
  out.journalSizeLimit = readInteger(
    options,
    'journalSizeLimit',
    DEFAULT_JOURNAL_SIZE_LIMIT,
    -1,
    Number.MAX_SAFE_INTEGER,
  );
  out.checkpoint = readCheckpointOptions(options.checkpoint);
  out.queryTimeout = readInteger(options, 'queryTimeout', 0, 0, MAX_INT32);
  out.closeTimeout = readInteger(options, 'closeTimeout', DEFAULT_CLOSE_TIMEOUT_MS, 0, MAX_INT32);
  out.transactionIdleTimeout = readInteger(
    options,
    'transactionIdleTimeout',
    DEFAULT_TRANSACTION_IDLE_TIMEOUT_MS,
    1,
    MAX_INT32,
  );
  readSettingOptions(options, out);
  out.restore = readRestoreMode(options);
  out.replica = options.replica === undefined ? undefined : readReplicaOptions(options.replica);
  if (out.replica !== undefined) {
    const why = whyNotReplicable(out);
    if (why !== null) throw invalidValue('options.replica', why);
  }
  out.follow = options.follow === undefined ? undefined : readFollowOptions(options.follow);
  if (out.follow !== undefined) {
    if (out.replica !== undefined) {
      throw invalidValue('options.follow', 'and options.replica cannot both be set: a follower only reads its replica.');
    }
    const why = whyNotReplicable(out);
    if (why !== null) throw invalidValue('options.follow', why.replace('replicate', 'follow'));
  }
  if (out.restore !== undefined && out.replica === undefined && out.follow === undefined) {
    throw invalidValue('options.restore', 'needs options.replica, the replica to restore from.');
  }
  return out;
}

// ---------------------------------------------------------------------------
// Connection settings (pragmas). Keywords are checked here; the engine
// applies each setting on the connections it belongs to and reads it back.

const JOURNAL_MODES = ['delete', 'truncate', 'persist', 'memory', 'wal', 'off'];
const SYNCHRONOUS_LEVELS = ['off', 'normal', 'full', 'extra'];
const TEMP_STORES = ['default', 'file', 'memory'];

// Pragmas that have an option of their own, or that offloop manages: the
// `pragmas` map refuses them, naming what to use instead.
const MANAGED_PRAGMAS = {
  __proto__: null,
  journal_mode: 'options.journalMode',
  synchronous: 'options.synchronous',
  mmap_size: 'options.mmapSize',
  cache_size: 'options.cacheSize',
  busy_timeout: 'options.timeout',
  journal_size_limit: 'options.journalSizeLimit',
  foreign_keys: 'options.foreignKeys',
  temp_store: 'options.tempStore',
  query_only: 'options.readOnly (reader connections are always query_only)',
  wal_autocheckpoint: 'options.checkpoint',
};

const PRAGMA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why a database opened with `options` (as readOptions returns them) cannot
 * replicate, or null: the replicator hears commits and is asked before
 * checkpoints only through the checkpointer's WAL hook on the writer.
 */
function whyNotReplicable(options) {
  if (options.readOnly) return 'cannot replicate a read-only database.';
  if (!options.checkpoint.enabled) return 'needs the checkpointer (options.checkpoint must not be false).';
  if (options.journalMode !== undefined && options.journalMode !== 'wal') return "needs journalMode 'wal'.";
  return null;
}

function invalidValue(name, message) {
  return nodeError(TypeError, 'ERR_INVALID_ARG_VALUE', `The property '${name}' ${message}`);
}

function readInt32(name, value) {
  if (!Number.isInteger(value) || value > MAX_INT32 || value < -0x80000000) {
    throw argType(name, 'an integer');
  }
  return value;
}

// `timeout` (node:sqlite's name) and `busyTimeout` (the pragma's) are one
// setting; negative means 0.
function readBusyTimeout(options) {
  const { timeout, busyTimeout } = options;
  if (timeout !== undefined) readInt32('options.timeout', timeout);
  if (busyTimeout !== undefined) readInt32('options.busyTimeout', busyTimeout);
  if (timeout !== undefined && busyTimeout !== undefined && timeout !== busyTimeout) {
    throw invalidValue(
      'options.busyTimeout',
      `is another name for options.timeout; they differ (${busyTimeout} and ${timeout}).`,
    );
  }
  const value = timeout ?? busyTimeout;
  return value === undefined ? DEFAULT_TIMEOUT_MS : Math.max(0, value);
}

function readKeyword(options, name, keywords) {
  const value = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw argType(`options.${name}`, 'a string');
  const keyword = value.toLowerCase();
  if (!keywords.includes(keyword)) {
    throw invalidValue(`options.${name}`, `must be one of ${keywords.join(', ')}. Received '${value}'`);
  }
  return keyword;
}

function readMmapSize(options) {
  const value = options.mmapSize;
  if (value === undefined) return undefined;
  if (!Number.isInteger(value)) throw argType('options.mmapSize', 'an integer');
  if (value < 0) {
    const err = outOfRange('options.mmapSize', 0, Number.MAX_SAFE_INTEGER, value);
    err.message +=
      '. SQLite reads a negative mmap_size (such as -1) as "the compile-time default", ' +
      'which is 0: it would turn memory-mapping off, not lift the limit. Pass 0 to turn it ' +
      'off, or the number of bytes to map.';
    throw err;
  }
  if (value > Number.MAX_SAFE_INTEGER) {
    throw outOfRange('options.mmapSize', 0, Number.MAX_SAFE_INTEGER, value);
  }
  return value;
}

function readPragmas(value) {
  if (value === undefined) return [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argType('options.pragmas', 'an object');
  }
  const out = [];
  for (const name of Object.keys(value)) {
    const where = `options.pragmas.${name}`;
    if (!PRAGMA_NAME.test(name)) throw invalidValue(where, 'is not a pragma name.');
    const instead = MANAGED_PRAGMAS[name.toLowerCase()];
    if (instead !== undefined) throw invalidValue(where, `is set by ${instead}.`);
    const v = value[name];
    if (typeof v === 'string' && !v.includes('\0')) out.push({ name, text: v });
    else if (typeof v === 'boolean') out.push({ name, integer: v ? 1 : 0 });
    else if (Number.isSafeInteger(v)) out.push({ name, integer: v });
    else throw argType(where, 'a string, a safe integer or a boolean');
  }
  return out;
}

function readSettingOptions(options, out) {
  // `foreignKeys` is another name for node:sqlite's enableForeignKeyConstraints.
  const { foreignKeys, enableForeignKeyConstraints } = options;
  if (foreignKeys !== undefined) {
    if (typeof foreignKeys !== 'boolean') throw argType('options.foreignKeys', 'a boolean');
    if (enableForeignKeyConstraints !== undefined && enableForeignKeyConstraints !== foreignKeys) {
      throw invalidValue(
        'options.foreignKeys',
        `is another name for options.enableForeignKeyConstraints; they differ (${foreignKeys} and ${enableForeignKeyConstraints}).`,
      );
    }
    out.enableForeignKeyConstraints = foreignKeys;
  }
  out.journalMode = readKeyword(options, 'journalMode', JOURNAL_MODES);
  out.synchronous = readKeyword(options, 'synchronous', SYNCHRONOUS_LEVELS);
  out.tempStore = readKeyword(options, 'tempStore', TEMP_STORES);
  out.mmapSize = readMmapSize(options);
  out.cacheSize = readInteger(options, 'cacheSize', undefined, -0x80000000, MAX_INT32);
  out.pragmas = readPragmas(options.pragmas);
  const strict = options.strictSettings;
  if (strict !== undefined && typeof strict !== 'boolean') throw argType('options.strictSettings', 'a boolean');
  out.strictSettings = strict === true;
}

/** Statement options over `base` (the database's), as `prepare()` takes them. */
function readStatementOptions(base, options) {
  const out = {
    readBigInts: base.readBigInts,
    returnArrays: base.returnArrays,
    allowBareNamedParameters: base.allowBareNamedParameters,
    allowUnknownNamedParameters: base.allowUnknownNamedParameters,
  };
  if (options === undefined) return out;
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  for (const name of STATEMENT_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw argType(`options.${name}`, 'a boolean');
    out[name] = value;
  }
  return out;
}

/**
 * `{ signal, timeout }` for one call (`stmt.withOptions()`, `exec()`);
 * `timeout` 0 means none, and overrides the database's `queryTimeout`.
 */
function readCallOptions(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw argType('options', 'an object');
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw argType('options.signal', 'an instance of AbortSignal');
  }
  return { signal, timeout: readInteger(options, 'timeout', undefined, 0, MAX_INT32) };
}

function readPath(location) {
  let text;
  if (typeof location === 'string') text = location;
  else if (location instanceof Uint8Array) text = Buffer.from(location).toString('utf8');
  else if (location instanceof URL) {
    if (location.protocol !== 'file:') {
      throw nodeError(TypeError, 'ERR_INVALID_URL_SCHEME', 'The URL must be of scheme file:');
    }
    text = location.href;
  }
  if (text === undefined || text.includes('\0')) {
    throw argType('path', 'a string, Uint8Array, or URL without null bytes');
  }
  return text;
}

function flagsOf(o) {
  return (
    (o.readBigInts ? FLAG.READ_BIG_INTS : 0) |
    (o.allowBareNamedParameters ? FLAG.ALLOW_BARE_NAMED : 0) |
    (o.allowUnknownNamedParameters ? FLAG.ALLOW_UNKNOWN_NAMED : 0)
  );
}

/** What the addon's `NativeDatabase` takes from options `o` (`readOptions`'s result). */
function nativeOptions(o) {
  return {
    readers: o.readers,
    readOnly: o.readOnly,
    timeout: o.timeout,
    enableForeignKeyConstraints: o.enableForeignKeyConstraints,
    enableDoubleQuotedStringLiterals: o.enableDoubleQuotedStringLiterals,
    defensive: o.defensive,
    journalSizeLimit: o.journalSizeLimit,
    checkpoint: o.checkpoint.enabled,
    checkpointThresholdFrames: o.checkpoint.thresholdFrames,
    checkpointIdleMs: o.checkpoint.idleMs,
    checkpointBackstopFrames: o.checkpoint.backstopFrames,
    journalMode: o.journalMode,
    synchronous: o.synchronous,
    mmapSize: o.mmapSize,
    cacheSize: o.cacheSize,
    tempStore: o.tempStore,
    pragmas: o.pragmas,
    strictSettings: o.strictSettings,
    threadNice: o.threadNice,
    replica: o.replica,
    restore: o.restore,
    follow: o.follow,
  };
}

module.exports = {
  nativeOptions,
  readCatchUpOptions,
  readCheckpointMode,
  readOptions,
  readReplicaOptions,
  readReplicaUrl,
  readRestoreOptions,
  readStatementOptions,
  readCallOptions,
  readPath,
  flagsOf,
  whyNotReplicable,
};
