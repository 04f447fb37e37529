// A worker thread that watches the file `litestream restore -f` follows:
// every millisecond it opens the file read-only (better-sqlite3), reads
// `max(id)` of `events`, and closes it again, and posts each new maximum
// with the time it was read. A connection is opened for each read because
// Litestream writes into the file itself under SQLite's locks: a
// connection kept open on the file (which it restored in WAL mode) holds a
// shared lock for as long as it is open, and Litestream then never
// applies anything. It only reads the file, and runs off the main
// thread so that the offloop follower beside it is measured undisturbed.

import { parentPort, workerData } from 'node:worker_threads';

import { benchRequire } from '../lib/paths.mjs';

const BetterSqlite3 = benchRequire('better-sqlite3');
const { file } = workerData;
const pause = new Int32Array(new SharedArrayBuffer(4));
let last = 0;
let running = true;
parentPort.on('message', (m) => {
  if (m === 'stop') running = false;
});

function read() {
  let db = null;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 0 });
    return db.prepare('SELECT coalesce(max(id), 0) AS m FROM events').get().m;
  } catch {
    // Busy (Litestream is writing) or not there yet: the next read will do.
    return null;
  } finally {
    db?.close();
  }
}

function tick() {
  if (!running) {
    parentPort.close();
    return;
  }
  const m = read();
  if (m !== null && m > last) {
    parentPort.postMessage({ maxId: m, at: performance.timeOrigin + performance.now() });
    last = m;
  }
  Atomics.wait(pause, 0, 0, 1);
  setImmediate(tick);
}
tick();
