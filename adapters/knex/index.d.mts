// Types of offloop/knex for ES module importers: the client as the default export.

import type { Knex } from 'knex';

/** `knex({ client: OffloopClient, connection: { filename, offloop } })`. */
declare const OffloopClient: typeof Knex.Client;
export default OffloopClient;
