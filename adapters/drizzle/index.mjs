// offloop/drizzle for ES modules: the driver built on Drizzle's ES build.

import * as orm from 'drizzle-orm';
import * as sqlite from 'drizzle-orm/sqlite-core';

import driver from './driver.js';

export const { drizzle, OffloopDatabase, OffloopSession, OffloopTransaction, OffloopPreparedQuery } = driver.createDrizzle({ orm, sqlite });
