// A simulated network link: an HTTP reverse proxy on 127.0.0.1 in front of
// an S3-protocol server (moto), so that a restore or a replica can be timed
// as if the server were across a real network. Every request waits a fixed
// latency before its response starts, and every body byte, both ways, goes
// through one token bucket shared by all transfers, as a link's bandwidth
// is shared. It counts requests and body bytes, and logs each request's
// line, range and times, from which `rounds()` tells which requests had to
// wait for an answer to another.
//
// It owns the proxy, its bucket and its counters. It never changes what it
// forwards (method, path, headers — Host and SigV4 signatures included —
// and bodies go through as they came, only the hop-by-hop connection
// headers are the proxy's own), never holds a whole body in memory (bodies
// stream, chunk by chunk, so a 1 GiB object passes through), and never
// listens anywhere but on loopback.

import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Transform, pipeline } from 'node:stream';

/** The round trip a request pays before its response starts, in ms. */
export const DEFAULT_LATENCY_MS = 20;
/** The link's bandwidth, shared by every transfer: 100 MB/s. */
export const DEFAULT_BYTES_PER_SECOND = 100e6;
/**
 * How much idle time the bucket may bank, as bytes sent at once after a
 * pause. A timer fires up to a few ms late; without some credit every late
 * timer would be bandwidth lost for good, and the link would run slower
 * than its rate. 4 ms of the rate keeps that loss small while no burst is
 * big enough to show in any transfer of more than a few hundred KiB.
 */
const BURST_MS = 4;

// Headers about one hop's connection, not the request: the proxy keeps
// its own connections to the client and to the server.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

/**
 * The link's bandwidth: a token bucket in virtual time. `readyAt` is when
 * every byte taken so far has passed; a transfer that takes `n` bytes may
 * release them once they have. Transfers take in turn, chunk by chunk (each
 * has one chunk waiting at most), so concurrent ones share the rate.
 */
class SharedBucket {
  constructor(bytesPerSecond) {
    this.bytesPerMs = bytesPerSecond / 1000;
    this.readyAt = 0;
  }

  /** Takes `n` bytes; returns how many ms until they have passed. */
  take(n) {
    const now = performance.now();
    const start = Math.max(this.readyAt, now - BURST_MS);
    this.readyAt = start + n / this.bytesPerMs;
    return this.readyAt - now;
  }
}

/** A stream that passes each chunk on once the bucket says it has passed. */
function shaped(bucket, count) {
  return new Transform({
    transform(chunk, _encoding, done) {
      count(chunk.length);
      const wait = bucket.take(chunk.length);
      if (wait < 1) done(null, chunk);
      else setTimeout(() => done(null, chunk), wait);
    },
  });
}

/** `rawHeaders` without the hop-by-hop ones (and those `Connection` names). */
function endToEnd(rawHeaders) {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'connection') {
      for (const token of rawHeaders[i + 1].split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!named.has(rawHeaders[i].toLowerCase())) kept.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return kept;
}

function emptyCounters() {
  return { requests: 0, byMethod: {}, lists: 0, requestBytes: 0, responseBytes: 0, errors: 0, firstRequestAt: null, lastByteAt: null };
}

/**
 * `requests` (as `link.requests()` gives them) in rounds: a request is in
 * round 1 when no response had ended before it came, otherwise in the round
 * after the latest round of the responses that had. A client that waits for
 * one answer before it asks again puts the second request a round later;
 * requests it sends together share a round, however many there are, as
 * long as none of them comes after an answer to another. This is causality,
 * not timing: with a link latency much longer than the client's own work
 * between requests, the count is the number of round trips one after
 * another. Returns one array of requests a round.
 */
export function rounds(requests) {
  const round = [];
  const out = [];
  requests.forEach((r, i) => {
    let before = 0;
    for (let j = 0; j < i; j += 1) {
      if (requests[j].done !== null && requests[j].done <= r.at) before = Math.max(before, round[j]);
    }
    round[i] = before + 1;
    (out[before] ??= []).push(r);
  });
  return out;
}

/** Now, in ms since the epoch, with sub-ms resolution. */
const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Starts the link on a free loopback port in front of `target`
 * (`http://127.0.0.1:PORT`). Resolves to `{ url, port, counters(), reset(),
 * hold(which), release(), close() }`: point a client at `url` instead of
 * the target.
 */
export async function startLink({ target, latencyMs = DEFAULT_LATENCY_MS, bytesPerSecond = DEFAULT_BYTES_PER_SECOND }) {
  const upstream = new URL(target);
  if (upstream.protocol !== 'http:') throw new Error(`the link forwards to http:// only, not ${target}`);
  if (!(latencyMs >= 0) || !(bytesPerSecond > 0)) throw new Error('latencyMs must be ≥ 0 and bytesPerSecond > 0');
  const bucket = new SharedBucket(bytesPerSecond);
  const agent = new http.Agent({ keepAlive: true });
  let counters = emptyCounters();
  // One entry a request since the start or the last reset(), in arrival order.
  let log = [];
  // hold(): which requests wait, and those waiting for release().
  let holding = null;
  let held = [];

  const server = http.createServer((req, res) => {
    if (holding?.(req)) held.push(() => serve(req, res));
    else serve(req, res);
  });

  function serve(req, res) {
    const c = counters;
    const entry = { method: req.method, url: req.url, range: req.headers.range ?? null, at: performance.now(), done: null };
    log.push(entry);
    c.firstRequestAt ??= epochNow();
    c.requests += 1;
    c.byMethod[req.method] = (c.byMethod[req.method] ?? 0) + 1;
    // An S3 listing is a GET of the bucket with `list-type` (ListObjectsV2).
    if (req.method === 'GET' && /[?&]list-type=/.test(req.url)) c.lists += 1;
    const fail = (err) => {
      c.errors += 1;
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`link: ${err.message}\n`);
      } else {
        res.destroy(err);
      }
    };
    const forward = http.request({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.rawHeaders),
      agent,
    });
    forward.on('response', (answer) => {
      setTimeout(() => {
        // The client may have gone during the wait: nothing to answer.
        if (res.destroyed) {
          answer.destroy();
          return;
        }
        res.writeHead(answer.statusCode, answer.statusMessage, endToEnd(answer.rawHeaders));
        pipeline(answer, shaped(bucket, (n) => (c.responseBytes += n)), res, (err) => {
          if (err && !res.destroyed) res.destroy(err);
          c.lastByteAt = epochNow();
        });
      }, latencyMs);
    });
    forward.on('error', fail);
    pipeline(req, shaped(bucket, (n) => (c.requestBytes += n)), forward, (err) => {
      if (err) forward.destroy(err);
    });
    res.on('close', () => {
      entry.done = performance.now();
      if (!res.writableFinished) forward.destroy();
    });
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    latencyMs,
    bytesPerSecond,
    /**
     * Since the start or the last reset(): requests (in all, by method,
     * and the GETs that were listings), body bytes each way, requests that failed, and when the
     * first request came and the last response ended (ms since the epoch).
     */
    counters: () => ({ ...counters, byMethod: { ...counters.byMethod } }),
    reset: () => {
      counters = emptyCounters();
      log = [];
    },
    /**
     * The requests since the start or the last reset(), in arrival order:
     * `{ method, url, range, at, done }` (ms on this process's performance
     * clock; `done` is when the response ended, null while it runs).
     */
    requests: () => log.map((e) => ({ ...e })),
    /**
     * Holds back every request for which `which(req)` is true (a test's
     * way to keep one kind of traffic, a large ranged read, from going
     * anywhere) until release(); the others pass as usual.
     */
    hold: (which) => {
      holding = which;
    },
    /** Stops holding, and sends on every request held so far. */
    release: () => {
      holding = null;
      const waiting = held;
      held = [];
      for (const go of waiting) go();
    },
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
