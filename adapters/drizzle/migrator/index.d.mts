// The declarations of index.d.ts, for ES module importers: here 'import'
// resolves each library to its own ES module types, which a CommonJS
// declaration file cannot reach.


import type { MigrationConfig } from 'drizzle-orm/migrator';

import type { OffloopDatabase } from '../index.mjs';

/** Applies drizzle-kit's migrations folder, all in one write transaction. */
export declare function migrate<TSchema extends Record<string, unknown>>(db: OffloopDatabase<TSchema>, config: MigrationConfig): Promise<void>;
