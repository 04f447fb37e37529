// The declarations of index.d.ts, for ES module importers: here 'import'
// resolves each library to its own ES module types, which a CommonJS
// declaration file cannot reach.


import type { DatabaseConnection, DatabaseIntrospector, Dialect, DialectAdapter, Driver, Kysely, QueryCompiler } from 'kysely';
import type { SqliteAdapter } from 'kysely';

import type { Database, TransactionMode } from '../../index.js';

export interface OffloopDialectConfig {
  /** An offloop Database, or a function returning one (or a promise of one), called on the first query. */
  database: Database | (() => Database | Promise<Database>);
  /** BEGIN mode of Kysely's transactions. Default 'immediate'. */
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

/** Kysely's SQLite adapter with multiple connections and transactional DDL. */
export declare class OffloopAdapter extends SqliteAdapter {
  get supportsMultipleConnections(): boolean;
  get supportsTransactionalDdl(): boolean;
}

/** The driver OffloopDialect creates: one connection object per acquire, no lock. */
export declare class OffloopDriver implements Driver {
  constructor(config: OffloopDialectConfig);
  init(): Promise<void>;
  acquireConnection(): Promise<DatabaseConnection>;
  beginTransaction(connection: DatabaseConnection): Promise<void>;
  commitTransaction(connection: DatabaseConnection): Promise<void>;
  rollbackTransaction(connection: DatabaseConnection): Promise<void>;
  savepoint(connection: DatabaseConnection, name: string): Promise<void>;
  rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void>;
  releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void>;
  releaseConnection(): Promise<void>;
  destroy(): Promise<void>;
}
