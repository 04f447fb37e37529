// Public types of offloop. The reference is docs/api.md.

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
  /** WAL frames past which the writer waits for a checkpoint. Default 10000. */
  backstopFrames?: number;
}

export interface DatabaseOptions extends StatementOptions {
  /** Reader threads, 0–64. Default 4. */
  readers?: number;
  readOnly?: boolean;
  /** Busy timeout in ms. Default 5000. */
  timeout?: number;
  enableForeignKeyConstraints?: boolean;
  enableDoubleQuotedStringLiterals?: boolean;
  defensive?: boolean;
  /** PRAGMA journal_size_limit in bytes, -1 for none. Default 64 MiB. */
  journalSizeLimit?: number;
  /** false turns the checkpointer thread off. Default true. */
  checkpoint?: boolean | CheckpointOptions;
}

export interface RunResult {
  changes: number | bigint;
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
  error: string | null;
}

export interface DatabaseStats {
  writer: RoleStats;
  readers: RoleStats[];
  readerQueue: number;
  checkpoint: CheckpointStats;
}

export type CheckpointMode = 'PASSIVE' | 'FULL' | 'RESTART' | 'TRUNCATE';

export declare class Statement {
  private constructor();
  readonly sourceSQL: string;
  run(...params: Array<SQLInputValue | NamedParameters>): Promise<RunResult>;
  get<T = Row>(...params: Array<SQLInputValue | NamedParameters>): Promise<T | undefined>;
  all<T = Row>(...params: Array<SQLInputValue | NamedParameters>): Promise<T[]>;
  iterate<T = Row>(...params: Array<SQLInputValue | NamedParameters>): AsyncIterableIterator<T>;
  columns(): Promise<ColumnInfo[]>;
  setReadBigInts(enabled: boolean): void;
  setReturnArrays(enabled: boolean): void;
  setAllowBareNamedParameters(enabled: boolean): void;
  setAllowUnknownNamedParameters(enabled: boolean): void;
}

export declare class Database {
  constructor(path: string | Uint8Array | URL, options?: DatabaseOptions);
  static open(path: string | Uint8Array | URL, options?: DatabaseOptions): Promise<Database>;
  static readonly sqliteVersion: string;
  readonly ready: Promise<Database>;
  readonly isOpen: boolean;
  location(): string | null;
  prepare(sql: string, options?: StatementOptions): Statement;
  exec(sql: string): Promise<void>;
  checkpoint(mode?: CheckpointMode | Lowercase<CheckpointMode>): Promise<CheckpointResult>;
  stopCheckpointer(): Promise<void>;
  stats(): DatabaseStats;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
