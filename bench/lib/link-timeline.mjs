// The simulated link's counters over time (bench/lib/link.mjs), sampled
// every millisecond while a measured process runs, and what can be read
// from them afterwards: the counters at a moment another process named,
// the rounds of requests an open made one after another, and the
// stretches during which the link carried nothing. It owns that sampling;
// it never touches the link's traffic or resets its counters.

import { epochNow } from './replica-watch.mjs';

/**
 * Samples `link.counters()` every `intervalMs` until `stop()`, which
 * resolves to the timeline: `[epochMs, requests, responseBytes]` at every
 * sample where either changed (the first sample always). A request counts
 * when it reaches the link; response bytes count as they enter the link's
 * bandwidth bucket.
 */
export function recordLink(link, { intervalMs = 1 } = {}) {
  const points = [];
  const sample = () => {
    const c = link.counters();
    const last = points[points.length - 1];
    if (!last || last[1] !== c.requests || last[2] !== c.responseBytes) points.push([epochNow(), c.requests, c.responseBytes]);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return points;
    },
  };
}

/** The counters `{ requests, bytes }` at `at` (ms since the epoch): the last change sampled by then. */
export function countersAt(points, at) {
  let found = [at, 0, 0];
  for (const p of points) {
    if (p[0] > at) break;
    found = p;
  }
  return { requests: found[1], bytes: found[2] };
}

/**
 * Requests that reached the link between `from` and `to` (ms since the
 * epoch), grouped into rounds: arrivals less than `gapMs` apart belong to
 * one round. Each round is `{ atMs, requests }`, `atMs` from `from`. A
 * round that waits for the one before starts at least one request latency
 * after it.
 */
export function requestRounds(points, from, to, gapMs = 10) {
  const rounds = [];
  let previous = countersAt(points, from).requests;
  let lastArrival = -Infinity;
  for (const [at, requests] of points) {
    if (at <= from || at > to || requests === previous) continue;
    const atMs = at - from;
    if (atMs - lastArrival >= gapMs || rounds.length === 0) rounds.push({ atMs: Math.round(atMs), requests: 0 });
    rounds[rounds.length - 1].requests += requests - previous;
    previous = requests;
    lastArrival = atMs;
  }
  return rounds;
}

/**
 * The stretches between `from` and `to` of at least `minMs` during which
 * no response byte entered the link: `{ count, totalMs, longestMs, at }`,
 * `at` listing each as `[ms from from, ms long, response bytes before it]`.
 */
export function idleStretches(points, from, to, minMs) {
  let count = 0;
  let totalMs = 0;
  let longestMs = 0;
  const at = [];
  let lastByteAt = from;
  let bytes = countersAt(points, from).bytes;
  const close = (end) => {
    const gap = end - lastByteAt;
    if (gap >= minMs) {
      at.push([Math.round(lastByteAt - from), Math.round(gap), bytes]);
      count += 1;
      totalMs += gap;
      longestMs = Math.max(longestMs, gap);
    }
  };
  for (const [at, , b] of points) {
    if (at <= from || at > to || b === bytes) continue;
    close(at);
    lastByteAt = at;
    bytes = b;
  }
  close(to);
  return { count, totalMs: Math.round(totalMs), longestMs: Math.round(longestMs), at };
}

/** Response bytes every `stepMs` from `from` to `to`: `[ms from from, bytes]`. */
export function bytesSeries(points, from, to, stepMs) {
  const out = [];
  for (let t = from; t <= to + stepMs; t += stepMs) out.push([Math.round(t - from), countersAt(points, t).bytes]);
  return out;
}
