'use strict';

// Sessions and changesets: `db.createSession()` with its Session (changeset,
// patchset, close) and `db.applyChangeset()`. This file owns node:sqlite's
// argument checks and messages, and the JS side of a changeset's handlers
// (their answers made plain numbers before they cross to the writer). Each
// call is a job on the writer (src/node/session.rs); nothing here touches
// SQLite.

const { native, track } = require('./calls.js');
const { send } = require('./core.js');
const { argType, nodeError, notOpen } = require('./errors.js');
const { session: SESSION } = require('./protocol.js');

const MIN_INT32 = -(2 ** 31);
const MAX_INT32 = 2 ** 31 - 1;

// What SQLite refuses as a conflict's answer (SQLITE_MISUSE), as
// node:sqlite does with an answer that is not an int32.
const NOT_AN_ANSWER = -1;

// Only db.createSession() makes sessions; `new Session()` throws, as
// node:sqlite's does.
const MAKE = Symbol('createSession');

function sessionClosed() {
  return nodeError(Error, 'ERR_INVALID_STATE', 'session is not open');
}

/** Records the changes made through the writer, as node:sqlite's Session. */
class Session {
  #core;
  #id;
  #open = true;
  // Why the session could not start, once the writer said so.
  #failed = null;

  constructor(make, core, options) {
    if (make !== MAKE) throw nodeError(TypeError, 'ERR_ILLEGAL_CONSTRUCTOR', 'Illegal constructor');
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw argType('options', 'an object');
    }
    const table = options?.table;
    const db = options?.db;
    if (table !== undefined && typeof table !== 'string') throw argType('options.table', 'a string');
    if (db !== undefined && typeof db !== 'string') throw argType('options.db', 'a string');
    this.#core = core;
    const { id, promise } = track(null, null);
    send(id, () => {
      this.#id = native.createSession(core.native, id, db ?? 'main', table);
    });
    promise.catch((err) => {
      this.#failed = err;
    });
  }

  #call(kind) {
    if (this.#core.closing) return Promise.reject(notOpen());
    if (!this.#open) return Promise.reject(sessionClosed());
    if (kind === SESSION.CLOSE) this.#open = false;
    const { id, promise } = track(null, null);
    send(id, () => native.sessionCall(this.#core.native, id, this.#id, kind));
    return promise.catch((err) => {
      throw this.#failed ?? err;
    });
  }

  /** The changes recorded so far, as a changeset (a Uint8Array). */
  changeset() {
    return this.#call(SESSION.CHANGESET);
  }

  /** The changes recorded so far, as a patchset (a Uint8Array). */
  patchset() {
    return this.#call(SESSION.PATCHSET);
  }

  /** Stops recording; resolves once the writer let the session go. */
  close() {
    return this.#call(SESSION.CLOSE).then(() => undefined);
  }

  [Symbol.dispose]() {
    if (this.#open && !this.#core.closing) this.close().catch(() => {});
  }
}

/** `db.createSession(options)` on `core`. */
function createSession(core, options) {
  return new Session(MAKE, core, options);
}

/** `db.applyChangeset(changeset, { filter, onConflict })` on `core`. */
function applyChangeset(core, changeset, options) {
  if (core.closing) return Promise.reject(notOpen());
  if (!(changeset instanceof Uint8Array)) throw argType('changeset', 'a Uint8Array');
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw argType('options', 'an object');
  }
  const filter = options?.filter;
  const onConflict = options?.onConflict;
  if (filter !== undefined && typeof filter !== 'function') throw argType('options.filter', 'a function');
  if (onConflict !== undefined && typeof onConflict !== 'function') {
    throw argType('options.onConflict', 'a function');
  }
  const tableFilter = filter === undefined ? undefined : (table) => (filter(table) ? 1 : 0);
  const conflict =
    onConflict === undefined
      ? undefined
      : (kind) => {
          const answer = onConflict(kind);
          return Number.isInteger(answer) && answer >= MIN_INT32 && answer <= MAX_INT32 ? answer : NOT_AN_ANSWER;
        };
  const { id, promise } = track(null, null);
  send(id, () => native.applyChangeset(core.native, id, changeset, tableFilter, conflict));
  return promise.catch((err) => {
    // node:sqlite's applyChangeset() errors carry no errstr.
    if (err?.code === 'ERR_SQLITE_ERROR') delete err.errstr;
    throw err;
  });
}

module.exports = { Session, createSession, applyChangeset };
