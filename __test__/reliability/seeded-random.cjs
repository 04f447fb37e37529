'use strict';

// A seeded random number generator (mulberry32) for the tests that draw
// random operations: the same seed gives the same run, so a failure names
// its seed and can be replayed.

/** A function returning numbers in [0, 1), from `seed`. */
function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { seededRandom };
