// A child process for the lease tests: a writer that holds a replica's
// lease. It opens `file` replicating to `url` with the replica options in
// argv[4] (JSON; its `restore`, if any, is the open's; with `follow: true`
// the rest are follow options instead, and the child reports
// `{ promoted: txid }` when it promotes itself), reports
// `{ opened, holder }` (or `{ openFailed: code }`), then on each `{ write: n, round }` message
// runs n concurrent inserts, reports each id as it is acknowledged
// (`{ acked }`) or refused (`{ refused: code }`), then `{ round }` (the
// message's, or true); `{ stats }` reports
// stats().replica (and `follow`, stats().follow). Not a test file of its own.

import offloop from '../../index.js';

const [file, url, json] = process.argv.slice(2);
const { restore, follow, ...options } = JSON.parse(json);
let db;
try {
  const open = follow ? { follow: { url, ...options } } : { replica: { url, ...options }, ...(restore ? { restore } : {}) };
  db = await offloop.Database.open(file, open);
} catch (err) {
  process.send({ openFailed: err.code, message: err.message });
  process.exit(0);
}
if (follow) db.on('promoted', ({ txid }) => process.send({ promoted: txid }));
else await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)');
const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
process.send({ opened: true, holder: db.stats().replica?.leaseHolder ?? null });
let next = 0;
process.on('message', async (msg) => {
  if (msg.write !== undefined) {
    const writes = Array.from({ length: msg.write }, async () => {
      const v = `${process.pid}.${next++}`;
      try {
        await insert.run(v);
        process.send({ acked: v });
      } catch (err) {
        process.send({ refused: err.code, v, message: err.message });
      }
    });
    await Promise.all(writes);
    process.send({ round: msg.round ?? true });
  } else if (msg.stats) {
    process.send({ stats: db.stats().replica, follow: db.stats().follow });
  } else if (msg.close) {
    await db.close();
    process.send({ closed: true });
  }
});
