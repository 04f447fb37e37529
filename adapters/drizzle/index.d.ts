// Types of offloop/drizzle: Drizzle ORM's async SQLite database on offloop.

import type { DrizzleConfig } from 'drizzle-orm';
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';

import type { Database, RunResult, TransactionMode } from '../../index.js';

export interface OffloopDrizzleConfig<TSchema extends Record<string, unknown> = Record<string, never>> extends DrizzleConfig<TSchema> {
  /** BEGIN mode of `db.transaction()` when it gives no `behavior`. Default 'immediate'. */
  transactionMode?: TransactionMode;
}

/** What `drizzle()` returns: `run()` resolves to offloop's `{ changes, lastInsertRowid }`. */
export declare class OffloopDatabase<TSchema extends Record<string, unknown> = Record<string, never>> extends BaseSQLiteDatabase<
  'async',
  RunResult,
  TSchema
> {
  /** Several queries in one message to the writer, in one transaction. */
  batch<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(batch: T): Promise<BatchResponse<T>>;
}

export declare function drizzle<TSchema extends Record<string, unknown> = Record<string, never>>(
  client: Database,
  config?: OffloopDrizzleConfig<TSchema>,
): OffloopDatabase<TSchema> & { $client: Database };
