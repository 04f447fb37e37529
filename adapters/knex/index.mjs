// offloop/knex for ES modules: the Knex client class as the default export.

import Client from './index.js';

export default Client;
