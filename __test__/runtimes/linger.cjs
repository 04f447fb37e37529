'use strict';

// The linger in any runtime, for runtimes.test.mjs: awaits one get() after
// another until a reply has been drained by a linger (the JS thread looking
// for it before its loop blocks) rather than by a wake-up of the loop, or
// until MAX_CALLS. Prints the waker, the drains counted and whether every
// row was the one asked for. Its arguments: the offloop entry point and a
// database file.

const [entry, file] = process.argv.slice(-2);
const { Database } = require(entry);

const MAX_CALLS = 20000;
const ROWS = 100;

(async () => {
  const db = await Database.open(file);
  await db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  await db.transaction(async (tx) => {
    const insert = tx.prepare('INSERT INTO t(id, v) VALUES (?, ?)');
    for (let id = 1; id <= ROWS; id++) await insert.run(id, `row ${id}`);
  });
  const get = db.prepare('SELECT id, v FROM t WHERE id = ?');
  let calls = 0;
  let wrong = 0;
  while (calls < MAX_CALLS && db.stats().drains.lingered === 0) {
    const id = (calls % ROWS) + 1;
    const row = await get.get(id);
    if (row.id !== id || row.v !== `row ${id}`) wrong++;
    calls++;
  }
  const { waker, drains } = db.stats();
  await db.close();
  console.log(JSON.stringify({ waker, lingered: drains.lingered > 0, woken: drains.woken > 0, wrong }));
})();
