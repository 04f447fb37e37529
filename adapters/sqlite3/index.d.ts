// Types of offloop/sqlite3: the sqlite3 (node-sqlite3 6) module's API on
// an offloop database.

/// <reference types="node" />

import { EventEmitter } from 'node:events';

import type { Database as OffloopDatabase, DatabaseOptions } from '../../index.js';

export declare const OPEN_READONLY: number;
export declare const OPEN_READWRITE: number;
export declare const OPEN_CREATE: number;
export declare const OPEN_FULLMUTEX: number;
export declare const OPEN_SHAREDCACHE: number;
export declare const OPEN_PRIVATECACHE: number;
export declare const OPEN_URI: number;

/** The bundled SQLite's version, check-in and number (3.52.0 is 3052000). */
export declare const VERSION: string;
export declare const SOURCE_ID: string;
export declare const VERSION_NUMBER: number;
/** The file of the native addon (offloop's; sqlite3's module names its own). */
export declare const path: string;

export declare const OK: number;
export declare const ERROR: number;
export declare const INTERNAL: number;
export declare const PERM: number;
export declare const ABORT: number;
export declare const BUSY: number;
export declare const LOCKED: number;
export declare const NOMEM: number;
export declare const READONLY: number;
export declare const INTERRUPT: number;
export declare const IOERR: number;
export declare const CORRUPT: number;
export declare const NOTFOUND: number;
export declare const FULL: number;
export declare const CANTOPEN: number;
export declare const PROTOCOL: number;
export declare const EMPTY: number;
export declare const SCHEMA: number;
export declare const TOOBIG: number;
export declare const CONSTRAINT: number;
export declare const MISMATCH: number;
export declare const MISUSE: number;
export declare const NOLFS: number;
export declare const AUTH: number;
export declare const FORMAT: number;
export declare const RANGE: number;
export declare const NOTADB: number;

export declare const LIMIT_LENGTH: number;
export declare const LIMIT_SQL_LENGTH: number;
export declare const LIMIT_COLUMN: number;
export declare const LIMIT_EXPR_DEPTH: number;
export declare const LIMIT_COMPOUND_SELECT: number;
export declare const LIMIT_VDBE_OP: number;
export declare const LIMIT_FUNCTION_ARG: number;
export declare const LIMIT_ATTACHED: number;
export declare const LIMIT_LIKE_PATTERN_LENGTH: number;
export declare const LIMIT_VARIABLE_NUMBER: number;
export declare const LIMIT_TRIGGER_DEPTH: number;
export declare const LIMIT_WORKER_THREADS: number;

/** An error as sqlite3 reports it: `SQLITE_CONSTRAINT: UNIQUE constraint failed: t.x`. */
export interface SqliteError extends Error {
  /** The primary result code (19 for SQLITE_CONSTRAINT). */
  errno: number;
  /** Its name, 'SQLITE_CONSTRAINT'. */
  code: string;
}

/** offloop's options, given in place of sqlite3's mode or after it. */
export type OffloopOptions = DatabaseOptions;

export declare const cached: {
  /** One Database per file path; called with `new` or without. */
  Database: {
    (filename: string, callback?: (this: Database, err: SqliteError | null) => void): Database;
    (filename: string, mode?: number, callback?: (this: Database, err: SqliteError | null) => void): Database;
    new (filename: string, callback?: (this: Database, err: SqliteError | null) => void): Database;
    new (filename: string, mode?: number, callback?: (this: Database, err: SqliteError | null) => void): Database;
  };
  objects: Record<string, Database>;
};

/** What `this` is in a run() callback. */
export interface RunResult extends Statement {
  lastID: number;
  changes: number;
}

export declare class Statement extends EventEmitter {
  constructor(db: Database, sql: string, callback?: (this: Statement, err: SqliteError | null) => void);
  readonly sql: string;
  lastID?: number;
  changes?: number;

  bind(callback?: (err: SqliteError | null) => void): this;
  bind(...params: any[]): this;

  reset(callback?: (err: null) => void): this;

  finalize(callback?: (err?: SqliteError) => void): Database;

  run(callback?: (this: RunResult, err: SqliteError | null) => void): this;
  run(params: any, callback?: (this: RunResult, err: SqliteError | null) => void): this;
  run(...params: any[]): this;

  get<T = any>(callback?: (this: Statement, err: SqliteError | null, row?: T) => void): this;
  get<T = any>(params: any, callback?: (this: Statement, err: SqliteError | null, row?: T) => void): this;
  get(...params: any[]): this;

  all<T = any>(callback?: (this: Statement, err: SqliteError | null, rows: T[]) => void): this;
  all<T = any>(params: any, callback?: (this: Statement, err: SqliteError | null, rows: T[]) => void): this;
  all(...params: any[]): this;

  each<T = any>(
    callback?: (this: Statement, err: SqliteError | null, row: T) => void,
    complete?: (err: SqliteError | null, count: number) => void,
  ): this;
  each<T = any>(
    params: any,
    callback?: (this: Statement, err: SqliteError | null, row: T) => void,
    complete?: (err: SqliteError | null, count: number) => void,
  ): this;
  each(...params: any[]): this;

  map<T = any>(callback?: (err: SqliteError | null, result: Record<string, T>) => void): this;
  map<T = any>(params: any, callback?: (err: SqliteError | null, result: Record<string, T>) => void): this;
  map(...params: any[]): this;
}

export declare class Database extends EventEmitter {
  constructor(filename: string, callback?: (this: Database, err: SqliteError | null) => void);
  constructor(filename: string, mode?: number, callback?: (this: Database, err: SqliteError | null) => void);
  constructor(filename: string, options: OffloopOptions, callback?: (this: Database, err: SqliteError | null) => void);
  constructor(
    filename: string,
    mode: number,
    options: OffloopOptions,
    callback?: (this: Database, err: SqliteError | null) => void,
  );

  readonly filename: string;
  readonly mode: number;
  /** True once open, until closed. */
  readonly open: boolean;
  /** The offloop Database underneath. */
  readonly offloop: OffloopDatabase;
  /** offloop's `db.stats()`: work done per thread (writer, readers, checkpointer). */
  stats(): ReturnType<OffloopDatabase['stats']>;

  close(callback?: (this: Database, err: SqliteError | null) => void): this;

  run(sql: string, callback?: (this: RunResult, err: SqliteError | null) => void): this;
  run(sql: string, params: any, callback?: (this: RunResult, err: SqliteError | null) => void): this;
  run(sql: string, ...params: any[]): this;

  get<T = any>(sql: string, callback?: (this: Statement, err: SqliteError | null, row: T) => void): this;
  get<T = any>(sql: string, params: any, callback?: (this: Statement, err: SqliteError | null, row: T) => void): this;
  get(sql: string, ...params: any[]): this;

  all<T = any>(sql: string, callback?: (this: Statement, err: SqliteError | null, rows: T[]) => void): this;
  all<T = any>(sql: string, params: any, callback?: (this: Statement, err: SqliteError | null, rows: T[]) => void): this;
  all(sql: string, ...params: any[]): this;

  each<T = any>(
    sql: string,
    callback?: (this: Statement, err: SqliteError | null, row: T) => void,
    complete?: (err: SqliteError | null, count: number) => void,
  ): this;
  each<T = any>(
    sql: string,
    params: any,
    callback?: (this: Statement, err: SqliteError | null, row: T) => void,
    complete?: (err: SqliteError | null, count: number) => void,
  ): this;
  each(sql: string, ...params: any[]): this;

  map<T = any>(sql: string, callback?: (err: SqliteError | null, result: Record<string, T>) => void): this;
  map(sql: string, ...params: any[]): this;

  exec(sql: string, callback?: (this: Database, err: SqliteError | null) => void): this;

  prepare(sql: string, callback?: (this: Statement, err: SqliteError | null) => void): Statement;
  prepare(sql: string, params: any, callback?: (this: Statement, err: SqliteError | null) => void): Statement;
  prepare(sql: string, ...params: any[]): Statement;

  serialize(callback?: () => void): this;
  parallelize(callback?: () => void): this;

  on(event: 'trace', listener: (sql: string) => void): this;
  on(event: 'profile', listener: (sql: string, time: number) => void): this;
  on(event: 'change', listener: (type: string, database: string, table: string, rowid: number) => void): this;
  on(event: 'error', listener: (err: SqliteError) => void): this;
  on(event: 'open' | 'close', listener: () => void): this;
  on(event: string, listener: (...args: any[]) => void): this;

  configure(option: 'busyTimeout', value: number): this;
  configure(option: 'limit', id: number, value: number): this;

  loadExtension(filename: string, callback?: (err: SqliteError | null) => void): this;

  wait(callback?: (param: null) => void): this;

  interrupt(): this;

  backup(filename: string, callback?: (this: Backup, err: SqliteError | null) => void): Backup;
  backup(
    filename: string,
    destName: string,
    sourceName: string,
    filenameIsDest: boolean,
    callback?: (this: Backup, err: SqliteError | null) => void,
  ): Backup;
}

export declare class Backup extends EventEmitter {
  constructor(
    db: Database,
    filename: string,
    sourceName: string,
    destName: string,
    filenameIsDest: boolean,
    callback?: (this: Backup, err: SqliteError | null) => void,
  );
  readonly filename: string;
  readonly sourceName: string;
  readonly destName: string;
  readonly filenameIsDest: boolean;
  readonly idle: boolean;
  readonly completed: boolean;
  readonly failed: boolean;
  readonly remaining: number;
  readonly pageCount: number;
  retryErrors: number[];
  step(pages: number, callback?: (this: Backup, err: SqliteError | null, completed: boolean) => void): this;
  finish(callback?: (this: Backup) => void): this;
}

export declare function verbose(): sqlite3;

/** The module with `options` under every Database it opens (Sequelize's dialectModule, TypeORM's driver). */
export declare function withOptions(options: OffloopOptions): sqlite3;

export interface sqlite3 {
  Database: typeof Database;
  Statement: typeof Statement;
  Backup: typeof Backup;
  cached: typeof cached;
  verbose(): this;
  withOptions(options: OffloopOptions): sqlite3;
  OPEN_READONLY: number;
  OPEN_READWRITE: number;
  OPEN_CREATE: number;
  OPEN_FULLMUTEX: number;
  OPEN_SHAREDCACHE: number;
  OPEN_PRIVATECACHE: number;
  OPEN_URI: number;
  VERSION: string;
  SOURCE_ID: string;
  VERSION_NUMBER: number;
  path: string;
  OK: number;
  ERROR: number;
  INTERNAL: number;
  PERM: number;
  ABORT: number;
  BUSY: number;
  LOCKED: number;
  NOMEM: number;
  READONLY: number;
  INTERRUPT: number;
  IOERR: number;
  CORRUPT: number;
  NOTFOUND: number;
  FULL: number;
  CANTOPEN: number;
  PROTOCOL: number;
  EMPTY: number;
  SCHEMA: number;
  TOOBIG: number;
  CONSTRAINT: number;
  MISMATCH: number;
  MISUSE: number;
  NOLFS: number;
  AUTH: number;
  FORMAT: number;
  RANGE: number;
  NOTADB: number;
  LIMIT_LENGTH: number;
  LIMIT_SQL_LENGTH: number;
  LIMIT_COLUMN: number;
  LIMIT_EXPR_DEPTH: number;
  LIMIT_COMPOUND_SELECT: number;
  LIMIT_VDBE_OP: number;
  LIMIT_FUNCTION_ARG: number;
  LIMIT_ATTACHED: number;
  LIMIT_LIKE_PATTERN_LENGTH: number;
  LIMIT_VARIABLE_NUMBER: number;
  LIMIT_TRIGGER_DEPTH: number;
  LIMIT_WORKER_THREADS: number;
}
