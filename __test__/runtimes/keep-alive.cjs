'use strict';

// Keep-alive in any runtime, for runtimes.test.mjs: `idle` leaves an open
// database with nothing pending (the process must then exit by itself),
// `pending` leaves one slow call pending and nothing else (the process
// must stay alive until it settles). Nothing else holds the event loop: no
// timer, no socket. Its arguments: the mode, the offloop entry point, and
// a database file.

const [mode, entry, file] = process.argv.slice(-3);
const { Database } = require(entry);

Database.open(file, { readers: 1 }).then(async (db) => {
  await db.exec('CREATE TABLE IF NOT EXISTS t(x INTEGER); INSERT INTO t VALUES (1)');
  const row = await db.prepare('SELECT count(*) AS n FROM t').get();
  if (mode === 'idle') {
    console.log(`idle ${row.n}`);
    return;
  }
  const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) AS n FROM c';
  db.prepare(slow)
    .get()
    .then((r) => console.log(`settled ${r.n}`));
});
