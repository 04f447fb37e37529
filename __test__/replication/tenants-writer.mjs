// A child process for the process lease tests: one process writing several
// databases, `<dir>/t<i>.db` replicating to `<replicas>/t<i>` (a folder
// URL), with the replica options in argv[5] (JSON). It reports
// `{ opened, holders }`, then on each `{ write: true, round }` message
// inserts one row in every database and reports `{ round, results }`, one
// `'acked'` or error code per database; `{ stats }` reports each
// database's stats().replica. Not a test file of its own.

import path from 'node:path';

import offloop from '../../index.js';

const [dir, replicas, count, json] = process.argv.slice(2);
const options = JSON.parse(json);
const dbs = [];
for (let i = 0; i < Number(count); i++) {
  const db = await offloop.Database.open(path.join(dir, `t${i}.db`), {
    replica: { url: `${replicas}/t${i}`, ...options },
  });
  await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)');
  dbs.push(db);
}
process.send({ opened: true, holders: dbs.map((db) => db.stats().replica.leaseHolder) });
process.on('message', async (msg) => {
  if (msg.write) {
    const results = await Promise.all(
      dbs.map((db) =>
        db
          .prepare('INSERT INTO t(v) VALUES (?)')
          .run(`${process.pid}`)
          .then(
            () => 'acked',
            (err) => err.code,
          ),
      ),
    );
    process.send({ round: msg.round, results });
  } else if (msg.stats) {
    process.send({ stats: dbs.map((db) => db.stats().replica) });
  }
});
