'use strict';

// offloop/kysely for CommonJS: the dialect built on require('kysely').

const { createKyselyDialect } = require('./dialect.js');

module.exports = createKyselyDialect(require('kysely'));
