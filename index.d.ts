// Public types of offloop. The reference is docs/api.md.

import { EventEmitter } from 'node:events';

export type SQLInputValue = null | number | bigint | string | boolean | ArrayBufferView | ArrayBuffer;
export type SQLOutputValue = null | number | bigint | string | Uint8Array;
export type NamedParameters = Record<string, SQLInputValue>;
export type Row = Record<string, SQLOutputValue>;

export interface StatementOptions {
  readBigInts?: boolean;
  returnArrays?: boolean;
  allowBareNamedParameters?: boolean;
  allowUnknownNamedParameters?: boolean;
}

export interface CheckpointOptions {
  /** WAL frames waiting that trigger a PASSIVE checkpoint. Default 1000. */
  thresholdFrames?: number;
  /** A pause in writes this long copies the rest. Default 100. */
  idleMs?: number;
  /** WAL frames past which the writer waits for a checkpoint. Default 3000. */
  backstopFrames?: number;
}

export interface DatabaseOptions extends StatementOptions {
  /** Reader threads, 0–64. Default: one per CPU the process may use, at least 2 and at most 4. */
  readers?: number;
  /**
   * Nice value (0–19) of the writer, reader and checkpointer threads, on
   * Linux. Above 0, the event loop's thread gets the CPU first when the
   * machine is saturated, at some cost to query throughput. Default 0.
   */
  threadNice?: number;
  readOnly?: boolean;
  /** Busy timeout in ms. Default 5000. */
  timeout?: number;
  /** Another name for `timeout` (PRAGMA busy_timeout). */
  busyTimeout?: number;
  enableForeignKeyConstraints?: boolean;
  /** Another name for `enableForeignKeyConstraints` (PRAGMA foreign_keys). */
  foreignKeys?: boolean;
  enableDoubleQuotedStringLiterals?: boolean;
  defensive?: boolean;
  /** false: created closed, opened by `db.open()`. Default true. */
  open?: boolean;
  /** Allow `db.loadExtension()`. Default false. */
  allowExtension?: boolean;
  /** SQLite limits set on every connection at open. */
  limits?: Partial<Limits>;
  /** PRAGMA journal_size_limit in bytes, -1 for none. Default 64 MiB. */
  journalSizeLimit?: number;
  /** Bound every call to this many ms from the call; 0 (default) for none. */
  queryTimeout?: number;
  /** Roll back a transaction idle this many ms. Default 30000. */
  transactionIdleTimeout?: number;
  /**
   * How long close() waits for open transactions and read snapshots to end
   * before rolling them back, in ms. Default 10000.
   */
  closeTimeout?: number;
  /** PRAGMA journal_mode, set by the writer. Default 'wal' for a writable file. */
  journalMode?: JournalMode | Uppercase<JournalMode>;
  /** PRAGMA synchronous on the writer and checkpointer. Default 'normal' in WAL. */
  synchronous?: SynchronousLevel | Uppercase<SynchronousLevel>;
  /** PRAGMA mmap_size in bytes (>= 0), on the writer and readers. Up to 64 GiB is honoured. */
  mmapSize?: number;
  /** PRAGMA cache_size (pages, or KiB when negative), on the writer and readers. */
  cacheSize?: number;
  /** PRAGMA temp_store on the writer and readers. */
  tempStore?: TempStore | Uppercase<TempStore>;
  /** Any other pragmas, applied first, on the writer and readers. */
  pragmas?: Record<string, string | number | boolean>;
  /** Fail the open when a setting read back differs from the request. Default false. */
  strictSettings?: boolean;
  /** false turns the checkpointer thread off. Default true. */
  checkpoint?: boolean | CheckpointOptions;
  /** Replicate every commit continuously to a Litestream-compatible replica. */
  replica?: ReplicaOptions;
  /**
   * When the file is missing, open it from `replica` (or, for a follower,
   * from `follow.url`): page by page with a background fill ('paged'), or
   * after a full download ('full'). A follower restores a missing file
   * 'full' unless this is 'paged'; a paged follower applies new TXIDs
   * during the fill.
   */
  restore?: 'paged' | 'full';
  /**
   * Follow a replica another process writes: the database is read-only to
   * the application and applies each new TXID as it appears. Not with
   * `replica`.
   */
  follow?: FollowOptions;
}

export interface FollowOptions extends S3Options {
  /** 'file:///absolute/dir' or 's3://bucket/prefix'. */
  url: string;
  /** Milliseconds between checks for the next TXID. Default 1000. */
  pollInterval?: number;
  /**
   * Milliseconds; while the follower last held the newest TXID longer ago
   * than this, calls reject with ERR_OFFLOOP_STALE. Default: no bound.
   */
  maxStaleness?: number;
  /** 'auto': promote to the replica's writer once its lease expired (emits 'promoted'). */
  promote?: 'auto';
  /** Milliseconds; the lease the database holds once promoted. Default 10000, at least 3000. */
  leaseTtl?: number;
  /** The promoted writer's durability. Default 'local'. */
  durability?: 'local' | 'replica';
  /** Milliseconds between the promoted writer's uploads, as `replica.syncInterval`. Default 1000. */
  syncInterval?: number;
  /** The promoted writer's `replica.gatherWindow` (ms). Default 4. */
  gatherWindow?: number;
}

export interface CatchUpOptions {
  /** Resolve once this TXID (or a later one) is applied. */
  txid?: number;
  /** Milliseconds; rejects with a TimeoutError DOMException. 0 for none. */
  timeout?: number;
  /** Rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface FollowStats {
  url: string;
  /** The TXID the database is at. */
  txid: number;
  /** Milliseconds since the follower last knew it held the replica's newest TXID. */
  stalenessMs: number;
  /** Ms since the epoch, or null before the first check. */
  lastCheckAt: number | null;
  /** Ms since the epoch of the last applied file, or null. */
  appliedAt: number | null;
  requests: { list: number; get: number };
  bytesFetched: number;
  lastError: string | null;
  /** Where the open set aside the old primary's file this path held (a rejoin), or null. */
  keptFile: string | null;
}

/** What a 'promoted' event (and `db.promote()`) carries: the replica's TXID promoted at. */
export interface PromotedEvent {
  txid: number;
}

/** What an 'applied' event carries: the TXID the database is at now, the pages written. */
export interface AppliedEvent {
  txid: number;
  pages: number;
}

/**
 * S3 connection settings. Each one left out falls back to the replica URL's
 * query, then to the usual AWS_* environment variable.
 */
export interface S3Options {
  /** AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL; default AWS. */
  endpoint?: string;
  /** AWS_REGION / AWS_DEFAULT_REGION; default 'us-east-1'. */
  region?: string;
  /** AWS_ACCESS_KEY_ID. */
  accessKeyId?: string;
  /** AWS_SECRET_ACCESS_KEY. */
  secretAccessKey?: string;
  /** AWS_SESSION_TOKEN. */
  sessionToken?: string;
  /** Bucket in the path, not the host name. Default: true when an endpoint is given. */
  forcePathStyle?: boolean;
}

export interface ReplicaOptions extends S3Options {
  /** 'file:///absolute/dir' or 's3://bucket/prefix'. */
  url: string;
  /** Milliseconds between uploads of new commits. Default 1000. */
  syncInterval?: number;
  /** Milliseconds between full snapshots (L9). Default 86_400_000 (a day). */
  snapshotInterval?: number;
  /** Milliseconds of history kept restorable. Default 86_400_000 (a day). */
  retention?: number;
  /** Compaction intervals of L1, L2, ... in ms (at most 8). Default [30_000, 300_000, 3_600_000]. */
  compactionIntervals?: number[];
  /**
   * Bytes waiting for upload beyond which they are dropped and the replica
   * starts again from a snapshot once it answers. Default 1 GiB.
   */
  maxPendingBytes?: number;
  /**
   * The replica's lease's TTL in ms (at least 3000), renewed every third of
   * it: only this database writes to the replica. Past a missed renewal,
   * writes reject ERR_OFFLOOP_FENCED until one lands; for good once another
   * writer took the lease. Default 10_000.
   */
  leaseTtl?: number;
  /**
   * false: take no lease (a backup no other writer takes over): writes go
   * on whatever the replica does. Not with `durability: 'replica'` or
   * `leaseTtl`. Default true.
   */
  lease?: boolean;
  /**
   * 'replica': a write (run, exec, batch, a transaction's commit) resolves
   * only once its commit is in the replica. Default 'local'.
   */
  durability?: 'local' | 'replica';
  /**
   * With durability 'replica': how long (ms) an upload may wait for the
   * writers the last upload answered to commit again, so that they share
   * it (group commit). 0: start as soon as one write waits. Default 4.
   */
  gatherWindow?: number;
}

export interface RestoreOptions extends S3Options {
  /** Restore the state at this TXID (it must end a replica file). */
  txid?: number;
  /** Restore the last state written strictly before this time. */
  timestamp?: Date | string | number;
  /** Replace an existing file. Default false. */
  overwrite?: boolean;
}

export interface ReplicaResult {
  /** The replica's TXID (Litestream's unit of sync). */
  txid: number;
}

/** `db.stats().restore`: a paged restore's progress. */
export interface RestoreStats {
  /** Pages in the local file. */
  pagesLocal: number;
  /** Pages of the database at the restored TXID. */
  pagesTotal: number;
  /** Bytes read from the replica (page indexes and pages). */
  bytesFetched: number;
  /** Ranged reads made. */
  requests: number;
  /** True once every page is local. */
  filled: boolean;
  /** Why the last page read failed, until one succeeds. */
  lastError: string | null;
}

export interface ReplicaStats {
  url: string;
  /** The last TXID in the replica (0: none yet). */
  txid: number;
  /** How long the oldest commit not yet in the replica has waited. */
  lagMs: number;
  /** Files staged on local disk, waiting for upload. */
  pendingFiles: number;
  /** Bytes waiting: staged files and captured pages. */
  pendingBytes: number;
  bytesShipped: number;
  /** Uploads that made writes waiting for the replica durable (durability 'replica'). */
  durableRounds: number;
  /** Writes those uploads made durable: durableWrites / durableRounds writes share an upload. */
  durableWrites: number;
  /** When the last upload succeeded (ms since the epoch), or null. */
  lastSyncAt: number | null;
  /** What is wrong with the replica now, or null. */
  lastError: string | null;
  /** This database's name in the replica's lease, or null without a lease. */
  leaseHolder: string | null;
  /** True once it may no longer hold the lease: writes reject ERR_OFFLOOP_FENCED. */
  fenced: boolean;
}

export interface RunResult {
  changes: number | bigint;
  lastInsertRowid: number | bigint;
}

/** What `stmt.query()` resolves to. */
export interface QueryResult<T = Row> {
  /** The result columns' metadata; empty for a statement without columns. */
  columns: ColumnInfo[];
  rows: T[];
  /** Rows changed by the statement; 0 when it changed none. */
  changes: number | bigint;
  /** The last inserted rowid; 0 when the statement changed no row. */
  lastInsertRowid: number | bigint;
}

export interface ColumnInfo {
  column: string | null;
  database: string | null;
  name: string;
  table: string | null;
  type: string | null;
}

export interface CheckpointResult {
  logFrames: number;
  checkpointedFrames: number;
}

export interface RoleStats {
  executed: number;
  sharedReads: number;
  buffered: number;
  openCursors: number;
  queued: number;
  waitMeanMs: number;
  waitMaxMs: number;
}

export interface CheckpointStats {
  active: boolean;
  runs: number;
  framesCopied: number;
  lastMs: number;
  maxMs: number;
  walFrames: number;
  walBytes: number;
  writerCatchUps: number;
  writerCatchUpMaxMs: number;
  backstops: number;
  backstopMaxMs: number;
  lockWaits: number;
  error: string | null;
}

export type JournalMode = 'delete' | 'truncate' | 'persist' | 'memory' | 'wal' | 'off';
export type SynchronousLevel = 'off' | 'normal' | 'full' | 'extra';
export type TempStore = 'default' | 'file' | 'memory';

/** One connection's settings, as read back on it. */
export interface ConnectionSettings {
  busyTimeout: number;
  journalMode: JournalMode;
  synchronous: SynchronousLevel;
  journalSizeLimit: number;
  foreignKeys: boolean;
  /** null on an in-memory database. */
  mmapSize: number | null;
  cacheSize: number;
  tempStore: TempStore;
  /** Each of `options.pragmas`, as read back (null: no value). */
  pragmas: Record<string, string | number | null>;
}

export interface DatabaseSettings {
  writer: ConnectionSettings;
  readers: ConnectionSettings[];
  /** null when no checkpointer runs. */
  checkpointer: ConnectionSettings | null;
}

/** Emitted through process.emitWarning when a setting in force differs from the request. */
export interface OffloopSettingWarning extends Error {
  name: 'OffloopSettingWarning';
  /** `OFFLOOP_SETTING_` + the pragma's name in capitals. */
  code: string;
  /** The pragma's name, e.g. 'mmap_size'. */
  setting: string;
  requested: string | number | boolean | null;
  effective: string | number | boolean | null;
  /** 'writer', 'reader 0', ..., 'checkpointer'. */
  connections: string[];
}

/** `Database.stats()`: the process-wide view. */
export interface ProcessStats {
  /** Databases open now. */
  databases: number;
  /** SQLite connections open, every database together. */
  connections: number;
  /** offloop's SQLite threads alive (the pool's and its timer's). */
  threads: number;
  /** Writers, readers and checkpointers with work waiting for a pool thread. */
  queued: number;
  /** The most pool threads (`Database.configure({ threads })`). */
  threadLimit: number;
  /** The most connections kept open (`Database.configure({ connections })`). */
  connectionLimit: number;
  /** Milliseconds an idle connection stays open (`Database.configure({ idleTimeout })`). */
  idleTimeout: number;
}

/** `Database.configure()`: process-wide settings; each left out keeps its value, `null` restores its default. */
export interface ConfigureOptions {
  /** The most SQLite threads, 1 to 1024; `null`: four per core, from 8 to 64. */
  threads?: number | null;
  /** The most SQLite connections kept open, 16 to 1,000,000; `null`: what the open-files limit allows. */
  connections?: number | null;
  /** Milliseconds an idle connection stays open before it closes, 1 to 86,400,000; `null`: 30,000. */
  idleTimeout?: number | null;
}

export interface DatabaseStats {
  writer: RoleStats;
  readers: RoleStats[];
  readerQueue: number;
  checkpoint: CheckpointStats;
  /** null when the database does not replicate. */
  replica: ReplicaStats | null;
  /** Null unless the database was opened with restore: 'paged' from its replica. */
  restore: RestoreStats | null;
  /** null when the database does not follow a replica. */
  follow: FollowStats | null;
  /**
   * How completions wake the event loop, the same for every database of
   * the process: 'libuv' in Node, 'threadsafe-function' in Bun and Deno.
   */
  waker: 'libuv' | 'threadsafe-function';
  /**
   * Completions handed to this JS thread (the main thread or a worker),
   * every database it uses together: drains a wake-up of its event loop
   * started, and those a linger caught before the loop blocked.
   */
  drains: DrainStats;
}

export interface DrainStats {
  woken: number;
  lingered: number;
}

export type CheckpointMode = 'PASSIVE' | 'FULL' | 'RESTART' | 'TRUNCATE';

export interface CallOptions {
  /** Aborts the call: a queued one never runs, a running one is interrupted. */
  signal?: AbortSignal;
  /** Milliseconds from the call; 0 for none. Overrides `queryTimeout`. */
  timeout?: number;
}

export type TransactionMode = 'deferred' | 'immediate' | 'exclusive';

/** `[statementOrSql, params]`: params spread when an array, else the one argument. */
export type BatchEntry =
  | [Statement | string]
  | [Statement | string, Array<SQLInputValue | NamedParameters> | NamedParameters | SQLInputValue];

export type BatchResult = RunResult | Row[];

/** SQLite's limits, by node:sqlite's names (`db.limits`, `options.limits`). */
export interface Limits {
  length: number;
  sqlLength: number;
  column: number;
  exprDepth: number;
  compoundSelect: number;
  vdbeOp: number;
  functionArg: number;
  attach: number;
  likePatternLength: number;
  variableNumber: number;
  triggerDepth: number;
}

export declare class Statement {
  private constructor();
  /** The statement's own SQL: the text up to the end of its first statement. */
  readonly sourceSQL: string;
  /** The SQL with the last call's values bound in place of its parameters. */
  readonly expandedSQL: Promise<string>;
  /** Finalizes the statement: later calls reject with ERR_INVALID_STATE. */
  close(): void;
  [Symbol.dispose](): void;
  /** The same statement, with cancellation applied to its calls. */
  withOptions(options: CallOptions): Statement;
  run(...params: Array<SQLInputValue | NamedParameters>): Promise<RunResult>;
  get<T = Row>(...params: Array<SQLInputValue | NamedParameters>): Promise<T | undefined>;
  all<T = Row>(...params: Array<SQLInputValue | NamedParameters>): Promise<T[]>;
  iterate<T = Row>(...params: Array<SQLInputValue | NamedParameters>): AsyncIterableIterator<T>;
  /** Any statement: its columns, rows and changes, in one round trip. */
  query<T = Row>(...params: Array<SQLInputValue | NamedParameters>): Promise<QueryResult<T>>;
  columns(): Promise<ColumnInfo[]>;
  setReadBigInts(enabled: boolean): void;
  setReturnArrays(enabled: boolean): void;
  setAllowBareNamedParameters(enabled: boolean): void;
  setAllowUnknownNamedParameters(enabled: boolean): void;
}

/** What a user function may return: undefined and null are NULL. */
export type SQLFunctionResult = null | undefined | number | bigint | string | ArrayBufferView | ArrayBuffer;

export interface FunctionOptions {
  /** SQLITE_DETERMINISTIC: the same arguments always give the same result (usable in indexes). */
  deterministic?: boolean;
  /** SQLITE_DIRECTONLY: refused in views, triggers and schema expressions. */
  directOnly?: boolean;
  /** Pass INTEGER arguments as BigInts. */
  useBigIntArguments?: boolean;
  /** Any number of arguments, instead of `fn.length`. */
  varargs?: boolean;
}

export interface AggregateOptions<T = unknown> extends FunctionOptions {
  /** The accumulator of a new group, or a function returning it. */
  start: T | (() => T);
  /** Returns the next accumulator. */
  step: (accumulator: T, ...args: SQLOutputValue[]) => T;
  /** Makes it a window function: takes a row leaving the window out. */
  inverse?: (accumulator: T, ...args: SQLOutputValue[]) => T;
  /** The result from the accumulator (default: the accumulator itself). */
  result?: (accumulator: T) => SQLFunctionResult;
}

/** Statements made from tagged templates; values are always bound. */
export declare class SQLTagStore {
  private constructor();
  run(strings: readonly string[], ...values: SQLInputValue[]): Promise<RunResult>;
  get<T = Row>(strings: readonly string[], ...values: SQLInputValue[]): Promise<T | undefined>;
  all<T = Row>(strings: readonly string[], ...values: SQLInputValue[]): Promise<T[]>;
  iterate<T = Row>(strings: readonly string[], ...values: SQLInputValue[]): AsyncIterableIterator<T>;
  clear(): void;
  readonly size: number;
  readonly capacity: number;
  readonly db: Database;
}

/** node:sqlite's constants: changeset conflict and authorizer codes. */
export declare const constants: Readonly<Record<string, number>>;

/** `backup()`'s options; the defaults are node:sqlite's. */
export interface BackupOptions {
  /** The schema copied from. Default 'main'. */
  source?: string;
  /** The schema copied into. Default 'main'. */
  target?: string;
  /** Pages copied per step. Default 100. */
  rate?: number;
  /** Called between steps with the source's page count and the pages left. */
  progress?: (progress: { totalPages: number; remainingPages: number }) => void;
}

/** node:sqlite's `backup()`: `sourceDb.backup(path, options)`. */
export declare function backup(sourceDb: Database, path: string | Uint8Array | URL, options?: BackupOptions): Promise<number>;

/** Records the writer's changes; made by `db.createSession()`. */
export declare class Session {
  private constructor();
  /** The changes recorded so far, as a changeset. */
  changeset(): Promise<Uint8Array>;
  /** The changes recorded so far, as a patchset. */
  patchset(): Promise<Uint8Array>;
  close(): Promise<void>;
  /** Queues close() without waiting for it. */
  [Symbol.dispose](): void;
}

export interface CreateSessionOptions {
  /** Record only this table. Default: every table. */
  table?: string;
  /** The schema. Default 'main'. */
  db?: string;
}

export interface DeserializeOptions {
  /** The schema the image replaces. Default 'main'. */
  dbName?: string;
}

export interface ApplyChangesetOptions {
  /** Whether the changes to `tableName` apply. Default: every table's do. */
  filter?: (tableName: string) => unknown;
  /** SQLITE_CHANGESET_OMIT, _REPLACE or _ABORT for a conflict of `kind`. Default: abort. */
  onConflict?: (kind: number) => number;
}

export declare class Database extends EventEmitter {
  constructor(path: string | Uint8Array | URL, options?: DatabaseOptions);
  static open(path: string | Uint8Array | URL, options?: DatabaseOptions): Promise<Database>;
  static readonly sqliteVersion: string;
  /** The check-in the bundled SQLite was built from, as sqlite_source_id() returns it. */
  static readonly sqliteSourceId: string;
  /** Restores a replica into a new database file; refuses to overwrite unless asked. */
  static restore(url: string, path: string | Uint8Array | URL, options?: RestoreOptions): Promise<ReplicaResult>;
  /** What the bundled SQLite was compiled with (PRAGMA compile_options). */
  static compileOptions(): string[];
  /** The process-wide view: open databases and connections, SQLite threads, work waiting for a thread. */
  static stats(): ProcessStats;
  /** Process-wide settings (the bound on SQLite threads). */
  static configure(options: ConfigureOptions): void;
  readonly ready: Promise<Database>;
  /** Resolves once every page is local (at once unless a paged restore's fill runs). */
  readonly filled: Promise<void>;
  readonly isOpen: boolean;
  /** The file behind schema `dbName` ('main', or an attached database); null for in-memory ones. */
  location(dbName?: string): string | null;
  /** Opens a database made with `open: false`, or closed since. */
  open(): Promise<Database>;
  /** SQLite's limits, live on every connection; Infinity restores a default. */
  readonly limits: Limits;
  enableDefensive(active: boolean): void;
  /**
   * Asks `callback` about each action of every statement prepared from now
   * on, on every connection, after offloop's own authorizers; null removes it.
   */
  setAuthorizer(
    callback:
      | ((actionCode: number, arg1: string | null, arg2: string | null, dbName: string | null, triggerOrView: string | null) => number)
      | null,
  ): void;
  enableLoadExtension(allow: boolean): void;
  /** Loads a SQLite extension on every connection; resolves once the writer has. */
  loadExtension(path: string, entryPoint?: string): Promise<void>;
  /** True while a transaction from `begin()` or `transaction()` is open, or the writer is inside one begun with `exec('BEGIN')`. */
  readonly isTransaction: boolean;
  prepare(sql: string, options?: StatementOptions): Statement;
  /** Defines a SQL function on every connection; each call runs on the JS thread. */
  function(name: string, fn: (...args: SQLOutputValue[]) => SQLFunctionResult): void;
  function(name: string, options: FunctionOptions, fn: (...args: SQLOutputValue[]) => SQLFunctionResult): void;
  /** Defines an aggregate (a window function with `inverse`) on every connection. */
  aggregate<T>(name: string, options: AggregateOptions<T>): void;
  /** Starts recording the changes the writer makes from now on. */
  createSession(options?: CreateSessionOptions): Session;
  /** Applies a changeset on the writer; false when a conflict aborted it. */
  applyChangeset(changeset: Uint8Array, options?: ApplyChangesetOptions): Promise<boolean>;
  /** Schema `dbName`'s ('main') whole database as bytes, taken on the writer. */
  serialize(dbName?: string): Promise<Uint8Array>;
  /** Replaces a schema with an in-memory copy of `buffer`; only without reader threads or a replica. */
  deserialize(buffer: Uint8Array, options?: DeserializeOptions): Promise<void>;
  /** Statements made from tagged templates (default capacity 1000). */
  createTagStore(maxSize?: number): SQLTagStore;
  exec(sql: string, options?: CallOptions): Promise<void>;
  transaction<T>(fn: (tx: Transaction) => Promise<T> | T, options?: { mode?: TransactionMode }): Promise<T>;
  /** Begins a write transaction; resolves once BEGIN has run. End it with commit() or rollback(). */
  begin(options?: { mode?: TransactionMode }): Promise<Transaction>;
  batch(statements: BatchEntry[]): Promise<BatchResult[]>;
  read<T>(fn: (snapshot: ReadSnapshot) => Promise<T> | T): Promise<T>;
  checkpoint(mode?: CheckpointMode | Lowercase<CheckpointMode>): Promise<CheckpointResult>;
  stopCheckpointer(): Promise<void>;
  /** Copies the database into `path` on a thread of its own; resolves to the page count. */
  backup(path: string | Uint8Array | URL, options?: BackupOptions): Promise<number>;
  stats(): DatabaseStats;
  /** Every connection's settings, read back now on its own thread. */
  settings(): Promise<DatabaseSettings>;
  /** Ships every commit made so far; resolves once they are all in the replica. */
  syncReplica(): Promise<ReplicaResult>;
  /** Starts replicating an open database. */
  replicate(options: ReplicaOptions): Promise<ReplicaResult>;
  /** Ships what was committed, then stops replicating. */
  stopReplicating(): Promise<ReplicaResult>;
  /** A follower: resolves once `txid` is applied, or (no txid) once a check found nothing more. */
  catchUp(options?: CatchUpOptions): Promise<ReplicaResult>;
  /** A follower becomes its replica's writer; resolves once writes work. */
  promote(): Promise<PromotedEvent>;
  /** A follower applied a file. */
  on(event: 'applied', listener: (event: AppliedEvent) => void): this;
  /** A follower with `promote: 'auto'` became the replica's writer. */
  on(event: 'promoted', listener: (event: PromotedEvent) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A write transaction: from `db.begin()`, or passed to a `db.transaction()` callback. */
export declare class Transaction {
  private constructor();
  prepare(sql: string, options?: StatementOptions): Statement;
  exec(sql: string): Promise<void>;
  batch(statements: BatchEntry[]): Promise<BatchResult[]>;
  /** A SAVEPOINT: released when `fn` resolves, rolled back to when it rejects. */
  transaction<T>(fn: (tx: Transaction) => Promise<T> | T): Promise<T>;
  /** SAVEPOINT "name" (any non-empty string, quoted). */
  savepoint(name: string): Promise<void>;
  /** RELEASE "name". */
  release(name: string): Promise<void>;
  /** ROLLBACK TO "name"; the savepoint stays open. */
  rollbackTo(name: string): Promise<void>;
  /** COMMIT; rejects once the transaction has ended. */
  commit(): Promise<void>;
  /** ROLLBACK; resolves doing nothing once the transaction has ended. */
  rollback(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The handle `db.read()` passes to its callback: reads from one snapshot. */
export declare class ReadSnapshot {
  private constructor();
  prepare(sql: string, options?: StatementOptions): Statement;
}

/** The operations with a tracing channel of their own, `offloop:<operation>` (docs/observability.md). */
export type TracedOperation =
  | 'query'
  | 'exec'
  | 'transaction'
  | 'batch'
  | 'read'
  | 'checkpoint'
  | 'sync'
  | 'restore'
  | 'promote'
  | 'open';

/** What every `offloop:<operation>` channel's context holds. */
export interface TraceContext {
  /** The call's name: 'get', 'exec', 'transaction', 'begin', 'syncReplica', … */
  method: string;
  /** The database file's absolute path (':memory:' for an in-memory one). */
  database: string;
  /** Set once the call resolved: its value. */
  result?: unknown;
  /** Set when it failed: the error its caller gets. */
  error?: unknown;
}

/** The context of `offloop:query`: `get`, `all`, `run`, `iterate`, `query`. */
export interface QueryTraceContext extends TraceContext {
  method: 'get' | 'all' | 'run' | 'iterate' | 'query';
  /** The statement's source text, never with values written in. */
  sql: string;
  /** The call's arguments, as given. */
  parameters: unknown[];
  statement: Statement;
  /** The context of the transaction or read snapshot it runs in (when traced), or null. */
  parent: OperationTraceContext | null;
  /** Set once it ran: the thread that ran it ('offloop-writer', 'offloop-reader-2'). */
  thread?: string;
  /** Set once it ran: milliseconds it waited in that thread's queue. */
  queueWait?: number;
  /** Set once it ran: milliseconds it ran on that thread. */
  runTime?: number;
  /** Set on success: rows returned (not for `iterate`). */
  rows?: number;
  /** Set on success of `run` and `query`. */
  changes?: number | bigint;
}

/** The context of the other channels; each has the fields of its operation. */
export interface OperationTraceContext extends TraceContext {
  /** `exec`: the script. */
  sql?: string;
  /** `exec`, `batch`: the context of the transaction it runs in (when traced), or null. */
  parent?: OperationTraceContext | null;
  /** `transaction`: the BEGIN mode; `checkpoint`: the checkpoint mode. */
  mode?: string;
  /** `transaction`, `read`: the handle, once it exists. */
  transaction?: Transaction | ReadSnapshot | null;
  /** `batch`: how many statements. */
  statements?: number;
  /** `restore`: the replica's URL. */
  url?: string;
}
