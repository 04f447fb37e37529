// An HTTP proxy in front of an S3 server on loopback (moto), for counting
// what offloop asks of the store: the idle-replica benchmark and the
// follow tests.

import http from 'node:http';

/**
 * What a request to the replica is: 'LIST', or its method and 'lease' (a
 * database's lock.json), 'process-lease' (a process lease, under
 * `.offloop/leases/` beside the replicas) or 'ltx'.
 */
export function requestKind(req, url) {
  if (url.searchParams.has('list-type')) return 'LIST';
  if (url.pathname.endsWith('/lock.json')) return `${req.method} lease`;
  if (url.pathname.includes('/.offloop/leases/')) return `${req.method} process-lease`;
  return `${req.method} ltx`;
}

/**
 * Listens on 127.0.0.1 and forwards every request to `port` as it is,
 * after `onRequest(req, url)` has seen it. Resolves to `{ endpoint, stop }`.
 */
export async function forwardingProxy(port, onRequest) {
  const server = http.createServer((req, res) => {
    onRequest(req, new URL(req.url, 'http://x'));
    const upstream = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * `forwardingProxy` counting requests by `requestKind`, and showing each
 * to `onRequest(req, url)` where given. Resolves to `{ endpoint, take,
 * stop }`; `take()` returns the counts since the last take (`{ LIST: 10,
 * 'GET lease': 1, ... }`) and starts again from none.
 */
export async function countingProxy(port, onRequest = () => {}) {
  let counts = {};
  const proxy = await forwardingProxy(port, (req, url) => {
    const kind = requestKind(req, url);
    counts[kind] = (counts[kind] ?? 0) + 1;
    onRequest(req, url);
  });
  const take = () => {
    const taken = counts;
    counts = {};
    return taken;
  };
  return { ...proxy, take };
}
