'use strict';

// The closes in flight per database file in this JS environment, so that
// a close begins only once the closes of its file begun before it have
// ended. SQLite's last connection to close a WAL database checkpoints it
// and removes its -wal and -shm files; a close that runs while another
// database of the same file is still closing is not the last, and leaves
// them behind. sqlite3's close is one sqlite3_close, over in a moment, so a
// library that closes one database without waiting for it (Sequelize
// releases each transaction's database so) and then closes another on the
// same file finds the files gone; offloop's takes longer (every connection
// closes on its own thread, after the checkpointer's last pass). This file
// never opens or closes anything itself.

const inFlight = new Map();

function ignore() {}

/**
 * Runs `close` once every close of `file` (an absolute path, or ':memory:'
 * for a database of no file) registered before this call has settled, and
 * returns its promise. An in-memory database shares no file: it waits for
 * nothing.
 */
function closeInTurn(file, close) {
  if (file === ':memory:') return close();
  let closes = inFlight.get(file);
  if (closes === undefined) {
    closes = new Set();
    inFlight.set(file, closes);
  }
  const closed = Promise.allSettled([...closes]).then(close);
  const settled = closed.then(ignore, ignore);
  closes.add(settled);
  settled.then(() => {
    closes.delete(settled);
    if (closes.size === 0 && inFlight.get(file) === closes) inFlight.delete(file);
  });
  return closed;
}

module.exports = { closeInTurn };
