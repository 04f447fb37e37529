// FAILOVER (b): one writer of a failover round, in a child process of
// bench/failover.mjs, killed by it mid-way.
//
//   node bench/workloads/failover-writer.mjs --url s3://bucket/prefix --endpoint URL
//        --file <db> --writers N --lease-ttl MS [--restore] [--offloop <package dir>]
//
// Opens `file` with `durability: 'replica'` (and with --restore,
// `restore: 'full'`: a missing file is restored from the replica first),
// retrying every 100 ms while
// another writer's lease is live. Prints one JSON line once open
// (`{ opened, at }`, ms since the epoch), then `writers` async callers
// insert rows back to back and a line for each acknowledged one
// (`{ acked: value, at }`), until killed. A line `{ rows: [...] }` comes
// first, after the open: every value the database held when it took over.

import fs from 'node:fs';
import path from 'node:path';
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
    restore: { type: 'boolean', default: false },
    offloop: { type: 'string', default: ROOT },
  },
});
const { Database } = requireOffloop(opts.offloop);
const options = {
  ...(opts.restore ? { restore: 'full' } : {}),
  replica: {
    url: opts.url,
    durability: 'replica',
    leaseTtl: Number(opts['lease-ttl']),
    endpoint: opts.endpoint,
    region: S3_REGION,
    forcePathStyle: true,
    ...S3_KEYS,
  },
};
let db;
for (;;) {
  try {
    db = await Database.open(opts.file, options);
    break;
  } catch (err) {
    if (err.code !== 'ERR_OFFLOOP_REPLICA' || !/lease is held/.test(err.message)) throw err;
    // A refused open may have restored the file: the next try restores afresh.
    for (const f of fs.readdirSync(path.dirname(opts.file))) {
      if (f.startsWith(path.basename(opts.file))) fs.rmSync(path.join(path.dirname(opts.file), f), { recursive: true, force: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
print({ opened: true, at: Date.now() });
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
