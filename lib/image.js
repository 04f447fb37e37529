'use strict';

// `db.serialize()` and `db.deserialize()`: a schema's whole database as
// one Uint8Array, out of the writer's connection or into it. This file owns
// node:sqlite's argument checks and messages, and the rule of which
// databases may take an image; each call is a writer job
// (src/node/image.rs). Nothing here touches SQLite.

const { native, track } = require('./calls.js');
const { send } = require('./core.js');
const { argType, codedError, nodeError, notOpen } = require('./errors.js');

function readDbName(dbName, name) {
  if (dbName === undefined) return 'main';
  if (typeof dbName !== 'string') throw argType(name, 'a string');
  return dbName;
}

// An image replaces the writer's connection's schema only. Reader threads
// would go on reading the file, and the replicator would go on shipping
// it: a database with either takes no image, rather than answer from two
// databases at once.
function refusal(core) {
  if (core.native.stats().readers.length > 0) {
    return 'deserialize() needs a database without reader threads (":memory:" or readers: 0)';
  }
  if (core.native.replicaStats() != null) return 'deserialize() is not possible while the database replicates';
  return null;
}

/** `db.serialize(dbName)` on `core`: resolves to the schema's bytes. */
function serialize(core, dbName) {
  if (core.closing) return Promise.reject(notOpen());
  const name = readDbName(dbName, 'dbName');
  const { id, promise } = track(null, null);
  send(id, () => native.serialize(core.native, id, name));
  return promise;
}

/** `db.deserialize(buffer, { dbName })` on `core`. */
function deserialize(core, buffer, options) {
  if (core.closing) return Promise.reject(notOpen());
  if (!(buffer instanceof Uint8Array)) throw argType('buffer', 'a Uint8Array');
  if (buffer.length === 0) throw codedError('ERR_INVALID_ARG_VALUE', 'The "buffer" argument must not be empty.');
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw argType('options', 'an object');
  }
  const name = readDbName(options?.dbName, 'options.dbName');
  const refused = refusal(core);
  if (refused !== null) return Promise.reject(nodeError(Error, 'ERR_INVALID_STATE', refused));
  const { id, promise } = track(null, null);
  send(id, () => native.deserialize(core.native, id, buffer, name));
  return promise.then(() => undefined);
}

module.exports = { serialize, deserialize };
