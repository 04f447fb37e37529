'use strict';

// The call queue a sqlite3 Statement and a Backup each keep: their calls
// run one at a time, in the order they were made, once the object is ready
// (prepared, initialised); calls made after it ended (finalized, finished)
// get SQLITE_MISUSE, each through its callback, or once through the owner's
// 'error' event when none had one. This file owns that order; it never
// runs a call's work itself, and knows nothing of statements or backups.

const { RESULT } = require('./constants.js');
const { sqliteError } = require('./errors.js');
const { invoke } = require('./callback.js');
const { Fifo } = require('./fifo.js');

const WIDTH = 5;
const PARAMS = 3;
const ARGS = -1;

class CallQueue {
  #owner;
  #ready;
  #ended;
  #misuse;
  #unheard;
  // (work, count, a, b, callback) per call: no object or closure of its
  // own. `count` 0-2: a parameter list of that many, `a` and `b`, kept in
  // the queue's own slots (no array per queued call); PARAMS: `a` is a
  // longer parameter list; ARGS: `a` is the call's arguments as given.
  #calls = new Fifo(WIDTH);
  /** True while a call runs: the next waits for its end (`process()`). */
  locked = false;

  /**
   * `ready()` and `ended()` read the owner's state; `misuse` is the message
   * a call made after the end gets; `unheard(err)` reports it when no such
   * call had a callback.
   */
  constructor(owner, { ready, ended, misuse, unheard }) {
    this.#owner = owner;
    this.#ready = ready;
    this.#ended = ended;
    this.#misuse = misuse;
    this.#unheard = unheard;
  }

  /** Nothing runs and nothing waits. */
  get idle() {
    return !this.locked && this.#calls.length === 0;
  }

  /**
   * Queues a call: `work.call(owner, args, callback)` runs it, `callback`
   * hears a refusal.
   */
  schedule(work, args, callback) {
    this.#calls.push(work, ARGS, args, undefined, callback);
    this.#scheduled();
  }

  /**
   * Queues a call whose arguments are a parameter list (null: none):
   * `work.call(owner, params, callback)` gets an equal list.
   */
  scheduleParams(work, params, callback) {
    const count = params === null ? 0 : params.length;
    if (count <= 2) this.#calls.push(work, count, count > 0 ? params[0] : undefined, count > 1 ? params[1] : undefined, callback);
    else this.#calls.push(work, PARAMS, params, undefined, callback);
    this.#scheduled();
  }

  #scheduled() {
    if (this.#ended()) this.clean();
    else this.process();
  }

  /** Starts what waits, one call at a time (after the end, refuses it). */
  process() {
    if (this.#ended()) {
      if (this.#calls.length > 0) this.clean();
      return;
    }
    const calls = this.#calls;
    while (this.#ready() && !this.locked && calls.length > 0) {
      const count = calls.peek(1);
      const a = calls.peek(2);
      let args;
      if (count === ARGS || count === PARAMS) args = a;
      else if (count === 0) args = null;
      else if (count === 1) args = [a];
      else args = [a, calls.peek(3)];
      const callback = calls.peek(4);
      calls.shift().call(this.#owner, args, callback);
    }
  }

  // Calls made after the end: each callback gets SQLITE_MISUSE, or the owner
  // reports it once when none had one. Before the owner was ever ready (a
  // failed prepare) they are dropped: that failure was the report.
  clean() {
    const calls = this.#calls;
    if (calls.length === 0) return;
    // Taken whole first: a callback that queues another call meets an
    // empty queue, as it would after the refusals.
    this.#calls = new Fifo(WIDTH);
    const heard = this.#ready();
    const err = heard ? sqliteError(RESULT.MISUSE, this.#misuse) : null;
    let called = false;
    while (calls.length > 0) {
      const callback = calls.peek(4);
      calls.shift();
      if (heard && invoke(null, callback, this.#owner, [err])) called = true;
    }
    if (heard && !called) this.#unheard(err);
  }
}

module.exports = { CallQueue };
