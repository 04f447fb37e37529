// The declarations of index.d.ts, for ES module importers: here 'import'
// resolves each library to its own ES module types, which a CommonJS
// declaration file cannot reach.


import type { SqlDriverAdapter, SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';

import type { Database, TransactionMode } from '../../index.js';

export interface PrismaOffloopOptions {
  /** BEGIN mode of interactive and batch transactions. Default 'immediate'. */
  transactionMode?: TransactionMode;
}

/** `new PrismaClient({ adapter: new PrismaOffloop(db) })`. */
export declare class PrismaOffloop implements SqlDriverAdapterFactory {
  readonly provider: 'sqlite';
  readonly adapterName: string;
  constructor(db: Database, options?: PrismaOffloopOptions);
  connect(): Promise<SqlDriverAdapter>;
}
