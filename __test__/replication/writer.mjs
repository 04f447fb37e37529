// A child process for the kill test: writes in rounds with replication on
// and reports after each resolved syncReplica() how many rows it covers,
// until its parent kills it. Not a test file of its own.

import offloop from '../../index.js';

const [file, url] = process.argv.slice(2);
const db = await offloop.Database.open(file, {
  checkpoint: { thresholdFrames: 16, idleMs: 5 },
  replica: { url, syncInterval: 10 },
});
await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT, pad BLOB)');
const insert = db.prepare('INSERT INTO t(v, pad) VALUES (?, randomblob(3000))');
for (let round = 0; ; round++) {
  const writes = Array.from({ length: 25 }, (_, i) => insert.run(`${round}.${i}`));
  await Promise.all(writes);
  // Writes go on while the sync is in flight.
  const more = insert.run(`${round}.extra`);
  await db.syncReplica();
  const { n } = await db.prepare('SELECT count(*) AS n FROM t').get();
  await more;
  process.send({ round, synced: n - 1 });
}
