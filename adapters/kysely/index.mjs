// offloop/kysely for ES modules: the dialect built on Kysely's own ES build.

import * as kysely from 'kysely';

import dialect from './dialect.js';

export const { OffloopDialect, OffloopAdapter, OffloopDriver } = dialect.createKyselyDialect(kysely);
