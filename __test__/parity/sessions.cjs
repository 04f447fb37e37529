'use strict';

// Under Node 24: sessions and changesets on node:sqlite and on offloop
// (see compare.cjs); sessions.test.mjs compares the outcomes. Changesets
// are compared byte for byte, and applied with and without handlers.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DatabaseSync, constants } = require('node:sqlite');
const { Database } = require('../../index.js');
const { compare, enc, report } = require('./compare.cjs');

const SCHEMA = 'CREATE TABLE t(id INTEGER PRIMARY KEY, v); CREATE TABLE u(k TEXT PRIMARY KEY, w); CREATE TABLE nopk(x)';
const CHANGES =
  "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, x'00ff'); INSERT INTO u VALUES ('x', 1.5); INSERT INTO nopk VALUES (5); " +
  "UPDATE t SET v = 'c' WHERE id = 2; DELETE FROM t WHERE id = 1; UPDATE u SET w = NULL WHERE k = 'x'";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-sessions-parity-'));
let n = 0;

/** Another database of the same library as `db`, with the schema. */
async function sibling(db) {
  if (db instanceof DatabaseSync) {
    const other = new DatabaseSync(':memory:');
    other.exec(SCHEMA);
    return other;
  }
  const other = await Database.open(path.join(scratch, `sibling-${++n}.db`));
  await other.exec(SCHEMA);
  return other;
}

async function attempt(fn) {
  try {
    return { value: enc(await fn()) };
  } catch (err) {
    return { threw: enc(err) };
  }
}

async function contents(db) {
  return [await db.prepare('SELECT * FROM t ORDER BY id').all(), await db.prepare('SELECT * FROM u ORDER BY k').all()];
}

/** Records CHANGES with a session on every table; returns the changeset. */
async function recorded(db) {
  await db.exec(SCHEMA);
  const session = db.createSession();
  await db.exec(CHANGES);
  return session.changeset();
}

const scenarios = {
  'changeset and patchset bytes, every table and one table': async (db) => {
    await db.exec(SCHEMA);
    const all = db.createSession();
    const one = db.createSession({ table: 't' });
    const main = db.createSession({ db: 'main', table: 'u' });
    await db.exec(CHANGES);
    return [await all.changeset(), await all.patchset(), await one.changeset(), await one.patchset(), await main.changeset()];
  },
  'a session records only what happens after it is created': async (db) => {
    await db.exec(SCHEMA);
    await db.exec("INSERT INTO t VALUES (10, 'before')");
    const session = db.createSession();
    await db.exec("INSERT INTO t VALUES (11, 'after')");
    return session.changeset();
  },
  'changes inside a transaction are recorded once it commits': async (db) => {
    await db.exec(SCHEMA);
    const session = db.createSession();
    await db.exec("BEGIN; INSERT INTO t VALUES (1, 'x'); COMMIT; BEGIN; INSERT INTO t VALUES (2, 'y'); ROLLBACK");
    return session.changeset();
  },
  'an empty session; unknown table and schema': async (db) => {
    await db.exec(SCHEMA);
    const empty = db.createSession();
    const table = db.createSession({ table: 'nosuch' });
    const schema = db.createSession({ db: 'nosuch' });
    await db.exec(CHANGES);
    return [(await empty.patchset()).length > 0, await table.changeset(), await schema.changeset()];
  },
  'createSession argument checks': async (db) => {
    const out = [];
    for (const o of [1, null, 'x', { table: 1 }, { db: 1 }, { db: null }]) {
      out.push(await attempt(() => db.createSession(o)));
    }
    return out.map((r) => r.threw ?? 'made');
  },
  'a closed session refuses, once and again': async (db) => {
    await db.exec(SCHEMA);
    const session = db.createSession();
    await session.close();
    return [await attempt(() => session.changeset()), await attempt(() => session.patchset()), await attempt(() => session.close())];
  },
  'a session of a closed database': async (db) => {
    const session = db.createSession();
    await db.close();
    return [await attempt(() => session.changeset()), await attempt(() => session.close())];
  },
  'applyChangeset applies, then conflicts abort by default': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    const first = await other.applyChangeset(changeset);
    const state = await contents(other);
    const again = await other.applyChangeset(changeset);
    return [first, state, again, await contents(other)];
  },
  'onConflict sees each conflict kind and OMIT skips the change': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    await other.exec("INSERT INTO t VALUES (3, 'taken'); INSERT INTO u VALUES ('x', 'taken')");
    const kinds = [];
    const result = await other.applyChangeset(changeset, {
      onConflict: (kind) => {
        kinds.push(kind);
        return constants.SQLITE_CHANGESET_OMIT;
      },
    });
    return [result, kinds, await contents(other)];
  },
  'onConflict REPLACE takes the changeset’s row': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    await other.exec("INSERT INTO t VALUES (3, 'taken')");
    const result = await other.applyChangeset(changeset, {
      onConflict: (kind) =>
        kind === constants.SQLITE_CHANGESET_CONFLICT ? constants.SQLITE_CHANGESET_REPLACE : constants.SQLITE_CHANGESET_OMIT,
    });
    return [result, await contents(other)];
  },
  'onConflict ABORT undoes everything and resolves false': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    await other.exec("INSERT INTO u VALUES ('x', 'taken')");
    const result = await other.applyChangeset(changeset, { onConflict: () => constants.SQLITE_CHANGESET_ABORT });
    return [result, await contents(other)];
  },
  'an onConflict answer that is not a valid action': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    await other.exec("INSERT INTO t VALUES (3, 'taken')");
    const out = [];
    for (const answer of [99, 'x', 1.5, undefined, null]) {
      out.push(await attempt(() => other.applyChangeset(changeset, { onConflict: () => answer })));
    }
    out.push(await contents(other));
    return out;
  },
  'an onConflict that throws rejects with what it threw': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    await other.exec("INSERT INTO t VALUES (3, 'taken')");
    const thrown = new Error('conflict handler failed');
    try {
      await other.applyChangeset(changeset, {
        onConflict: () => {
          throw thrown;
        },
      });
      return 'resolved';
    } catch (err) {
      return [err === thrown, await contents(other)];
    }
  },
  'filter chooses tables by name': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    const seen = [];
    const result = await other.applyChangeset(changeset, {
      filter: (table) => {
        seen.push(table);
        return table === 'u';
      },
    });
    return [result, seen, await contents(other)];
  },
  'filter answers are taken as booleans': async (db) => {
    const changeset = await recorded(db);
    const out = [];
    for (const answer of [1, 0, 'yes', '', null, {}]) {
      const other = await sibling(db);
      out.push([await other.applyChangeset(changeset, { filter: () => answer }), await contents(other)]);
    }
    return out;
  },
  'a filter that throws rejects with what it threw': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    const thrown = new TypeError('filter failed');
    try {
      await other.applyChangeset(changeset, {
        filter: () => {
          throw thrown;
        },
      });
      return 'resolved';
    } catch (err) {
      return [err === thrown, await contents(other)];
    }
  },
  'a patchset applies too': async (db) => {
    await db.exec(SCHEMA);
    const session = db.createSession();
    await db.exec(CHANGES);
    const other = await sibling(db);
    return [await other.applyChangeset(await session.patchset()), await contents(other)];
  },
  'applyChangeset argument checks and malformed input': async (db) => {
    const changeset = await recorded(db);
    const other = await sibling(db);
    const out = [];
    for (const [c, o] of [
      [1, undefined],
      ['abc', undefined],
      [changeset.buffer, undefined],
      [changeset, 1],
      [changeset, null],
      [changeset, { filter: 1 }],
      [changeset, { onConflict: 'x' }],
      [new Uint8Array([1, 2, 3]), undefined],
      [new Uint8Array(0), undefined],
      [Buffer.from(changeset), undefined],
    ]) {
      out.push(await attempt(() => other.applyChangeset(c, o)));
    }
    return out;
  },
};

async function main() {
  try {
    return await compare(scenarios, { readers: 2 });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

report(main());
