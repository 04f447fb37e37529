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

class CallQueue {
  #owner;
  #ready;
  #ended;
  #misuse;
  #unheard;
  #calls = [];
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

  /** Queues a call: `start()` runs it, `callback` hears a refusal. */
  schedule(callback, start) {
    this.#calls.push({ callback, start });
    if (this.#ended()) this.clean();
    else this.process();
  }

  /** Starts what waits, one call at a time (after the end, refuses it). */
  process() {
    if (this.#ended()) {
      if (this.#calls.length > 0) this.clean();
      return;
    }
    while (this.#ready() && !this.locked && this.#calls.length > 0) this.#calls.shift().start();
  }

  // Calls made after the end: each callback gets SQLITE_MISUSE, or the owner
  // reports it once when none had one. Before the owner was ever ready (a
  // failed prepare) they are dropped: that failure was the report.
  clean() {
    const calls = this.#calls.splice(0);
    if (!this.#ready() || calls.length === 0) return;
    const err = sqliteError(RESULT.MISUSE, this.#misuse);
    let called = false;
    for (const { callback } of calls) if (invoke(null, callback, this.#owner, [err])) called = true;
    if (!called) this.#unheard(err);
  }
}

module.exports = { CallQueue };
