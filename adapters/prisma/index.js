'use strict';

// offloop/prisma for CommonJS: the adapter built on
// require('@prisma/driver-adapter-utils').

const { createPrismaAdapter } = require('./adapter.js');

module.exports = createPrismaAdapter(require('@prisma/driver-adapter-utils'));
