'use strict';

// offloop/drizzle for CommonJS: the driver built on require('drizzle-orm').

const { createDrizzle } = require('./driver.js');

module.exports = createDrizzle({ orm: require('drizzle-orm'), sqlite: require('drizzle-orm/sqlite-core') });
