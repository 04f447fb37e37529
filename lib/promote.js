'use strict';

// A follower's promotion to its replica's writer: `db.promote()`, and
// `follow: { promote: 'auto' }`, which promotes once the writer's lease
// has expired and emits `'promoted'`. The steps themselves (catch up,
// take the lease, stop following, start replicating, lift the guard) run
// on offloop's threads (src/node/promote.rs); this file starts them and
// turns the database's JS side into a writer's once they are done.

const { native, track, forget } = require('./calls.js');
const { send } = require('./core.js');
const { nodeError, notOpen } = require('./errors.js');
const { wrapTxid } = require('./restore.js');
const { startFollowing, stopFollowing } = require('./follow.js');
const { databasePath, traceOperation } = require('./tracing.js');

/**
 * Starts following once the open has resolved: `'applied'` events, and
 * with `promote: 'auto'` the lease watch behind `'promoted'`.
 */
function follow(core, database) {
  startFollowing(core, (txid, pages) => database.emit('applied', { txid, pages }));
  const o = core.options.follow;
  if (o.promote !== 'auto') return;
  const attempt = () => {
    if (core.closing || core.promoting !== undefined) return;
    promote(core).then(
      (promoted) => database.emit('promoted', promoted),
      // Another follower won, or the writer renewed in time: keep following.
      () => {},
    );
  };
  const { id } = track(null, null, () => process.nextTick(attempt));
  send(id, () => native.followWatchLease(core.native, id, o.url, o.pollIntervalMs, o.s3));
  core.leaseWatch = id;
}

/**
 * `db.promote()`: resolves to `{ txid }`, the replica's head the database
 * was promoted at, once writes work; rejects with `ERR_OFFLOOP_REPLICA`
 * (naming the holder) while another writer's lease is live.
 */
function promote(core) {
  return traceOperation('promote', () => ({ method: 'promote', database: databasePath(core) }), () => promoteNow(core));
}

function promoteNow(core) {
  if (core.closing) return Promise.reject(notOpen());
  if (core.promoting !== undefined) return core.promoting;
  if (core.options.follow === undefined) {
    return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', 'the database does not follow a replica'));
  }
  const writer = core.options.follow.writer;
  const { id, promise } = track(wrapTxid, null);
  send(id, () => native.followPromote(core.native, id, writer));
  core.promoting = promise.then(
    (promoted) => {
      stopWatching(core);
      stopFollowing(core);
      core.options = { ...core.options, follow: undefined, replica: writer };
      core.stale = null;
      core.durable = writer.durable;
      return promoted;
    },
    (err) => {
      core.promoting = undefined;
      throw err;
    },
  );
  return core.promoting;
}

/** Forgets the lease watch of a closing or promoted database (it never settles). */
function stopWatching(core) {
  if (core.leaseWatch !== undefined) forget(core.leaseWatch);
  core.leaseWatch = undefined;
}

module.exports = { follow, promote, stopWatching };
