// Small statistics helpers shared by the benchmarks.

/** Sorts a copy of the samples ascending (as a Float64Array). */
export function sorted(samples) {
  return Float64Array.from(samples).sort();
}

/**
 * The q-quantile (0 < q ≤ 1) of ascending samples, nearest-rank: the
 * smallest sample with at least q of all samples at or below it.
 */
export function percentile(ascending, q) {
  if (ascending.length === 0) return NaN;
  const rank = Math.ceil(q * ascending.length);
  return ascending[Math.min(ascending.length, Math.max(rank, 1)) - 1];
}

/** How many samples exceed `limit`. */
export function countOver(samples, limit) {
  let n = 0;
  for (const s of samples) if (s > limit) n += 1;
  return n;
}

/**
 * Reduces a time series of [t, value] points (t in ms) to the largest value
 * in each bucket of `bucketMs`, as [bucket start, max] points: spikes stay
 * visible while the series gets small enough to store and plot.
 */
export function maxPerBucket(points, bucketMs) {
  const buckets = new Map();
  for (const [t, v] of points) {
    const b = Math.floor(t / bucketMs) * bucketMs;
    const prev = buckets.get(b);
    if (prev === undefined || v > prev) buckets.set(b, v);
  }
  return [...buckets.entries()].sort((a, b) => a[0] - b[0]);
}

/** Rounds to `digits` decimals (for tables and JSON that people read). */
export function round(x, digits = 2) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
