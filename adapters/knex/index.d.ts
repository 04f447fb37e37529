// Types of offloop/knex: Knex's sqlite3 client on offloop/sqlite3.

import type { Knex } from 'knex';

/** `knex({ client: OffloopClient, connection: { filename, offloop } })`. */
declare const OffloopClient: typeof Knex.Client;
export = OffloopClient;
