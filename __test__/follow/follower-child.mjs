// A process the restart test kills with SIGKILL in the middle of a catch-up:
// follows the replica at argv[3] into the database at argv[2] and prints
// each applied TXID as a line, until it is killed.

import { Database } from '../replication/helpers.mjs';

const [file, url] = process.argv.slice(2);
const db = await Database.open(file, { follow: { url, pollInterval: 20 } });
db.on('applied', ({ txid }) => process.stdout.write(`${txid}\n`));
setInterval(() => {}, 1000);
