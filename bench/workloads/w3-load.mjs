// W3's load generator: one autocannon run in its own process, so that
// generating load does not share an event loop with what it measures.
//
//   node bench/workloads/w3-load.mjs --url http://127.0.0.1:PORT --paths /read,/write
//                                    [--connections 32] [--duration 10] [--rate 0]
//
// Each connection sends the paths in turn, one request at a time. `rate`
// (requests per second over all connections, 0 for as fast as the server
// answers) turns it into a probe that measures latency without adding
// much load. Prints one JSON line: autocannon's summary, with latency
// percentiles computed from every response's own latency.

import { parseArgs } from 'node:util';
import { benchRequire } from '../lib/paths.mjs';

const autocannon = benchRequire('autocannon');

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string' },
    paths: { type: 'string' },
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '10' },
    rate: { type: 'string', default: '0' },
  },
});

const rate = Number(opts.rate);
// autocannon's own histogram keeps whole milliseconds; its 'response'
// event has each latency in fractions of one, kept here.
const latencies = [];
const result = await new Promise((resolve, reject) => {
  const instance = autocannon(
    {
      url: opts.url,
      connections: Number(opts.connections),
      duration: Number(opts.duration),
      requests: opts.paths.split(',').map((p) => ({ method: 'GET', path: p })),
      // A fixed-rate probe measures each request it sent; autocannon's
      // coordinated-omission correction assumes a 1 ms interval whatever
      // the rate, which would invent samples.
      ...(rate > 0 ? { overallRate: rate, ignoreCoordinatedOmission: true } : {}),
      timeout: 10,
    },
    (err, res) => (err ? reject(err) : resolve(res)),
  );
  instance.on('response', (client, statusCode, bytes, responseTime) => latencies.push(responseTime));
});

const ascending = Float64Array.from(latencies).sort();
const q = (p) => (ascending.length === 0 ? null : ascending[Math.min(ascending.length - 1, Math.max(0, Math.ceil(p * ascending.length) - 1))]);
const r3 = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
console.log(
  JSON.stringify({
    version: benchRequire('autocannon/package.json').version,
    paths: opts.paths.split(','),
    connections: Number(opts.connections),
    durationS: result.duration,
    rate,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      samples: ascending.length,
      mean: r3(ascending.reduce((a, b) => a + b, 0) / Math.max(1, ascending.length)),
      p50: r3(q(0.5)),
      p90: r3(q(0.9)),
      p99: r3(q(0.99)),
      p999: r3(q(0.999)),
      max: r3(ascending.length ? ascending[ascending.length - 1] : null),
    },
  }),
);
