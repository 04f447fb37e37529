// Types of offloop/prisma: a Prisma 7 driver adapter on an offloop database.

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
