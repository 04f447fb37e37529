// FAILOVER (b): one writer of a failover round, in a child process of
// bench/failover.mjs, killed by it mid-way.
//
//   node bench/workloads/failover-writer.mjs --url s3://bucket/prefix --endpoint URL
//        --file <db> --writers N --lease-ttl MS [--standby --poll-interval MS]
//        [--offloop <package dir>]
//
// Opens `file` with `durability: 'replica'`, or with --standby as a
// follower of the replica with `promote: 'auto'` (the same lease and
// durability once promoted), which waits for its `'promoted'` event. Prints
// one JSON line once open (`{ opened, at }`, ms since the epoch), and a
// standby `{ promoted, at }` when it promotes; then `writers` async callers
// insert rows back to back and a line for each acknowledged one
// (`{ acked: value, at }`), until killed. A line `{ rows: [...] }` comes
// first, once the database writes: every value it held when it took over.

import { once } from 'node:events';
import { parseArgs } from 'node:util';

import { ROOT, requireOffloop } from '../lib/paths.mjs';
import { S3_KEYS, S3_REGION } from '../lib/s3-servers.mjs';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string' },
    endpoint: { type: 'string' },
    file: { type: 'string' },
    writers: { type: 'string' },
    'lease-ttl': { type: 'string' },
    standby: { type: 'boolean', default: false },
    'poll-interval': { type: 'string', default: '1000' },
    offloop: { type: 'string', default: ROOT },
  },
});
const { Database } = requireOffloop(opts.offloop);
const replica = {
  url: opts.url,
  durability: 'replica',
  leaseTtl: Number(opts['lease-ttl']),
  endpoint: opts.endpoint,
  region: S3_REGION,
  forcePathStyle: true,
  ...S3_KEYS,
};
const options = opts.standby
  ? { follow: { ...replica, promote: 'auto', pollInterval: Number(opts['poll-interval']) } }
  : { replica };
const db = await Database.open(opts.file, options);
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
print({ opened: true, at: Date.now() });
if (opts.standby) {
  // The follower keeps no process alive by itself.
  const alive = setInterval(() => {}, 1000);
  await once(db, 'promoted');
  clearInterval(alive);
  print({ promoted: true, at: Date.now() });
}
await db.exec('CREATE TABLE IF NOT EXISTS t(v TEXT PRIMARY KEY)');
print({ rows: (await db.prepare('SELECT v FROM t').all()).map((r) => r.v) });
const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
let n = 0;
await Promise.all(
  Array.from({ length: Number(opts.writers) }, async () => {
    for (;;) {
      const v = `${process.pid}.${n++}`;
      await insert.run(v);
      print({ acked: v, at: Date.now() });
    }
  }),
);
