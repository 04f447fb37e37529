'use strict';

// Under Node 24: user functions and aggregates, the same scenarios on
// node:sqlite and on offloop (see compare.cjs); functions.test.mjs
// compares the outcomes.

const { compare, report } = require('./compare.cjs');

const all = async (db, sql, ...params) => db.prepare(sql).all(...params);
const get = async (db, sql, ...params) => db.prepare(sql).get(...params);
const list = (db, name) => all(db, 'SELECT name, narg, type, flags FROM pragma_function_list WHERE name = ?', name);

const RETURNS = [
  undefined,
  null,
  1.5,
  's',
  new Uint8Array([1, 2]),
  10n,
  true,
  {},
  Promise.resolve(1),
  2n ** 70n,
  Symbol('s'),
  new ArrayBuffer(2),
  new DataView(new ArrayBuffer(2)),
  Buffer.from('ab'),
  -0,
  NaN,
];

const scenarios = {
  'scalar: arguments and result': async (db) => {
    db.function('add', (a, b) => a + b);
    return [await get(db, 'SELECT add(1, 2) AS r'), await list(db, 'add')];
  },
  'scalar: the argument count is fn.length': async (db) => {
    db.function('add', (a, b) => a + b);
    return get(db, 'SELECT add(1) AS r');
  },
  'scalar: varargs': async (db) => {
    db.function('count_args', { varargs: true }, (...a) => a.length);
    return [await get(db, 'SELECT count_args() AS a, count_args(1, 2, 3) AS b'), await list(db, 'count_args')];
  },
  'scalar: argument types': async (db) => {
    db.function('describe', (v) => `${typeof v}:${v instanceof Uint8Array ? [...v] : v}`);
    return get(db, "SELECT describe(1) a, describe(1.5) b, describe('hé') c, describe(x'00ff') d, describe(NULL) e");
  },
  'scalar: blob arguments are Uint8Arrays': async (db) => {
    db.function('same', (v) => v);
    db.function('kind', (v) => Object.prototype.toString.call(v));
    return get(db, "SELECT same(x'0102') a, kind(x'0102') b");
  },
  'scalar: an unsafe integer argument is a RangeError': async (db) => {
    db.function('id', (v) => v);
    return get(db, 'SELECT id(9007199254740993) AS r');
  },
  'scalar: useBigIntArguments': async (db) => {
    db.function('kind', { useBigIntArguments: true }, (v) => typeof v);
    db.function('dbl', { useBigIntArguments: true }, (v) => v * 2n);
    return get(db, 'SELECT kind(1) a, kind(1.5) b, dbl(4611686018427387903) c', {});
  },
  'scalar: every kind of result': async (db) => {
    db.function('ret', (i) => RETURNS[i]);
    const out = [];
    for (let i = 0; i < RETURNS.length; i++) {
      try {
        out.push(await get(db, 'SELECT ret(?) AS r', i));
      } catch (err) {
        out.push(err);
      }
    }
    return out;
  },
  'scalar: what fn throws reaches the caller as it is': async (db) => {
    const thrown = new TypeError('boom');
    thrown.extra = 1;
    db.function('fail', () => {
      throw thrown;
    });
    try {
      await get(db, 'SELECT fail()');
      return 'no error';
    } catch (err) {
      return [err === thrown, err.extra];
    }
  },
  'scalar: a thrown string reaches the caller': async (db) => {
    db.function('fail', () => {
      throw 'just a string';
    });
    try {
      await get(db, 'SELECT fail()');
      return 'no error';
    } catch (err) {
      return err;
    }
  },
  'scalar: a throw in a write rolls the statement back': async (db) => {
    await db.exec('CREATE TABLE t(x)');
    let calls = 0;
    db.function('check_x', (x) => {
      calls++;
      if (x > 1) throw new Error(`bad ${x}`);
      return x;
    });
    let error = null;
    try {
      await db.prepare('INSERT INTO t SELECT check_x(value) FROM json_each(?)').run('[1, 2, 3]');
    } catch (err) {
      error = err;
    }
    return [error, calls, await all(db, 'SELECT * FROM t')];
  },
  'scalar: this is the global object': async (db) => {
    db.function('self', function () {
      return this === globalThis ? 1 : 0;
    });
    return get(db, 'SELECT self() AS r');
  },
  'scalar: a later definition replaces an earlier one': async (db) => {
    db.function('v', () => 1);
    const first = await get(db, 'SELECT v() AS r');
    db.function('v', () => 2);
    return [first, await get(db, 'SELECT v() AS r')];
  },
  'scalar: directOnly refuses use from a view': async (db) => {
    db.function('direct', { directOnly: true }, () => 1);
    await db.exec('CREATE VIEW v AS SELECT direct() AS x');
    return [await get(db, 'SELECT direct() AS r'), await list(db, 'direct')].concat(await outcomeOf(() => get(db, 'SELECT * FROM v')));
  },
  'scalar: only deterministic functions in an index': async (db) => {
    db.function('nd', () => 1);
    db.function('det', { deterministic: true }, (x) => x * 2);
    await db.exec('CREATE TABLE t(a)');
    const refused = await outcomeOf(() => db.exec('CREATE INDEX i1 ON t(nd())'));
    await db.exec('CREATE INDEX i2 ON t(det(a))');
    await db.prepare('INSERT INTO t VALUES (?)').run(4);
    return [refused, await get(db, 'SELECT det(a) AS r FROM t WHERE det(a) = 8'), await list(db, 'det')];
  },
  'scalar: argument checks': async (db) => {
    const out = [];
    const tries = [
      () => db.function(),
      () => db.function(1, () => 1),
      () => db.function('x'),
      () => db.function('x', {}),
      () => db.function('x', null, () => 1),
      () => db.function('x', 5, () => 1),
      () => db.function('x', { deterministic: 1 }, 5),
      () => db.function('x', { varargs: 'a', deterministic: 1, directOnly: 2, useBigIntArguments: 3 }, () => 1),
      () => db.function('x', { varargs: 'a', deterministic: 1, directOnly: 2 }, () => 1),
      () => db.function('x', { deterministic: 1, directOnly: 2 }, () => 1),
      () => db.function('x', { directOnly: 2 }, () => 1),
      () => db.function('x', () => 1, () => 2),
    ];
    for (const t of tries) out.push(await outcomeOf(t));
    return out;
  },
  'scalar: on a closed database': async (db) => {
    await db.close();
    return outcomeOf(() => db.function('x', () => 1));
  },
  'aggregate: start value and step': async (db) => {
    db.aggregate('total', { start: 0, step: (acc, v) => acc + v });
    await db.exec('CREATE TABLE n(g, v); INSERT INTO n VALUES (1, 1), (1, 2), (2, 10)');
    return [
      await get(db, 'SELECT total(v) AS r FROM n'),
      await all(db, 'SELECT g, total(v) AS r FROM n GROUP BY g ORDER BY g'),
      await get(db, 'SELECT total(v) AS r FROM n WHERE 0'),
      await list(db, 'total'),
    ];
  },
  'aggregate: start function, result': async (db) => {
    db.aggregate('collect', { start: () => [], step: (acc, v) => (acc.push(v), acc), result: (acc) => acc.join('|') });
    await db.exec('CREATE TABLE n(g, v); INSERT INTO n VALUES (1, 1), (1, 2), (2, 10)');
    return all(db, 'SELECT g, collect(v) AS r FROM n GROUP BY g ORDER BY g');
  },
  'aggregate: not a window function without inverse': async (db) => {
    db.aggregate('total', { start: 0, step: (acc, v) => acc + v });
    await db.exec('CREATE TABLE n(v); INSERT INTO n VALUES (1), (2)');
    return outcomeOf(() => all(db, 'SELECT total(v) OVER (ORDER BY v) AS r FROM n'));
  },
  'aggregate: window function with inverse': async (db) => {
    db.aggregate('win', {
      start: () => [],
      step: (acc, v) => (acc.push(v), acc),
      inverse: (acc) => (acc.shift(), acc),
      result: (acc) => acc.join(','),
    });
    await db.exec('CREATE TABLE n(v); INSERT INTO n VALUES (1), (2), (3), (4)');
    return [
      await all(db, 'SELECT win(v) OVER (ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS r FROM n'),
      await get(db, 'SELECT win(v) AS r FROM n'),
      await list(db, 'win'),
    ];
  },
  'aggregate: arity from step and inverse, or varargs': async (db) => {
    db.aggregate('a0', { start: 0, step: () => 0 });
    db.aggregate('a2', { start: 0, step: (acc, a, b) => acc });
    db.aggregate('a3', { start: 0, step: (acc, a) => acc, inverse: (acc, a, b, c) => acc });
    db.aggregate('av', { start: 0, step: (acc, a) => acc, varargs: true });
    return all(db, "SELECT name, narg, type FROM pragma_function_list WHERE name IN ('a0', 'a2', 'a3', 'av') ORDER BY name");
  },
  'aggregate: a throwing start reaches the caller': async (db) => {
    const thrown = new Error('no start');
    db.aggregate('bad', {
      start: () => {
        throw thrown;
      },
      step: (acc) => acc,
    });
    return outcomeOf(() => get(db, 'SELECT bad(1) AS r')).then((o) => o.threw === thrown);
  },
  'aggregate: a throwing result reaches the caller': async (db) => {
    db.aggregate('bad', {
      start: 0,
      step: (acc) => acc,
      result: () => {
        throw new RangeError('no result');
      },
    });
    return outcomeOf(() => get(db, 'SELECT bad(1) AS r'));
  },
  'aggregate: useBigIntArguments': async (db) => {
    db.aggregate('big', { start: 0n, step: (acc, v) => acc + v, useBigIntArguments: true });
    await db.exec('CREATE TABLE n(v); INSERT INTO n VALUES (1), (2)');
    return get(db, 'SELECT big(v) AS r FROM n');
  },
  'aggregate: argument checks': async (db) => {
    const out = [];
    const tries = [
      () => db.aggregate('x'),
      () => db.aggregate('x', null),
      () => db.aggregate('x', 5),
      () => db.aggregate('x', {}),
      () => db.aggregate('x', { start: undefined, step: () => 1 }),
      () => db.aggregate('x', { start: 1 }),
      () => db.aggregate('x', { start: 1, step: 1 }),
      () => db.aggregate('x', { start: 1, step: () => 1, inverse: 3 }),
      () => db.aggregate('x', { start: 1, step: () => 1, result: 3 }),
      () => db.aggregate('x', { start: 1, step: 3, useBigIntArguments: 1 }),
      () => db.aggregate('x', { start: 1, step: () => 1, deterministic: 3, useBigIntArguments: 4, varargs: 5, directOnly: 6 }),
      () => db.aggregate('x', { start: 1, step: () => 1, deterministic: 3, varargs: 5, directOnly: 6 }),
      () => db.aggregate('x', { start: 1, step: () => 1, deterministic: 3, directOnly: 6 }),
      () => db.aggregate('x', { start: {}, step: () => 1, deterministic: 3 }),
      () => db.aggregate('x', { start: null, step: () => 1 }),
      () => db.aggregate(12, { start: null, step: () => 1 }),
    ];
    for (const t of tries) out.push(await outcomeOf(t));
    out.push(await list(db, '12'));
    return out;
  },
};

async function outcomeOf(fn) {
  try {
    return { value: await fn() };
  } catch (err) {
    return { threw: err };
  }
}

report(compare(scenarios, { readers: 2 }));
