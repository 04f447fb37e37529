// A process the paged-restore test kills during the fill: opens the
// database at argv[2] from the replica options in argv[3] (JSON) with
// `restore: 'paged'` and prints `stats().restore` as a JSON line every few
// milliseconds until it is killed or the fill ends.

import { Database } from './helpers.mjs';

const [file, options] = process.argv.slice(2);
const db = await Database.open(file, { replica: JSON.parse(options), restore: 'paged' });
for (;;) {
  const s = db.stats().restore;
  process.stdout.write(`${JSON.stringify(s)}\n`);
  if (s.filled) break;
  await new Promise((r) => setTimeout(r, 20));
}
await db.close();
