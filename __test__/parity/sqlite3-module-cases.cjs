'use strict';

// The module-shape cases of the sqlite3 differential test
// (sqlite3-differential.test.mjs), in the form of sqlite3-cases.cjs: the
// names each class answers to, cached.Database and verbose(), the async
// resource of every kind of callback, calls on a database whose open
// failed, and shared-cache in-memory databases (OPEN_SHAREDCACHE).

const { createHook, executionAsyncId } = require('node:async_hooks');

const { encode, step } = require('./sqlite3-cases.cjs');

// offloop's additions to the module and to a Database (docs/sqlite3.md),
// left out of the comparison.
const ADDITIONS = new Set(['withOptions', 'offloop', 'stats']);

/** Every name an object answers to up its prototype chain, with its kind. */
function members(prototype) {
  const seen = new Map();
  for (let p = prototype; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (seen.has(name)) continue;
      const d = Object.getOwnPropertyDescriptor(p, name);
      seen.set(name, d.get !== undefined ? (d.set !== undefined ? 'get/set' : 'get') : typeof d.value);
    }
  }
  return [...seen].filter(([name]) => !ADDITIONS.has(name)).sort(([a], [b]) => (a < b ? -1 : 1));
}

// How long a case waits to see that calls which must never call back do
// not: long past any callback either module makes at once.
const SETTLE_MS = 200;

const cases = {
  'module/names-of-every-class': async (sqlite3, ctx) => {
    ctx.log(
      Object.keys(sqlite3)
        .filter((k) => !ADDITIONS.has(k))
        .sort()
        .map((k) => [k, typeof sqlite3[k]]),
    );
    for (const name of ['Database', 'Statement', 'Backup']) {
      const cls = sqlite3[name];
      ctx.log(name, cls.name, cls.length, members(cls.prototype));
    }
    ctx.log('cached', Object.keys(sqlite3.cached).sort(), typeof sqlite3.cached.Database);
    ctx.log('verbose', sqlite3.verbose() === sqlite3, sqlite3.verbose() === sqlite3);
  },

  'module/cached-database-is-one-per-file': async (sqlite3, ctx) => {
    const file = ctx.file('cached.db');
    const seen = [];
    const first = await new Promise((resolve) => {
      const db = sqlite3.cached.Database(file, function (err) {
        seen.push(['first', encode(err), this === db]);
        resolve(db);
      });
    });
    ctx.done(first);
    const second = await new Promise((resolve) => {
      const db = sqlite3.cached.Database(file, sqlite3.OPEN_READWRITE, function (err) {
        seen.push(['second', encode(err), this === db]);
        resolve(db);
      });
    });
    const memory = [sqlite3.cached.Database(':memory:'), sqlite3.cached.Database(':memory:')];
    ctx.done(memory[0]);
    ctx.done(memory[1]);
    ctx.log(seen, first === second, memory[0] === memory[1], sqlite3.cached.objects[file] === first);
    delete sqlite3.cached.objects[file];
  },

  'module/async-resources-of-every-callback': async (sqlite3, ctx) => {
    const types = new Map();
    const hook = createHook({
      init(id, type) {
        if (type.startsWith('sqlite3.')) types.set(id, type);
      },
    }).enable();
    const where = [];
    const here = (label) => where.push([label, types.get(executionAsyncId()) ?? null]);
    try {
      const db = await new Promise((resolve) => {
        const d = new sqlite3.Database(ctx.file('hooks.db'), () => {
          here('open');
          resolve(d);
        });
      });
      await step((cb) => db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1), (2)', cb));
      await step((cb) => db.wait(() => cb(here('wait'))));
      const stmt = await new Promise((resolve) => {
        const s = db.prepare('SELECT v FROM t WHERE v > ?', () => {
          here('prepare');
          resolve(s);
        });
      });
      await step((cb) => stmt.bind(0, () => cb(here('bind'))));
      await step((cb) => stmt.get(() => cb(here('get'))));
      await step((cb) => stmt.reset(() => cb(here('reset'))));
      await step((cb) => stmt.all(() => cb(here('all'))));
      await step((cb) => stmt.map(() => cb(here('map'))));
      await step((cb) => stmt.run(() => cb(here('run'))));
      await step((cb) => stmt.finalize(() => cb(here('finalize'))));
      const backup = await new Promise((resolve) => {
        const b = db.backup(ctx.file('copy.db'), () => {
          here('backup init');
          resolve(b);
        });
      });
      await step((cb) => backup.step(-1, () => cb(here('backup step'))));
      await step((cb) => backup.finish(() => cb(here('backup finish'))));
      await step((cb) => db.close(() => cb(here('close'))));
    } finally {
      hook.disable();
    }
    ctx.log(where);
  },

  'module/async-resources-of-each-callbacks': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.exec('CREATE TABLE t(v); INSERT INTO t VALUES (1), (2)', cb));
    const types = new Map();
    const hook = createHook({
      init(id, type) {
        if (type.startsWith('sqlite3.')) types.set(id, type);
      },
    }).enable();
    const where = [];
    const here = (label) => where.push([label, types.get(executionAsyncId()) ?? null]);
    try {
      await step((cb) => db.each('SELECT v FROM t', () => here('row'), () => cb(here('end'))));
      const stmt = db.prepare('SELECT v FROM t');
      await step((cb) => stmt.each(() => here('statement row'), () => cb(here('statement end'))));
      await step((cb) => stmt.finalize(cb));
    } finally {
      hook.disable();
    }
    ctx.log(where);
  },

  'module/calls-on-a-database-whose-open-failed-never-run': async (sqlite3, ctx) => {
    const seen = [];
    const db = new sqlite3.Database(ctx.file('missing.db'), sqlite3.OPEN_READWRITE, (err) => seen.push(['open', encode(err)]));
    db.on('error', (err) => seen.push(['error event', encode(err)]));
    db.run('SELECT 1', (err) => seen.push(['run', encode(err)]));
    db.get('SELECT 1', (err) => seen.push(['get', encode(err)]));
    db.exec('SELECT 1', (err) => seen.push(['exec', encode(err)]));
    db.prepare('SELECT 1', (err) => seen.push(['prepare', encode(err)]));
    db.wait((err) => seen.push(['wait', encode(err)]));
    db.close((err) => seen.push(['close', encode(err)]));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    ctx.log(seen, db.open);
  },

  'module/every-call-after-close': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(ctx.file('closed.db'));
    await step((cb) => db.close(cb));
    const seen = [];
    db.on('error', (err) => seen.push(['error event', encode(err)]));
    const called = (label) => (err) => seen.push([label, encode(err)]);
    db.run('SELECT 1', called('run'));
    db.get('SELECT 1', called('get'));
    db.all('SELECT 1', called('all'));
    db.each('SELECT 1', called('each row'), called('each end'));
    db.map('SELECT 1', called('map'));
    db.exec('SELECT 1', called('exec'));
    db.wait(called('wait'));
    db.loadExtension('nowhere', called('loadExtension'));
    db.close(called('close'));
    const stmt = db.prepare('SELECT 1', called('prepare'));
    const backup = db.backup(ctx.file('copy.db'), called('backup'));
    db.configure('busyTimeout', 10);
    for (const [label, fn] of [
      ['interrupt', () => db.interrupt()],
      ['serialize', () => db.serialize()],
      ['parallelize', () => db.parallelize()],
    ]) {
      try {
        seen.push([label, fn() === db]);
      } catch (err) {
        seen.push([label, 'throws', encode(err)]);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    ctx.log(seen, db.open, stmt instanceof sqlite3.Statement, backup instanceof sqlite3.Backup);
  },

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
