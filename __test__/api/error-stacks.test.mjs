// The stack of a rejected call names the function that made it: the error
// is made when the call's thread reports back, outside the caller's async
// chain, and its stack is taken again in the caller's continuation. The
// adapters' own stack tests are in adapter-*.test.mjs.

import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, test } from 'node:test';

import { Database, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('stacks');
after(() => tmp.cleanup());

async function open() {
  const db = await Database.open(tmp.file());
  await db.exec("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE); INSERT INTO users(email) VALUES ('taken')");
  return db;
}

/** The rejection of `fn()`. */
async function rejection(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('it resolved');
}

function assertNamed(err, name) {
  assert.match(err.stack, new RegExp(`\\b${name}\\b`), `the stack names ${name}:\n${err.stack}`);
}

test("a failed run(), get(), all(), query() and exec() name the caller's function on the stack", async () => {
  const db = await open();
  try {
    async function insertTakenEmail() {
      await db.prepare('INSERT INTO users(email) VALUES (?)').run('taken');
    }
    async function readMissingTable() {
      return await db.prepare('SELECT * FROM missing').get();
    }
    async function listMissingTable() {
      return await db.prepare('SELECT * FROM missing').all();
    }
    async function queryTakenEmail() {
      await db.prepare('INSERT INTO users(email) VALUES (?) RETURNING id').query('taken');
    }
    async function execTakenEmail() {
      await db.exec("INSERT INTO users(email) VALUES ('taken')");
    }
    const unique = await rejection(insertTakenEmail);
    assert.equal(unique.sqliteCode, 'SQLITE_CONSTRAINT_UNIQUE');
    assertNamed(unique, 'insertTakenEmail');
    assertNamed(await rejection(readMissingTable), 'readMissingTable');
    assertNamed(await rejection(listMissingTable), 'listMissingTable');
    assertNamed(await rejection(queryTakenEmail), 'queryTakenEmail');
    assertNamed(await rejection(execTakenEmail), 'execTakenEmail');
  } finally {
    await db.close();
  }
});

test('a failed call inside db.transaction() names the callback and the function that opened the transaction', async () => {
  const db = await open();
  try {
    async function registerTwice() {
      await db.transaction(async function insertBoth(tx) {
        await tx.prepare('INSERT INTO users(email) VALUES (?)').run('new');
        await tx.prepare('INSERT INTO users(email) VALUES (?)').run('taken');
      });
    }
    const err = await rejection(registerTwice);
    assert.equal(err.sqliteCode, 'SQLITE_CONSTRAINT_UNIQUE');
    assertNamed(err, 'insertBoth');
    assertNamed(err, 'registerTwice');
    const { n } = await db.prepare('SELECT count(*) AS n FROM users').get();
    assert.equal(n, 1, 'rolled back');
  } finally {
    await db.close();
  }
});

test("a failed iterate() names the function reading it, for the first chunk and for one read ahead", async () => {
  const db = await open();
  try {
    async function iterateMissingTable() {
      for await (const row of db.prepare('SELECT * FROM missing').iterate()) assert.fail(`a row: ${row}`);
    }
    assertNamed(await rejection(iterateMissingTable), 'iterateMissingTable');

    // 2^53 in the row after a first chunk: node:sqlite's next() throws on
    // the row, the ones before it are read.
    await db.exec('CREATE TABLE big(v INTEGER); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO big SELECT i FROM n');
    await db.exec('INSERT INTO big VALUES (9007199254740993)');
    let read = 0;
    async function iterateToUnsafeInteger() {
      for await (const row of db.prepare('SELECT v FROM big ORDER BY rowid').iterate()) read = row.v;
    }
    const err = await rejection(iterateToUnsafeInteger);
    assert.equal(err.code, 'ERR_OUT_OF_RANGE');
    assert.equal(read, 1000);
    assertNamed(err, 'iterateToUnsafeInteger');

    // SQLite fails while stepping a chunk that was read ahead.
    async function iterateToOverflow() {
      const stmt = db.prepare('SELECT CASE WHEN v > 1000 THEN abs(-9223372036854775807 - 1) ELSE v END AS v FROM big ORDER BY rowid');
      for await (const row of stmt.iterate()) read = row.v;
    }
    const overflow = await rejection(iterateToOverflow);
    assert.equal(overflow.message, 'integer overflow');
    assertNamed(overflow, 'iterateToOverflow');
  } finally {
    await db.close();
  }
});

test("a failed batch and a decoding error name the caller's function", async () => {
  const db = await open();
  try {
    async function batchTakenEmail() {
      await db.batch([
        ['INSERT INTO users(email) VALUES (?)', ['fresh']],
        ['INSERT INTO users(email) VALUES (?)', ['taken']],
      ]);
    }
    const err = await rejection(batchTakenEmail);
    assert.equal(err.batchIndex, 1);
    assertNamed(err, 'batchTakenEmail');
    async function getUnsafeInteger() {
      await db.prepare('SELECT 9007199254740993 AS v').get();
    }
    const range = await rejection(getUnsafeInteger);
    assert.equal(range.code, 'ERR_OUT_OF_RANGE');
    assertNamed(range, 'getUnsafeInteger');
  } finally {
    await db.close();
  }
});

test('an abort reason and a value a SQL function threw are rejected with as they are', async () => {
  const db = await open();
  try {
    const thrown = new Error('from the function');
    const stack = thrown.stack;
    db.function('explode', () => {
      throw thrown;
    });
    const err = await rejection(() => db.prepare('SELECT explode()').get());
    assert.equal(err, thrown);
    assert.equal(err.stack, stack);

    const reason = new Error('stop');
    const reasonStack = reason.stack;
    const controller = new AbortController();
    const endless = db.prepare('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n');
    const pending = endless.withOptions({ signal: controller.signal }).get();
    setTimeout(() => controller.abort(reason), 20);
    const aborted = await rejection(() => pending);
    assert.equal(aborted, reason);
    assert.equal(aborted.stack, reasonStack);
  } finally {
    await db.close();
  }
});

test("with a subscriber on the sqlite.db.query channel, a failed call still names the caller's function", async () => {
  const db = await open();
  const seen = [];
  const listener = (message) => seen.push(message.sql);
  diagnosticsChannel.subscribe('sqlite.db.query', listener);
  try {
    async function insertTakenObserved() {
      await db.prepare('INSERT INTO users(email) VALUES (?)').run('taken');
    }
    assertNamed(await rejection(insertTakenObserved), 'insertTakenObserved');
    assert.deepEqual(seen, ['INSERT INTO users(email) VALUES (?)']);
  } finally {
    diagnosticsChannel.unsubscribe('sqlite.db.query', listener);
    await db.close();
  }
});
