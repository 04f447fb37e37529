'use strict';

// Loads offloop and opens nothing, for runtimes.test.mjs's checks of how
// loading fails where the addon cannot load: it prints `loaded` if the
// load succeeds, and nothing else. Its argument: the offloop entry point.

const { Database } = require(process.argv.at(-1));

console.log(typeof Database === 'function' ? 'loaded' : 'no Database');
