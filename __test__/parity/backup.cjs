'use strict';

// Under Node 24: backup(sourceDb, path, options) on node:sqlite and on
// offloop, each from a file database of its own with the same content;
// backup.test.mjs compares the outcomes. A copy is read back with
// node:sqlite on both sides, so the two copies are compared by content.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DatabaseSync, backup: nodeBackup } = require('node:sqlite');
const { Database, backup } = require('../../index.js');
const { enc, report } = require('./compare.cjs');

const FILL = "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); \
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) \
  INSERT INTO t(v) SELECT printf('%.1000c', 'x') || i FROM n;";

/** What a copy holds: its tables and a digest of its rows. */
function contents(file, schema = 'main') {
  const db = new DatabaseSync(file);
  try {
    if (schema !== 'main') return 'not read';
    return db.prepare("SELECT count(*) AS n, sum(length(v)) AS bytes, max(id) AS top FROM t").get();
  } finally {
    db.close();
  }
}

async function outcome(fn) {
  try {
    return { value: enc(await fn()) };
  } catch (err) {
    return { threw: enc(err) };
  }
}

// Each scenario: `(db, backup, dir) => result`, `dir` a folder of its own.
const scenarios = {
  'a copy resolves to the page count, with progress between steps': async (db, copy, dir) => {
    const reports = [];
    const pages = await copy(db, path.join(dir, 'copy.db'), { rate: 10, progress: (p) => reports.push(p) });
    return [pages, reports, contents(path.join(dir, 'copy.db'))];
  },
  'the default rate copies a small database in one step, without progress': async (db, copy, dir) => {
    const reports = [];
    const pages = await copy(db, path.join(dir, 'copy.db'), { progress: (p) => reports.push(p) });
    return [pages, reports.length];
  },
  'a path may be a Uint8Array or a file: URL': async (db, copy, dir) => {
    const a = await copy(db, Buffer.from(path.join(dir, 'a.db')));
    const b = await copy(db, new URL(`file://${path.join(dir, 'b.db')}`));
    return [a, b, contents(path.join(dir, 'a.db')), contents(path.join(dir, 'b.db'))];
  },
  'a copy replaces what the target file held': async (db, copy, dir) => {
    const target = path.join(dir, 'old.db');
    const old = new DatabaseSync(target);
    old.exec('CREATE TABLE other(x); INSERT INTO other VALUES (1)');
    old.close();
    await copy(db, target);
    const check = new DatabaseSync(target);
    const tables = check.prepare('SELECT name FROM sqlite_schema ORDER BY name').all();
    check.close();
    return tables;
  },
  'target temp': async (db, copy, dir) => copy(db, path.join(dir, 't.db'), { target: 'temp' }),
  'an unknown source schema is SQLite’s error': async (db, copy, dir) => copy(db, path.join(dir, 'x.db'), { source: 'nosuch' }),
  'a target in a missing folder cannot be opened': async (db, copy, dir) => copy(db, path.join(dir, 'no', 'such', 'x.db')),
  'a target that is not a database': async (db, copy, dir) => {
    const target = path.join(dir, 'text.db');
    fs.writeFileSync(target, 'this is not a database file, it is plain text and longer than a header'.repeat(20));
    return copy(db, target);
  },
  'a progress callback that throws rejects the backup with what it threw': async (db, copy, dir) => {
    let calls = 0;
    const thrown = new Error('stop here');
    try {
      await copy(db, path.join(dir, 'x.db'), {
        rate: 5,
        progress: () => {
          calls += 1;
          throw thrown;
        },
      });
      return 'resolved';
    } catch (err) {
      return [err === thrown, calls];
    }
  },
  'argument checks': async (db, copy, dir) => {
    const out = [];
    const target = path.join(dir, 'x.db');
    for (const [p, o] of [
      [target, { rate: 0 }],
      [target, { rate: -1 }],
      [target, { rate: 1.5 }],
      [target, { rate: '1' }],
      [target, { rate: 2 ** 31 }],
      [target, { progress: 1 }],
      [target, { source: 1 }],
      [target, { target: null }],
      [target, null],
      [target, 'main'],
      [1, undefined],
      [undefined, undefined],
      ['a\0b', undefined],
      [new URL('http://example.com/x.db'), undefined],
    ]) {
      out.push(await outcome(() => copy(db, p, o)));
    }
    return out;
  },
  'argument errors throw at the call, not through the promise': async (db, copy, dir) => {
    const out = [];
    for (const [p, o] of [
      [path.join(dir, 'x.db'), { rate: 0 }],
      [1, undefined],
    ]) {
      try {
        const pending = copy(db, p, o);
        pending.catch(() => {});
        out.push('returned a promise');
      } catch (err) {
        out.push(enc(err));
      }
    }
    return out;
  },
  'a closed database cannot be backed up': async (db, copy, dir) => {
    await db.close();
    return copy(db, path.join(dir, 'x.db'));
  },
};

async function main() {
  const results = [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-backup-parity-'));
  try {
    let n = 0;
    for (const [name, scenario] of Object.entries(scenarios)) {
      n += 1;
      const nodeDir = fs.mkdirSync(path.join(root, `node-${n}`), { recursive: true });
      const nodeDb = new DatabaseSync(path.join(nodeDir, 'source.db'));
      nodeDb.exec('PRAGMA journal_mode = WAL');
      nodeDb.exec(FILL);
      const node = await outcome(() => scenario(nodeDb, nodeBackup, nodeDir));
      if (nodeDb.isOpen) nodeDb.close();
      const offDir = fs.mkdirSync(path.join(root, `offloop-${n}`), { recursive: true });
      const db = await Database.open(path.join(offDir, 'source.db'), { readers: 2 });
      await db.exec(FILL);
      const offloop = await outcome(() => scenario(db, backup, offDir));
      await db.close();
      results.push({ name, node, offloop });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return results;
}

report(main());
