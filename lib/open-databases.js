'use strict';

// The databases of this JS environment that were opened and not closed
// yet, for the metrics collector (lib/metrics.js) to read their stats on a
// scrape. It holds each one weakly: a database nobody references can still
// be collected. It never opens, closes or calls a database.

const cores = new Set();

/** Counts `core` (lib/core.js, made by an open) until `isClosed(core)` says it closed. */
function remember(core) {
  cores.add(new WeakRef(core));
}

/** The cores not closed (the others are dropped on the way). */
function openCores(isClosed) {
  const open = [];
  for (const ref of cores) {
    const core = ref.deref();
    if (core === undefined || isClosed(core)) cores.delete(ref);
    else open.push(core);
  }
  return open;
}

module.exports = { remember, openCores };
