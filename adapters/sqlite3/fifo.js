'use strict';

// Fifo: the first-in first-out store behind every waiting line of
// offloop/sqlite3 (a statement's or a backup's calls, a database's
// scheduled calls). A ring buffer that doubles when full: push and shift
// are O(1) whatever the length, where Array.prototype.shift() copies the
// whole array once it is large, and a million queued calls become
// quadratic. Each entry is a fixed number of slots (`width`), so a queued
// call needs no object of its own. It knows nothing of what it holds.

const INITIAL_CAPACITY = 16;

class Fifo {
  #slots;
  #width;
  #head = 0;
  #length = 0;

  /** `width`: the values one entry holds, pushed and shifted together. */
  constructor(width = 1) {
    this.#width = width;
    this.#slots = new Array(INITIAL_CAPACITY * width);
  }

  /** The number of entries waiting. */
  get length() {
    return this.#length;
  }

  /** Adds an entry of `width` values (up to five) at the back. */
  push(a, b, c, d, e) {
    const w = this.#width;
    if (this.#length * w === this.#slots.length) this.#grow();
    const at = ((this.#head + this.#length) * w) % this.#slots.length;
    const slots = this.#slots;
    slots[at] = a;
    if (w > 1) slots[at + 1] = b;
    if (w > 2) slots[at + 2] = c;
    if (w > 3) slots[at + 3] = d;
    if (w > 4) slots[at + 4] = e;
    this.#length++;
  }

  /** Value `i` (0 ≤ i < width) of the entry at the front, or undefined. */
  peek(i = 0) {
    return this.#length === 0 ? undefined : this.#slots[this.#head * this.#width + i];
  }

  /**
   * Removes the entry at the front and returns its first value; the others
   * are read with peek() before. Their slots are cleared, so nothing
   * removed stays reachable.
   */
  shift() {
    if (this.#length === 0) return undefined;
    const w = this.#width;
    const at = this.#head * w;
    const slots = this.#slots;
    const first = slots[at];
    for (let i = 0; i < w; i++) slots[at + i] = undefined;
    this.#head = (this.#head + 1) % (slots.length / w);
    this.#length--;
    return first;
  }

  #grow() {
    const w = this.#width;
    const old = this.#slots;
    const slots = new Array(old.length * 2);
    const start = this.#head * w;
    const used = this.#length * w;
    for (let i = 0; i < used; i++) slots[i] = old[(start + i) % old.length];
    this.#slots = slots;
    this.#head = 0;
  }
}

module.exports = { Fifo };
