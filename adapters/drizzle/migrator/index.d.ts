// Types of offloop/drizzle/migrator.

import type { MigrationConfig } from 'drizzle-orm/migrator';

import type { OffloopDatabase } from '../index.js';

/** Applies drizzle-kit's migrations folder, all in one write transaction. */
export declare function migrate<TSchema extends Record<string, unknown>>(db: OffloopDatabase<TSchema>, config: MigrationConfig): Promise<void>;
