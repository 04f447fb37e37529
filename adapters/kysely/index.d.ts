// Types of offloop/kysely: a Kysely dialect on an offloop database.

import type { DatabaseConnection, DatabaseIntrospector, Dialect, DialectAdapter, Driver, Kysely, MigrationLockOptions, QueryCompiler } from 'kysely';
import type { SqliteAdapter, SqliteDriver } from 'kysely';

import type { Database, TransactionMode } from '../../index.js';

export interface OffloopDialectConfig {
  /** An offloop Database, or a function returning one (or a promise of one), called on the first query. */
  database: Database | (() => Database | Promise<Database>);
  /** BEGIN mode of Kysely's transactions. Default 'deferred' (SqliteDialect's `begin`). */
  transactionMode?: TransactionMode;
}

/** `new Kysely({ dialect: new OffloopDialect({ database }) })`. */
export declare class OffloopDialect implements Dialect {
  constructor(config: OffloopDialectConfig);
  createDriver(): Driver;
  createQueryCompiler(): QueryCompiler;
  createAdapter(): DialectAdapter;
  createIntrospector(db: Kysely<any>): DatabaseIntrospector;
}

/**
 * Kysely's SQLite adapter with multiple connections; migrations run outside
 * a transaction, as on SqliteAdapter, and migrators of one process take
 * turns on a lock per offloop Database.
 */
export declare class OffloopAdapter extends SqliteAdapter {
  get supportsMultipleConnections(): boolean;
  acquireMigrationLock(db: Kysely<any>, options: MigrationLockOptions): Promise<void>;
  releaseMigrationLock(db: Kysely<any>, options: MigrationLockOptions): Promise<void>;
}

/**
 * The driver OffloopDialect creates: Kysely's SqliteDriver, whose begin,
 * commit, rollback and savepoint methods it keeps, with one connection
 * object per acquire and no lock. Transaction control goes through the
 * connection's executeQuery, so Kysely's log sees it.
 */
export declare class OffloopDriver extends SqliteDriver {
  init(): Promise<void>;
  acquireConnection(): Promise<DatabaseConnection>;
  releaseConnection(): Promise<void>;
  destroy(): Promise<void>;
}
