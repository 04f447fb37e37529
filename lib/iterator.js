'use strict';

// RowIterator: the async iterator behind `stmt.iterate()`. It buffers one
// chunk and asks for the next as soon as the consumer starts on the current
// one, so at most two chunks are in memory whatever the result's size.

const { finalized } = require('./core.js');
const { errorFromNative } = require('./errors.js');
const { chunk: CHUNK, unreadable: UNREADABLE } = require('./protocol.js');
const { makeRow } = require('./rows.js');

const DONE = Object.freeze({ __proto__: null, done: true, value: null });

/** The cursor a chunk leaves open, as `[role, id]` (core.next's), or null once it is done. */
function cursorOf(chunk) {
  const role = chunk[CHUNK.CURSOR_ROLE];
  return role === null ? null : [role, chunk[CHUNK.CURSOR_ID]];
}

// A cursor left open by an iterator nobody finished is closed when the
// iterator is garbage-collected, so its reader is not pinned forever.
const abandoned = new FinalizationRegistry(({ core, cursor, scope }) => {
  core.closeCursor(cursor, scope).catch(() => {});
});

class RowIterator {
  #core;
  #scope;
  #options;
  #columns = null;
  #values = null;
  #offset = 0;
  #cursor = null;
  #ahead = null;
  #finished = false;
  #unreadable = null;
  #chain = Promise.resolve();

  constructor(core, scope, first, options) {
    this.#core = core;
    this.#scope = scope;
    this.#options = options;
    this.#ahead = first;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    const step = this.#chain.then(() => this.#step());
    this.#chain = step.catch(() => {});
    return step;
  }

  async #step() {
    for (;;) {
      if (this.#finished) return DONE;
      // After close() its statement is finalized (or its transaction rolled
      // back): rows already fetched are not handed out any more.
      const gone = this.#scope === null ? (this.#core.closing ? finalized() : null) : this.#scope.error;
      if (gone !== null) {
        this.#ahead?.catch(() => {});
        this.#ahead = null;
        this.#finish();
        throw gone;
      }
      if (this.#values !== null && this.#offset < this.#values.length) {
        const width = this.#columns.length;
        const err = this.#unreadable?.get(this.#offset / width);
        this.#offset += width;
        // A row with a value JS cannot take: node:sqlite's next() throws
        // on it, and the one after goes on with the next row.
        if (err !== undefined) throw errorFromNative(err);
        const row = makeRow(this.#columns, this.#values, this.#offset - width, this.#options.returnArrays);
        return { __proto__: null, done: false, value: row };
      }
      if (this.#ahead === null) {
        if (this.#cursor === null) {
          this.#finish();
          return DONE;
        }
        this.#ahead = this.#core.next(this.#cursor, this.#options, this.#scope);
      }
      let chunk;
      try {
        chunk = await this.#ahead;
      } catch (err) {
        this.#cursor = null;
        this.#finish();
        throw err;
      }
      this.#ahead = null;
      this.#columns = chunk[CHUNK.COLUMNS];
      this.#values = this.#columns.length === 0 ? [] : chunk[CHUNK.VALUES];
      this.#offset = 0;
      this.#unreadable = null;
      const unreadable = chunk[CHUNK.UNREADABLE];
      if (unreadable !== undefined) {
        this.#unreadable = new Map();
        for (let i = 0; i < unreadable.length; i += UNREADABLE.WIDTH) {
          this.#unreadable.set(unreadable[i + UNREADABLE.ROW], unreadable[i + UNREADABLE.ERROR]);
        }
      }
      const cursor = cursorOf(chunk);
      if (this.#cursor === null && cursor !== null) {
        abandoned.register(this, { core: this.#core, cursor, scope: this.#scope }, this);
      }
      this.#cursor = cursor;
      if (cursor !== null) {
        // Read ahead while the consumer works through this chunk.
        this.#ahead = this.#core.next(cursor, this.#options, this.#scope);
        this.#ahead.catch(() => {});
      }
    }
  }

  #finish() {
    this.#finished = true;
    this.#values = null;
    this.#unreadable = null;
    abandoned.unregister(this);
  }

  /** Ends the iteration early (called by `break` in `for await`). */
  return() {
    const step = this.#chain.then(async () => {
      if (this.#finished) return DONE;
      let open = this.#cursor;
      const ahead = this.#ahead;
      this.#cursor = null;
      this.#ahead = null;
      this.#finish();
      if (ahead !== null) {
        // The chunk in flight may be the first, which opened the cursor.
        const chunk = await ahead.catch(() => null);
        if (chunk !== null) open = cursorOf(chunk);
      }
      if (open !== null) await this.#core.closeCursor(open, this.#scope).catch(() => {});
      return DONE;
    });
    this.#chain = step.catch(() => {});
    return step;
  }
}

module.exports = { RowIterator };
