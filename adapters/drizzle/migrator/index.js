'use strict';

// offloop/drizzle/migrator for CommonJS: migrate() built on require('drizzle-orm/migrator').

const { createMigrator } = require('./migrate.js');

module.exports = createMigrator(require('drizzle-orm/migrator'));
