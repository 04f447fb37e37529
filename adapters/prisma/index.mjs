// offloop/prisma for ES modules: the adapter built on the ES build of
// @prisma/driver-adapter-utils.

import * as utils from '@prisma/driver-adapter-utils';

import adapter from './adapter.js';

export const { PrismaOffloop } = adapter.createPrismaAdapter(utils);
