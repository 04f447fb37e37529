'use strict';

// The Backup cases of the sqlite3 differential test
// (sqlite3-differential.test.mjs), in the form of sqlite3-cases.cjs: each
// drives a module's `db.backup()` step by step and logs what it saw, so the
// real sqlite3 and offloop/sqlite3 must agree on every step's callback,
// `remaining`, `pageCount`, `idle`, `completed` and `failed`.

const { encode, step } = require('./sqlite3-cases.cjs');

// Rows of 1000 bytes: about four to a page, so the source has dozens of pages.
const FILL =
  "CREATE TABLE b(v); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120) INSERT INTO b SELECT printf('%.1000c', 'x') FROM n";

/** A database at `file` holding table b, open (closed when the case ends). */
async function filled(sqlite3, ctx, file) {
  const db = ctx.done(new sqlite3.Database(ctx.file(file)));
  await step((cb) => db.exec(FILL, cb));
  return db;
}

/** `db.backup(...args)` once its initialisation called back, with what it said. */
async function started(ctx, db, ...args) {
  return new Promise((resolve) => {
    const b = db.backup(...args, function (err) {
      ctx.log('init', encode(err), this === b, b.idle);
      resolve(b);
    });
  });
}

/** One step, logged with the backup's state right after the call and in its callback. */
async function logStep(ctx, backup, pages, label = 'step') {
  let idleDuring;
  const { self, args } = await step((cb) => {
    backup.step(pages, cb);
    idleDuring = backup.idle;
  });
  ctx.log(label, pages, encode(args), self === backup, idleDuring, backup.remaining, backup.pageCount, backup.completed, backup.failed);
  return args;
}

async function rows(sqlite3, ctx, file) {
  const copy = new sqlite3.Database(ctx.file(file));
  const { args } = await step((cb) => copy.get('SELECT count(*) AS n, sum(length(v)) AS bytes FROM b', cb));
  await step((cb) => copy.close(cb));
  return encode(args);
}

const cases = {
  'backup/step-copies-n-pages-per-step': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('copy.db'));
    ctx.log('before', backup.remaining, backup.pageCount, backup.completed, backup.failed);
    for (let i = 0; i < 100 && !backup.completed; i++) await logStep(ctx, backup, 7);
    // A completed backup's handle is gone (DONE is not a retry error): a
    // step reports completion again without copying.
    await logStep(ctx, backup, 7, 'again');
    await step((cb) => backup.finish(cb));
    ctx.log('finished', backup.idle, backup.completed, backup.failed);
    ctx.log('copy', await rows(sqlite3, ctx, 'copy.db'));
  },

  'backup/a-write-from-another-connection-restarts-the-copy': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('copy.db'));
    await logStep(ctx, backup, 10);
    await logStep(ctx, backup, 10);
    const other = new sqlite3.Database(ctx.file('source.db'));
    await step((cb) => other.run("INSERT INTO b VALUES ('written between steps')", cb));
    await step((cb) => other.close(cb));
    await logStep(ctx, backup, 10, 'restarted');
    await logStep(ctx, backup, -1, 'rest');
    await step((cb) => backup.finish(cb));
    ctx.log('copy', await rows(sqlite3, ctx, 'copy.db'));
  },

  'backup/a-busy-target-fails-the-step-and-the-backup-goes-on': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const locker = new sqlite3.Database(ctx.file('copy.db'));
    await step((cb) => locker.exec('BEGIN EXCLUSIVE; CREATE TABLE held(x)', cb));
    const backup = await started(ctx, db, ctx.file('copy.db'));
    ctx.log('retryErrors', backup.retryErrors);
    await logStep(ctx, backup, 5, 'locked');
    await logStep(ctx, backup, 5, 'still locked');
    await step((cb) => locker.exec('ROLLBACK', cb));
    await step((cb) => locker.close(cb));
    await logStep(ctx, backup, 5, 'unlocked');
    await logStep(ctx, backup, -1, 'rest');
    await step((cb) => backup.finish(cb));
    ctx.log('copy', await rows(sqlite3, ctx, 'copy.db'));
  },

  'backup/an-error-not-in-retryErrors-ends-the-backup': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const locker = new sqlite3.Database(ctx.file('copy.db'));
    await step((cb) => locker.exec('BEGIN EXCLUSIVE; CREATE TABLE held(x)', cb));
    const backup = await started(ctx, db, ctx.file('copy.db'));
    backup.retryErrors = [sqlite3.LOCKED];
    await logStep(ctx, backup, 5, 'locked');
    await step((cb) => locker.exec('ROLLBACK', cb));
    await step((cb) => locker.close(cb));
    // The backup is gone: the step reports the last failure again.
    await logStep(ctx, backup, 5, 'after the end');
    const errors = [];
    backup.on('error', (err) => errors.push(encode(err)));
    await new Promise((resolve) => {
      backup.step(5);
      backup.finish(resolve);
    });
    ctx.log('without a callback', errors, backup.completed, backup.failed);
  },

  'backup/no-retryErrors-keeps-stepping-a-done-backup': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('copy.db'));
    backup.retryErrors = [];
    await logStep(ctx, backup, -1);
    await logStep(ctx, backup, 3, 'again');
    await step((cb) => backup.finish(cb));
    ctx.log('finished', backup.completed, backup.failed);
  },

  'backup/unknown-schema-names': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('copy.db'), 'nowhere', 'main', true);
    await logStep(ctx, backup, 5);
    await logStep(ctx, backup, 5, 'again');
    await step((cb) => backup.finish(cb));
    ctx.log('finished', backup.completed, backup.failed);
  },

  'backup/a-target-that-cannot-open': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('no-such-folder/copy.db'));
    ctx.log('after', backup.idle, backup.completed, backup.failed, backup.remaining, backup.pageCount);
    const errors = [];
    db.on('error', (err) => errors.push(encode(err)));
    const closed = await step((cb) => db.close(cb));
    ctx.log('close', encode(closed.args), errors);
  },

  'backup/from-a-file-into-the-database': async (sqlite3, ctx) => {
    const source = await filled(sqlite3, ctx, 'source.db');
    await step((cb) => source.close(cb));
    const db = ctx.done(new sqlite3.Database(ctx.file('restored.db')));
    await step((cb) => db.exec('CREATE TABLE old(x); INSERT INTO old VALUES (1)', cb));
    const backup = await started(ctx, db, ctx.file('source.db'), 'main', 'main', false);
    await logStep(ctx, backup, 20);
    await logStep(ctx, backup, -1, 'rest');
    await step((cb) => backup.finish(cb));
    ctx.log('tables', encode((await step((cb) => db.all("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", cb))).args));
    ctx.log('rows', encode((await step((cb) => db.get('SELECT count(*) AS n FROM b', cb))).args));
  },

  'backup/close-waits-for-finish': async (sqlite3, ctx) => {
    const db = await filled(sqlite3, ctx, 'source.db');
    const backup = await started(ctx, db, ctx.file('copy.db'));
    await logStep(ctx, backup, 3);
    ctx.log('close while open', encode((await step((cb) => db.close(cb))).args), db.open);
    await step((cb) => backup.finish(cb));
    ctx.log('after finish', encode((await step((cb) => backup.step(1, cb))).args));
  },
};

module.exports = { cases };
