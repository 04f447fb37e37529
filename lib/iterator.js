'use strict';

// RowIterator: the async iterator behind `stmt.iterate()`. It buffers one
// chunk and asks for the next as soon as the consumer starts on the current
// one, so at most two chunks are in memory whatever the result's size.
// Every chunk carries the statement's signal: an abort stops the chunk
// running then. Its timeout bounds the first chunk only (the consumer sets
// the pace of the rest).

const { finalized } = require('./core.js');
const { restackAt } = require('./calls.js');
const { errorFromNative } = require('./errors.js');
const { chunk: CHUNK, unreadable: UNREADABLE } = require('./protocol.js');
const { rowMaker } = require('./rows.js');

/** The cursor a chunk leaves open, as `[role, id]` (core.next's), or null once it is done. */
function cursorOf(chunk) {
  const role = chunk[CHUNK.CURSOR_ROLE];
  return role === null ? null : [role, chunk[CHUNK.CURSOR_ID]];
}

const DONE = Object.freeze({ __proto__: null, done: true, value: null });

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
  // The chunk's `(columns, values, offset) => row`, asked for once a chunk.
  #make = null;
  #values = null;
  #offset = 0;
  #cursor = null;
  #ahead = null;
  #finished = false;
  #unreadable = null;
  // Whether a next() or return() is running; the resolvers of those
  // called meanwhile, which run in turn after it.
  #busy = false;
  #waiting = [];
  // The control of every chunk after the first: the signal, no timeout.
  #control;

  constructor(core, scope, first, options, signal) {
    this.#core = core;
    this.#scope = scope;
    this.#options = options;
    this.#ahead = first;
    this.#control = { signal, timeout: 0 };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  // The promise a caller gets is the step's own, which nothing else
  // waits on: V8 then follows it to the caller's `await`, and an error
  // made in a step names the caller on its stack.
  next() {
    return this.#inTurn(() => this.#step());
  }

  /** Runs `turn` (which ends with #done()) once those called before it ended. */
  #inTurn(turn) {
    if (!this.#busy) {
      this.#busy = true;
      return turn();
    }
    return new Promise((resolve) => this.#waiting.push(resolve)).then(turn);
  }

  #done() {
    const next = this.#waiting.shift();
    if (next === undefined) this.#busy = false;
    else next();
  }

  async #step() {
    try {
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
          const start = this.#offset - width;
          const row = this.#options.returnArrays
            ? this.#values.slice(start, this.#offset)
            : this.#make(this.#columns, this.#values, start);
          return { __proto__: null, done: false, value: row };
        }
        if (this.#ahead === null) {
          if (this.#cursor === null) {
            this.#finish();
            return DONE;
          }
          this.#ahead = this.#core.next(this.#cursor, this.#options, this.#scope, this.#control);
        }
        let chunk;
        try {
          chunk = await this.#ahead;
        } catch (err) {
          // An abort may have taken the chunk out before it ran: the
          // cursor is then still open on its thread.
          const open = this.#cursor;
          this.#cursor = null;
          this.#finish();
          if (open !== null && this.#control.signal?.aborted) this.#core.closeCursor(open, this.#scope).catch(() => {});
          // A chunk read ahead was waited on from here only later: its
          // error is given the reader's stack now.
          restackAt(err);
          throw err;
        }
        this.#ahead = null;
        this.#columns = chunk[CHUNK.COLUMNS];
        this.#make = rowMaker(this.#columns);
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
          this.#ahead = this.#core.next(cursor, this.#options, this.#scope, this.#control);
          this.#ahead.catch(() => {});
        }
      }
    } finally {
      this.#done();
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
    return this.#inTurn(() => this.#close());
  }

  async #close() {
    try {
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
    } finally {
      this.#done();
    }
  }
}

module.exports = { RowIterator };
