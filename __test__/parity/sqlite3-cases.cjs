'use strict';

// The cases of the sqlite3 differential test (sqlite3-differential.test.mjs):
// each one drives a module with sqlite3's API through its callbacks and
// events, and writes what it saw to `log`. The same case runs on the real
// `sqlite3` package and on offloop/sqlite3; the logs must be equal. A case
// is `(sqlite3, ctx) => Promise`, with `ctx.log(...)`, `ctx.file(name)` (a
// path in a fresh folder of its own) and `ctx.done(db...)`, which closes
// databases when the case ends.

const path = require('node:path');
const { AsyncLocalStorage, createHook, executionAsyncId } = require('node:async_hooks');

/** A value as the log records it: types that deepEqual would blur are spelled out. */
function encode(value) {
  if (value === undefined) return { undefined: true };
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return { NaN: true };
    if (Object.is(value, -0)) return { negativeZero: true };
    return value;
  }
  if (typeof value === 'bigint') return { bigint: String(value) };
  if (Buffer.isBuffer(value)) return { buffer: value.toString('hex') };
  if (value instanceof Uint8Array) return { uint8array: Buffer.from(value).toString('hex') };
  if (value instanceof Error) {
    return {
      error: value.message,
      errno: value.errno,
      code: value.code,
      class: value.constructor.name,
      keys: Object.keys(value).sort(),
    };
  }
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    const out = { proto: proto === Object.prototype ? 'Object' : proto === null ? 'null' : proto.constructor?.name };
    for (const key of Object.keys(value)) out[`.${key}`] = encode(value[key]);
    return out;
  }
  return value;
}

// Callback-style steps in order: each resolves with the callback's
// arguments once it is called.
function step(fn) {
  return new Promise((resolve) => {
    fn(function (...args) {
      resolve({ self: this, args });
    });
  });
}

const sql = {
  table: 'CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT UNIQUE, n NUMERIC, r REAL, b BLOB)',
};

const cases = {
  // --- opening and closing ---------------------------------------------------

  'open/callback-then-open-event-then-close-event': async (sqlite3, ctx) => {
    await new Promise((resolve) => {
      const db = new sqlite3.Database(':memory:', function (err) {
        ctx.log('open callback', encode(err), this === db, db.open);
      });
      ctx.log('open before', db.open, db.filename, db.mode);
      db.on('open', () => ctx.log('open event'));
      db.on('close', () => {
        ctx.log('close event', db.open);
        resolve();
      });
      db.close(function (err) {
        ctx.log('close callback', encode(err), this === db);
      });
    });
  },

  'open/modes-and-missing-files': async (sqlite3, ctx) => {
    for (const [name, mode] of [
      ['readonly', sqlite3.OPEN_READONLY],
      ['readwrite', sqlite3.OPEN_READWRITE],
    ]) {
      const file = ctx.file(`${name}.db`);
      const { args } = await step((cb) => new sqlite3.Database(file, mode, cb));
      ctx.log(name, encode(args[0]), require('node:fs').existsSync(file));
    }
    const file = ctx.file('ro.db');
    const w = new sqlite3.Database(file);
    await step((cb) => w.run('CREATE TABLE t(x)', cb));
    await step((cb) => w.close(cb));
    const ro = new sqlite3.Database(file, sqlite3.OPEN_READONLY);
    ctx.log('ro insert', encode((await step((cb) => ro.run('INSERT INTO t VALUES (1)', cb))).args[0]));
    ctx.log('ro select', encode((await step((cb) => ro.all('SELECT * FROM t', cb))).args));
    await step((cb) => ro.close(cb));
  },

  'open/mode-object-in-place-of-a-callback-is-ignored-by-sqlite3': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(':memory:', sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    ctx.log('mode', db.mode);
    ctx.log(encode((await step((cb) => db.get('SELECT 1 AS one', cb))).args));
    await step((cb) => db.close(cb));
  },

  'open/argument-errors': async (sqlite3, ctx) => {
    for (const make of [
      () => new sqlite3.Database(),
      () => new sqlite3.Database(1),
    ]) {
      try {
        make();
        ctx.log('no throw');
      } catch (err) {
        ctx.log(err.constructor.name, err.message);
      }
    }
  },

  'close/twice-is-misuse': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(':memory:');
    ctx.log(encode((await step((cb) => db.close(cb))).args));
    ctx.log(encode((await step((cb) => db.close(cb))).args));
  },

  'close/calls-queued-behind-close-get-handle-closed': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(':memory:');
    const errors = [];
    db.on('error', (err) => errors.push(encode(err)));
    const closed = step((cb) => db.close(cb));
    const queued = step((cb) => db.run('CREATE TABLE foo (id int)', cb));
    ctx.log('close', encode((await closed).args));
    ctx.log('queued', encode((await queued).args));
    ctx.log('after', encode((await step((cb) => db.run('CREATE TABLE foo (id int)', cb))).args));
    ctx.log('exec after', encode((await step((cb) => db.exec('SELECT 1', cb))).args));
    ctx.log('wait after', encode((await step((cb) => db.wait(cb))).args));
    ctx.log('errors', errors);
  },

  'close/calls-without-callbacks-emit-error-on-the-database': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(':memory:');
    const errors = [];
    await new Promise((resolve) => {
      db.on('error', (err) => {
        errors.push(encode(err));
        if (errors.length === 2) resolve();
      });
      db.close();
      db.run('CREATE TABLE foo (id int)');
      db.on('close', () => db.exec('SELECT 1'));
    });
    ctx.log(errors);
  },

  'close/busy-while-a-statement-is-not-finalized': async (sqlite3, ctx) => {
    const db = new sqlite3.Database(':memory:');
    const stmt = await new Promise((resolve) => {
      const s = db.prepare('SELECT 1 AS one', (err) => {
        ctx.log('prepared', encode(err));
        resolve(s);
      });
    });
    ctx.log('close', encode((await step((cb) => db.close(cb))).args), db.open);
    ctx.log('run still works', encode((await step((cb) => stmt.get(cb))).args));
    await step((cb) => stmt.finalize(cb));
    ctx.log('close after finalize', encode((await step((cb) => db.close(cb))).args), db.open);
  },

  // --- run, get, all, each, map ----------------------------------------------

  'run/lastID-and-changes': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const run = async (text, ...params) => {
      const { self, args } = await step((cb) => db.run(text, ...params, cb));
      ctx.log(text, encode(args), self.lastID, self.changes, self instanceof sqlite3.Statement, self.sql);
    };
    await run(sql.table);
    await run("INSERT INTO t(x) VALUES ('a')");
    await run('INSERT INTO t(x) VALUES (?)', 'b');
    await run('INSERT INTO t(x) VALUES (?), (?)', ['c', 'd']);
    await run("UPDATE t SET n = 1 WHERE x IN ('a', 'b')");
    await run('DELETE FROM t WHERE id > ?', 2);
    await run('INSERT INTO t(id, x) VALUES (9007199254740993, ?)', 'big');
  },

  'run/without-a-callback-leaves-no-lastID': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    db.serialize();
    db.run('CREATE TABLE t(x)');
    const stmt = db.prepare('INSERT INTO t VALUES (1)');
    stmt.run();
    await step((cb) => db.wait(cb));
    ctx.log(Object.keys(stmt), stmt.lastID);
    await step((cb) => stmt.finalize(cb));
  },

  'errors/constraint-shape': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.run(sql.table, cb));
    await step((cb) => db.run("INSERT INTO t(x) VALUES ('a')", cb));
    const { self, args } = await step((cb) => db.run("INSERT INTO t(x) VALUES ('a')", cb));
    ctx.log(encode(args), self instanceof sqlite3.Statement, self.lastID);
    ctx.log(encode((await step((cb) => db.run('INSERT INTO t(id) VALUES (NULL), (1), (1)', cb))).args));
    await step((cb) => db.run('CREATE TABLE c(v INTEGER NOT NULL CHECK (v > 0))', cb));
    ctx.log(encode((await step((cb) => db.run('INSERT INTO c VALUES (NULL)', cb))).args));
    ctx.log(encode((await step((cb) => db.run('INSERT INTO c VALUES (-1)', cb))).args));
  },

  'errors/prepare-failures-of-each-method': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    for (const method of ['run', 'get', 'all', 'map']) {
      ctx.log(method, encode((await step((cb) => db[method]('SELECT id, txt FROM foo', cb))).args));
    }
    ctx.log('syntax', encode((await step((cb) => db.all('SELEKT 1', cb))).args));
    ctx.log('exec', encode((await step((cb) => db.exec('CREATE TABLE x(a); SELEKT 1', cb))).args));
    ctx.log('exec applied', encode((await step((cb) => db.all('SELECT name FROM sqlite_master', cb))).args));
    const each = await new Promise((resolve) => {
      db.each(
        'SELECT id FROM foo',
        () => resolve(['row callback']),
        (err, n) => resolve(['complete', encode(err), n]),
      );
    });
    ctx.log('each', each);
    const eachOne = await step((cb) => db.each('SELECT id FROM foo', cb));
    ctx.log('each without complete', encode(eachOne.args));
  },

  'values/every-type-back': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const { args } = await step((cb) =>
      db.get(
        `SELECT 1 AS i, -2 AS neg, 1.5 AS r, 'text' AS s, x'00ff10' AS b, NULL AS z,
                9007199254740993 AS big, 9223372036854775807 AS max, -0.0 AS nz,
                zeroblob(0) AS empty, 1e308 * 10 AS inf, 'é☃𝄞' AS utf8, 1 AS a, 2 AS a`,
        cb,
      ),
    );
    ctx.log(encode(args));
  },

  'values/binding-conversions': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const values = [
      ['int', 42],
      ['negative', -7],
      ['int32 max', 2147483647],
      ['beyond int32', 2147483648],
      ['large', 2 ** 40],
      ['fraction', 1.25],
      ['negative zero', -0],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['true', true],
      ['false', false],
      ['null', null],
      ['undefined', undefined],
      ['string', 'hello'],
      ['empty string', ''],
      ['buffer', Buffer.from([1, 2, 3])],
      ['date', new Date(1700000000000)],
      ['regexp', /ab+c/gi],
      ['object', { a: 1 }],
      ['bigint', 5n],
    ];
    for (const [name, value] of values) {
      const { args } = await step((cb) => db.get('SELECT typeof(?1) AS type, ?1 AS value', [value], cb));
      ctx.log(name, encode(args));
    }
    const { args } = await step((cb) => db.get('SELECT typeof(?) AS t, ? AS v', [[1, 2]], 9, cb));
    ctx.log('array inside array', encode(args));
  },

  'params/every-form': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const forms = [
      ['spread', 'SELECT ? AS a, ? AS b', [1, 'x']],
      ['array', 'SELECT ? AS a, ? AS b', [[1, 'x']]],
      ['numbered', 'SELECT ?2 AS a, ?1 AS b', [1, 'x']],
      ['index object', 'SELECT ?1 AS a, ?2 AS b', [{ 1: 'one', 2: 'two' }]],
      ['index object with a gap', 'SELECT ?1 AS a, ?3 AS b', [{ 3: 'three' }]],
      ['$ names', 'SELECT $a AS a, $b AS b', [{ $a: 1, $b: 2 }]],
      [': names', 'SELECT :a AS a, :b AS b', [{ ':a': 1, ':b': 2 }]],
      ['@ names', 'SELECT @a AS a, @b AS b', [{ '@a': 1, '@b': 2 }]],
      ['a name left out', 'SELECT $a AS a, $b AS b', [{ $a: 1 }]],
      ['a bare name', 'SELECT $a AS a', [{ a: 1 }]],
      ['an unknown name', 'SELECT $a AS a', [{ $a: 1, $zz: 2 }]],
      ['too many', 'SELECT ? AS a', [1, 2]],
      ['too few', 'SELECT ? AS a, ? AS b', [1]],
      ['none for one', 'SELECT ? AS a', []],
      ['undefined last', 'SELECT 1 AS a', [undefined]],
      ['undefined first', 'SELECT ? AS a, ? AS b', [undefined, 2]],
      ['undefined beyond', 'SELECT ? AS a', [undefined, 2]],
      ['undefined named', 'SELECT $a AS a', [{ $a: undefined }]],
      ['an empty array', 'SELECT 1 AS a', [[]]],
      ['a name twice', 'SELECT $a AS a, $a AS b', [{ $a: 'same' }]],
    ];
    for (const [name, text, params] of forms) {
      const { args } = await step((cb) => db.get(text, ...params, cb));
      ctx.log(name, encode(args));
    }
  },

  'get/no-row-calls-back-with-one-argument': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const { args } = await step((cb) => db.get('SELECT 1 WHERE 0', cb));
    ctx.log(args.length, encode(args));
    const all = await step((cb) => db.all('SELECT 1 WHERE 0', cb));
    ctx.log(all.args.length, encode(all.args));
  },

  'statement/get-steps-through-rows-until-reset': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.exec('CREATE TABLE n(v); INSERT INTO n VALUES (1), (2), (3), (4)', cb));
    const stmt = db.prepare('SELECT v FROM n WHERE v > ? ORDER BY v');
    ctx.log('bind', encode((await step((cb) => stmt.bind(1, cb))).args));
    for (let i = 0; i < 5; i++) ctx.log('get', encode((await step((cb) => stmt.get(cb))).args));
    ctx.log('reset', encode((await step((cb) => stmt.reset(cb))).args));
    ctx.log('after reset', encode((await step((cb) => stmt.get(cb))).args));
    ctx.log('new params', encode((await step((cb) => stmt.get(2, cb))).args));
    ctx.log('then', encode((await step((cb) => stmt.get(cb))).args));
    ctx.log('all keeps bindings', encode((await step((cb) => stmt.all(cb))).args));
    ctx.log('get after all', encode((await step((cb) => stmt.get(cb))).args));
    await step((cb) => stmt.finalize(cb));
  },

  'statement/run-reuses-bindings': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.run('CREATE TABLE t(x)', cb));
    const stmt = db.prepare('INSERT INTO t VALUES (?)');
    for (const params of [['a'], [], ['b'], []]) {
      const { self, args } = await step((cb) => stmt.run(...params, cb));
      ctx.log(params, encode(args), self.lastID, self.changes);
    }
    await step((cb) => stmt.finalize(cb));
    ctx.log(encode((await step((cb) => db.all('SELECT x FROM t', cb))).args));
  },

  'statement/prepare-callbacks': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const calls = [];
    await new Promise((resolve) => {
      const stmt = db.prepare('SELECT ? AS v', 5, function (err) {
        calls.push(['with params', encode(err), this === stmt]);
        stmt.get((e, row) => {
          calls.push(['get', encode(e), encode(row)]);
          stmt.finalize(() => resolve());
        });
      });
    });
    await new Promise((resolve) => {
      const stmt = db.prepare('SELECT 1', function (err) {
        calls.push(['plain', encode(err), this === stmt]);
        stmt.finalize(resolve);
      });
    });
    await new Promise((resolve) => {
      db.prepare('SELECT * FROM nowhere', function (err) {
        calls.push(['failing', encode(err), this instanceof sqlite3.Statement]);
        resolve();
      });
    });
    const stmt = new sqlite3.Statement(db, 'SELECT 2 AS two');
    calls.push(['constructed', encode((await step((cb) => stmt.get(cb))).args)]);
    stmt.finalize();
    ctx.log(calls);
  },

  'statement/calls-after-finalize': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const stmt = db.prepare('SELECT 1 AS one');
    const returned = stmt.finalize();
    ctx.log('finalize returns the database', returned === db);
    ctx.log('run', encode((await step((cb) => stmt.run(cb))).args));
    ctx.log('get', encode((await step((cb) => stmt.get(cb))).args));
    const emitted = await new Promise((resolve) => {
      stmt.on('error', (err) => resolve(encode(err)));
      stmt.all();
    });
    ctx.log('without callback', emitted);
  },

  'each/rows-then-count': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.exec('CREATE TABLE n(v); INSERT INTO n VALUES (1), (2), (3)', cb));
    await new Promise((resolve) => {
      db.each(
        'SELECT v, v * 2 AS w FROM n WHERE v >= ?',
        2,
        function (err, row) {
          ctx.log('row', encode(err), encode(row), this instanceof sqlite3.Statement);
        },
        function (err, count) {
          ctx.log('complete', encode(err), count, this instanceof sqlite3.Statement);
          resolve();
        },
      );
    });
    await new Promise((resolve) => {
      db.each('SELECT v FROM n WHERE v > 10', () => ctx.log('no row expected'), (err, count) => {
        ctx.log('empty', encode(err), count);
        resolve();
      });
    });
    const stmt = db.prepare('SELECT v FROM n ORDER BY v');
    const rows = [];
    await new Promise((resolve) => stmt.each((err, row) => rows.push(row.v), (err, n) => resolve(rows.push(n))));
    stmt.finalize();
    ctx.log(rows);
  },

  'map/by-first-column': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.exec("CREATE TABLE m(k, v, w); INSERT INTO m VALUES ('a', 1, 'x'), ('b', 2, 'y')", cb));
    ctx.log(encode((await step((cb) => db.map('SELECT k, v FROM m', cb))).args));
    ctx.log(encode((await step((cb) => db.map('SELECT k, v, w FROM m', cb))).args));
    ctx.log(encode((await step((cb) => db.map('SELECT k FROM m', cb))).args));
    ctx.log(encode((await step((cb) => db.map('SELECT k, v FROM m WHERE 0', cb))).args));
  },

  'exec/many-statements-and-returning-rows': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const { self, args } = await step((cb) =>
      db.exec("CREATE TABLE e(id INTEGER PRIMARY KEY, v); INSERT INTO e(v) VALUES ('a'); INSERT INTO e(v) VALUES ('b');", cb),
    );
    ctx.log(encode(args), self === db);
    ctx.log(encode((await step((cb) => db.all("INSERT INTO e(v) VALUES ('c') RETURNING id, v", cb))).args));
    ctx.log(encode((await step((cb) => db.all('SELECT * FROM e', cb))).args));
  },

  // --- ordering ----------------------------------------------------------------

  'serialize/every-call-in-order': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const order = [];
    await new Promise((resolve) => {
      db.serialize(() => {
        db.run('CREATE TABLE s(v)', () => order.push('create'));
        for (let i = 0; i < 20; i++) db.run('INSERT INTO s VALUES (?)', i, () => order.push(`insert ${i}`));
        db.all('SELECT count(*) AS n FROM s', (err, rows) => order.push(`count ${rows[0].n}`));
        db.exec('DELETE FROM s WHERE v < 10', () => order.push('exec'));
        db.get('SELECT count(*) AS n FROM s', (err, row) => order.push(`count ${row.n}`));
        db.wait(() => {
          order.push('wait');
          resolve();
        });
      });
    });
    ctx.log(order);
  },

  'serialize/returns-the-database-and-nests': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    ctx.log(db.serialize() === db, db.parallelize() === db);
    const order = [];
    await new Promise((resolve) => {
      db.serialize(function () {
        order.push(this === db);
        db.run('CREATE TABLE p(v)');
        db.parallelize(() => {
          for (let i = 0; i < 5; i++) db.run('INSERT INTO p VALUES (?)', i);
        });
        db.get('SELECT count(*) AS n FROM p', (err, row) => {
          order.push(row.n);
          resolve();
        });
      });
    });
    ctx.log(order);
  },

  'parallelize/every-call-completes': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(ctx.file('p.db')));
    await step((cb) => db.run('CREATE TABLE p(v)', cb));
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => step((cb) => (i % 2 ? db.get('SELECT ? AS v', i, cb) : db.run('INSERT INTO p VALUES (?)', i, cb)))),
    );
    ctx.log(results.map(({ args }) => encode(args)));
    ctx.log(encode((await step((cb) => db.get('SELECT count(*) AS n, sum(v) AS s FROM p', cb))).args));
  },

  'transactions/begin-rollback-on-one-connection': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(ctx.file('tx.db')));
    db.serialize();
    const seen = [];
    const all = async (text) => seen.push(encode((await step((cb) => db.all(text, cb))).args));
    await all('CREATE TABLE t(v)');
    await all('BEGIN');
    await all("INSERT INTO t VALUES ('inside')");
    await all('SELECT * FROM t');
    await all('ROLLBACK');
    await all('SELECT * FROM t');
    await all('BEGIN IMMEDIATE');
    await all("INSERT INTO t VALUES ('kept')");
    await all('COMMIT');
    await all('SELECT * FROM t');
    ctx.log(seen);
  },

  // --- configuration, events, extras -----------------------------------------

  'configure/limit-and-busy-timeout': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    ctx.log(db.configure('busyTimeout', 50) === db);
    db.configure('limit', sqlite3.LIMIT_SQL_LENGTH, 20);
    ctx.log(encode((await step((cb) => db.get('SELECT 1 AS a, 2 AS b, 3 AS c, 4 AS d', cb))).args));
    db.configure('limit', sqlite3.LIMIT_SQL_LENGTH, 1000000);
    ctx.log(encode((await step((cb) => db.get('SELECT 1 AS a, 2 AS b, 3 AS c, 4 AS d', cb))).args));
    for (const call of [() => db.configure('nothing', 1), () => db.configure('busyTimeout', 'x'), () => db.configure('limit', 1)]) {
      try {
        call();
      } catch (err) {
        ctx.log(err.constructor.name, err.message);
      }
    }
  },

  'events/trace': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const traced = [];
    const trace = (text) => traced.push(text);
    db.on('trace', trace);
    await step((cb) => db.run('CREATE TABLE t(v)', cb));
    await step((cb) => db.run('INSERT INTO t VALUES (?)', 'x', cb));
    await step((cb) => db.all('SELECT * FROM t WHERE v = ?', ['x'], cb));
    await step((cb) => db.get('SELECT $a AS a, @b AS b', { $a: 1.5, '@b': Buffer.from('hi') }, cb));
    await step((cb) => db.exec('INSERT INTO t VALUES (1);\n  INSERT INTO t VALUES (2)', cb));
    // sqlite3 delivers hook events after the callback; one more call lets them arrive.
    await step((cb) => db.get('SELECT 2', cb));
    db.removeListener('trace', trace);
    await step((cb) => db.get('SELECT 1', cb));
    // Whether sqlite3 delivers the last one before the listener goes is a race.
    ctx.log(traced.filter((text) => text !== 'SELECT 2'));
  },

  'events/change': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const changes = [];
    const change = (...args) => changes.push(args);
    db.on('change', change);
    await step((cb) => db.run('CREATE TABLE t(id INTEGER PRIMARY KEY, v)', cb));
    await step((cb) => db.run('INSERT INTO t(v) VALUES (?)', 'x', cb));
    await step((cb) => db.exec("INSERT INTO t(v) VALUES (1); INSERT INTO t(v) VALUES (2); UPDATE t SET v = 'y' WHERE id = 2", cb));
    const stmt = db.prepare('DELETE FROM t WHERE id = ?');
    await step((cb) => stmt.run(1, cb));
    await step((cb) => stmt.finalize(cb));
    await step((cb) => db.run('INSERT INTO t(id, v) VALUES (2, 0) ON CONFLICT DO NOTHING', cb));
    await step((cb) => db.run('UPDATE t SET v = v WHERE id = 999', cb));
    await step((cb) => db.all('SELECT * FROM t', cb));
    // sqlite3 delivers hook events after the callback; one more call lets them arrive.
    await step((cb) => db.get('SELECT 2', cb));
    ctx.log(changes.splice(0));
    db.removeListener('change', change);
    await step((cb) => db.run('INSERT INTO t(v) VALUES (3)', cb));
    await step((cb) => db.get('SELECT 1', cb));
    ctx.log('after the listener went', changes);
  },

  'events/profile': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const profiled = [];
    const profile = (text, ms) => profiled.push([text, typeof ms]);
    db.on('profile', profile);
    await step((cb) => db.run('CREATE TABLE t(v)', cb));
    await step((cb) => db.run('INSERT INTO t VALUES (?)', 'x', cb));
    await step((cb) => db.all('SELECT * FROM t WHERE v = ?', ['x'], cb));
    await step((cb) => db.exec('INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)', cb));
    await step((cb) => db.get('SELECT 2', cb));
    db.removeListener('profile', profile);
    await step((cb) => db.get('SELECT 1', cb));
    // Whether sqlite3 delivers the last one before the listener goes is a race.
    ctx.log(profiled.filter(([text]) => text !== 'SELECT 2'));
  },

  'extras/interrupt': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.get('SELECT 1', cb));
    const slow = step((cb) =>
      db.get('WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c', cb),
    );
    setTimeout(() => db.interrupt(), 100);
    ctx.log(encode((await slow).args));
    ctx.log('still works', encode((await step((cb) => db.get('SELECT 1 AS one', cb))).args));
  },

  'extras/load-extension-that-does-not-exist': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const { args } = await step((cb) => db.loadExtension(ctx.file('missing'), cb));
    ctx.log(args[0].errno, args[0].code, args[0].message.startsWith('SQLITE_ERROR: '));
  },

  'extras/cached-database': async (sqlite3, ctx) => {
    const file = ctx.file('cached.db');
    const a = sqlite3.cached.Database(file);
    const opened = await step((cb) => sqlite3.cached.Database(file, cb));
    ctx.log(a === opened.self, encode(opened.args), Object.keys(sqlite3.cached.objects).includes(path.resolve(file)));
    ctx.log(sqlite3.cached.Database(':memory:') === sqlite3.cached.Database(':memory:'));
    delete sqlite3.cached.objects[path.resolve(file)];
    await step((cb) => a.close(cb));
  },

  'extras/verbose-stacks': async (sqlite3, ctx) => {
    const module = sqlite3.verbose();
    ctx.log(module === sqlite3);
    const db = ctx.done(new sqlite3.Database(':memory:'));
    const { args } = await step((cb) => db.run('SELECT * FROM nowhere', cb));
    ctx.log(args[0].message, /--> in Database#run\('SELECT \* FROM nowhere', \[Function/.test(args[0].stack));
  },

  'extras/async-resources-are-named-as-sqlite3-names-them': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(':memory:'));
    await step((cb) => db.get('SELECT 1', cb));
    const types = new Map();
    const hook = createHook({
      init(id, type) {
        if (type.startsWith('sqlite3.')) types.set(id, type);
      },
    }).enable();
    const where = [];
    const store = new AsyncLocalStorage();
    try {
      await store.run('request-1', async () => {
        const inCallback = (label) => (err) => where.push([label, types.get(executionAsyncId()) ?? null, store.getStore(), !!err]);
        await step((cb) => db.run('DROP TABLE nowhere', (err) => cb(inCallback('failing run')(err))));
        await step((cb) => db.run('CREATE TABLE t(v)', (err) => cb(inCallback('run')(err))));
        await step((cb) => db.all('SELECT * FROM t', (err) => cb(inCallback('all')(err))));
        await step((cb) => db.exec('SELECT 1', (err) => cb(inCallback('exec')(err))));
      });
    } finally {
      hook.disable();
    }
    ctx.log(where);
  },

  'backup/into-a-file': async (sqlite3, ctx) => {
    const db = ctx.done(new sqlite3.Database(ctx.file('source.db')));
    await step((cb) => db.exec('CREATE TABLE b(v); INSERT INTO b VALUES (1), (2), (3)', cb));
    const target = ctx.file('copy.db');
    const backup = await new Promise((resolve) => {
      const b = db.backup(target, function (err) {
        ctx.log('init', encode(err), this === b);
        resolve(b);
      });
    });
    ctx.log('before', backup.idle, backup.completed, backup.failed, backup.remaining, backup.pageCount, backup.retryErrors);
    const { args } = await step((cb) => backup.step(-1, cb));
    ctx.log('step', encode(args), backup.completed, backup.failed, backup.remaining, backup.pageCount);
    await step((cb) => backup.finish(cb));
    ctx.log('finished', backup.idle, backup.completed, backup.failed);
    ctx.log('after finish', encode((await step((cb) => backup.step(1, cb))).args));
    const copy = new sqlite3.Database(target);
    ctx.log('copy', encode((await step((cb) => copy.all('SELECT v FROM b', cb))).args));
    await step((cb) => copy.close(cb));
  },

  'module/constants': async (sqlite3, ctx) => {
    const names = Object.keys(sqlite3).filter((k) => /^[A-Z_]+$/.test(k) && k !== 'VERSION' && k !== 'SOURCE_ID' && k !== 'VERSION_NUMBER');
    ctx.log(names.sort().map((k) => [k, sqlite3[k]]));
    ctx.log(typeof sqlite3.VERSION, typeof sqlite3.SOURCE_ID, typeof sqlite3.VERSION_NUMBER, typeof sqlite3.verbose);
    ctx.log(['Database', 'Statement', 'Backup'].map((k) => typeof sqlite3[k]), typeof sqlite3.cached.Database);
  },
};

module.exports = { cases, encode, step };
