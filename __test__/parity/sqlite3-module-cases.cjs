'use strict';

// The module-shape cases of the sqlite3 differential test
// (sqlite3-differential.test.mjs), in the form of sqlite3-cases.cjs:
// shared-cache in-memory databases (OPEN_SHAREDCACHE).

const { encode, step } = require('./sqlite3-cases.cjs');

const cases = {
  'open/sharedcache-in-memory': async (sqlite3, ctx) => {
    const base = sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    for (const [label, file, mode] of [
      [':memory: with OPEN_SHAREDCACHE', ':memory:', base | sqlite3.OPEN_SHAREDCACHE],
      [':memory: with OPEN_SHAREDCACHE and OPEN_URI', ':memory:', base | sqlite3.OPEN_SHAREDCACHE | sqlite3.OPEN_URI],
      ['file::memory: with OPEN_SHAREDCACHE', 'file::memory:', base | sqlite3.OPEN_SHAREDCACHE | sqlite3.OPEN_URI],
      ['file::memory: without it', 'file::memory:', base | sqlite3.OPEN_URI],
      ['a named memory URI with OPEN_SHAREDCACHE', 'file:sc-named?mode=memory', base | sqlite3.OPEN_SHAREDCACHE | sqlite3.OPEN_URI],
      ['a named memory URI with cache=shared', 'file:sc-cache?mode=memory&cache=shared', base | sqlite3.OPEN_URI],
      ['cache=private wins over OPEN_SHAREDCACHE', 'file:sc-private?mode=memory&cache=private', base | sqlite3.OPEN_SHAREDCACHE | sqlite3.OPEN_URI],
    ]) {
      const a = ctx.done(new sqlite3.Database(file, mode));
      const b = ctx.done(new sqlite3.Database(file, mode));
      const made = await step((cb) => a.run('CREATE TABLE made_by_a(x)', cb));
      const seen = await step((cb) => b.all("SELECT name FROM sqlite_schema WHERE name = 'made_by_a'", cb));
      ctx.log(label, encode(made.args), encode(seen.args));
    }
  },
};

module.exports = { cases };
