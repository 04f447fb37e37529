// The simulated network link of the benchmarks (bench/lib/link.mjs): that it
// forwards requests and bodies exactly, counts them exactly, streams rather
// than buffers, and serves many requests at once. Its target is a small
// HTTP server this file starts on loopback (and moto, when installed, for a
// real S3 server's ranged reads). Nothing here times anything: the link's
// latency and bandwidth are the benchmarks' business.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { rounds, startLink } from '../lib/link.mjs';
import { freePort, skipWithout, startS3 } from '../../__test__/replication/helpers.mjs';

// The link in these tests is fast, so that they spend no time waiting on
// it; the shaping code runs all the same.
const FAST = { latencyMs: 1, bytesPerSecond: 2e9 };
const OBJECT_BYTES = 3 * 1024 * 1024 + 123;
const object = crypto.randomBytes(OBJECT_BYTES);

/** Bytes `start..end` (inclusive) of the object, as a Range header asks. */
function parseRange(header, size) {
  const m = /^bytes=(\d+)-(\d*)$/.exec(header ?? '');
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return { start, end };
}

/**
 * The target: GET /object[?range] serves `object` (honouring Range), PUT
 * /any stores nothing but answers with the body's length and sha256, GET
 * /echo answers with the request line and raw headers it received, and
 * GET /stream/<id> sends half a body, then waits for GET /release/<id>;
 * PUT /upload-stream/<id> tells `uploads` ('bytes', path, total) as a body
 * arrives.
 */
async function startTarget() {
  const waiting = new Map();
  const uploads = new EventEmitter();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'PUT' && path.startsWith('/upload-stream/')) {
      let length = 0;
      req.on('data', (d) => {
        length += d.length;
        uploads.emit('bytes', path, length);
      });
      req.on('end', () => res.end(String(length)));
      return;
    }
    if (req.method === 'PUT') {
      const hash = crypto.createHash('sha256');
      let length = 0;
      req.on('data', (d) => {
        hash.update(d);
        length += d.length;
      });
      req.on('end', () => {
        const body = JSON.stringify({ length, sha256: hash.digest('hex') });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    if (path === '/echo') {
      const body = JSON.stringify({ method: req.method, url: req.url, rawHeaders: req.rawHeaders });
      res.writeHead(200, { 'content-type': 'application/json', 'x-target': 'yes' });
      res.end(body);
      return;
    }
    if (path === '/object') {
      const range = parseRange(req.headers.range, OBJECT_BYTES);
      if (range) {
        res.writeHead(206, {
          'content-range': `bytes ${range.start}-${range.end}/${OBJECT_BYTES}`,
          'content-length': range.end - range.start + 1,
        });
        res.end(object.subarray(range.start, range.end + 1));
      } else {
        res.writeHead(200, { 'content-length': OBJECT_BYTES });
        res.end(object);
      }
      return;
    }
    if (path.startsWith('/stream/')) {
      const id = path.slice('/stream/'.length);
      res.writeHead(200, { 'content-length': 2 * 65536 });
      res.write(Buffer.alloc(65536, 1));
      waiting.set(id, () => res.end(Buffer.alloc(65536, 2)));
      return;
    }
    if (path.startsWith('/release/')) {
      waiting.get(path.slice('/release/'.length))?.();
      res.end('released');
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    uploads,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

let target;
let link;

before(async () => {
  target = await startTarget();
  link = await startLink({ target: target.url, ...FAST });
});

after(async () => {
  await link?.close();
  await target?.close();
});

async function bytesOf(res) {
  return Buffer.from(await res.arrayBuffer());
}

test('a ranged GET through the link returns the bytes and headers of the same GET made directly', async () => {
  const headers = { range: 'bytes=1000-1234566' };
  const direct = await fetch(`${target.url}/object`, { headers });
  const linked = await fetch(`${link.url}/object`, { headers });
  assert.equal(linked.status, 206);
  assert.equal(linked.status, direct.status);
  assert.equal(linked.headers.get('content-range'), direct.headers.get('content-range'));
  assert.equal(linked.headers.get('content-length'), direct.headers.get('content-length'));
  const [a, b] = [await bytesOf(direct), await bytesOf(linked)];
  assert.equal(b.length, 1234566 - 1000 + 1);
  assert.ok(a.equals(b));
  assert.ok(b.equals(object.subarray(1000, 1234567)));
});

test('the link forwards the method, path, query, Host and authorization unchanged', async () => {
  // fetch() always sends its own Host; http.request sends the one given.
  const headers = {
    host: 'bucket.example:9000',
    authorization: 'AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/s3/aws4_request, Signature=abc',
    'x-amz-date': '20260101T000000Z',
    'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
  };
  const { status, body } = await new Promise((resolve, reject) => {
    const req = http.request(`${link.url}/echo?list-type=2&prefix=a%2Fb`, { headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 200);
  const header = (name) => {
    const i = body.rawHeaders.findIndex((h, j) => j % 2 === 0 && h.toLowerCase() === name);
    return i < 0 ? undefined : body.rawHeaders[i + 1];
  };
  assert.equal(body.method, 'GET');
  assert.equal(body.url, '/echo?list-type=2&prefix=a%2Fb');
  for (const [name, value] of Object.entries(headers)) assert.equal(header(name), value, name);
});

test('the link counts requests by method, listings, and body bytes each way exactly, until reset()', async () => {
  link.reset();
  const upload = crypto.randomBytes(200_000);
  const put = await fetch(`${link.url}/put-me`, { method: 'PUT', body: upload });
  assert.deepEqual(await put.json(), { length: upload.length, sha256: crypto.createHash('sha256').update(upload).digest('hex') });
  const putAnswerBytes = Number(put.headers.get('content-length'));
  const whole = await bytesOf(await fetch(`${link.url}/object`));
  const part = await bytesOf(await fetch(`${link.url}/object`, { headers: { range: 'bytes=10-19' } }));
  const head = await fetch(`${link.url}/object`, { method: 'HEAD' });
  await head.arrayBuffer();
  const listing = await bytesOf(await fetch(`${link.url}/echo?list-type=2&prefix=p%2F`));
  assert.equal(whole.length, OBJECT_BYTES);
  assert.equal(part.length, 10);
  const { firstRequestAt, lastByteAt, ...counts } = link.counters();
  assert.deepEqual(counts, {
    requests: 5,
    byMethod: { PUT: 1, GET: 3, HEAD: 1 },
    lists: 1,
    requestBytes: upload.length,
    responseBytes: putAnswerBytes + OBJECT_BYTES + 10 + listing.length,
    errors: 0,
  });
  assert.ok(firstRequestAt <= lastByteAt);
  link.reset();
  assert.deepEqual(link.counters(), {
    requests: 0,
    byMethod: {},
    lists: 0,
    requestBytes: 0,
    responseBytes: 0,
    errors: 0,
    firstRequestAt: null,
    lastByteAt: null,
  });
});

test('200 requests at once through the link each get their own bytes, and every one is counted', async () => {
  link.reset();
  const gets = Array.from({ length: 150 }, (_, i) => {
    const start = (i * 20_011) % (OBJECT_BYTES - 70_000);
    const end = start + 1000 + ((i * 331) % 65_000);
    return { start, end };
  });
  const puts = Array.from({ length: 50 }, (_, i) => crypto.randomBytes(1000 + i * 977));
  const results = await Promise.all([
    ...gets.map(async ({ start, end }) => {
      const res = await fetch(`${link.url}/object`, { headers: { range: `bytes=${start}-${end}` } });
      assert.equal(res.status, 206);
      return { kind: 'get', start, end, body: await bytesOf(res) };
    }),
    ...puts.map(async (body) => {
      const res = await fetch(`${link.url}/put`, { method: 'PUT', body });
      return { kind: 'put', body, answer: await res.json(), answerBytes: Number(res.headers.get('content-length')) };
    }),
  ]);
  let responseBytes = 0;
  for (const r of results) {
    if (r.kind === 'get') {
      assert.ok(r.body.equals(object.subarray(r.start, r.end + 1)), `bytes ${r.start}-${r.end} differ`);
      responseBytes += r.body.length;
    } else {
      assert.deepEqual(r.answer, { length: r.body.length, sha256: crypto.createHash('sha256').update(r.body).digest('hex') });
      responseBytes += r.answerBytes;
    }
  }
  const c = link.counters();
  assert.equal(c.requests, gets.length + puts.length);
  assert.deepEqual(c.byMethod, { GET: gets.length, PUT: puts.length });
  assert.equal(c.requestBytes, puts.reduce((n, b) => n + b.length, 0));
  assert.equal(c.responseBytes, responseBytes);
  assert.equal(c.errors, 0);
});

test('the link streams a response: its start reaches the client before the server has sent its end', { timeout: 30_000 }, async () => {
  // The target sends the second half only once the client, having read the
  // first half through the link, asks it to: a link that waited for the
  // whole body would never deliver the first half, and this test would time out.
  const res = await fetch(`${link.url}/stream/a`);
  const reader = res.body.getReader();
  let got = 0;
  while (got < 65536) {
    const { value, done } = await reader.read();
    assert.equal(done, false);
    got += value.length;
  }
  await (await fetch(`${link.url}/release/a`)).text();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value.length;
  }
  assert.equal(got, 2 * 65536);
});

test('the link streams a request body: its start reaches the server before the client has sent its end', { timeout: 30_000 }, async () => {
  // The client sends the second half only once the target has the first.
  const path = '/upload-stream/b';
  const firstHalf = new Promise((resolve) => {
    const seen = (p, total) => {
      if (p === path && total >= 65536) {
        target.uploads.off('bytes', seen);
        resolve();
      }
    };
    target.uploads.on('bytes', seen);
  });
  const req = http.request(`${link.url}${path}`, { method: 'PUT', headers: { 'content-length': 2 * 65536 } });
  const answered = once(req, 'response');
  req.write(Buffer.alloc(65536, 3));
  await firstHalf;
  req.end(Buffer.alloc(65536, 4));
  const [res] = await answered;
  let text = '';
  for await (const d of res) text += d;
  assert.equal(text, String(2 * 65536));
});

test('a request the server cannot take answers 502 from the link and counts as an error', async () => {
  const nowhere = await startLink({ target: `http://127.0.0.1:${await freePort()}`, ...FAST });
  try {
    const res = await fetch(`${nowhere.url}/object`);
    assert.equal(res.status, 502);
    await res.arrayBuffer();
    assert.equal(nowhere.counters().errors, 1);
  } finally {
    await nowhere.close();
  }
});

test('a ranged GET of an S3 object through the link equals the same GET made to the S3 server', { skip: skipWithout('moto_server') }, async () => {
  const s3 = await startS3(['link']);
  const s3Link = await startLink({ target: s3.endpoint, ...FAST });
  try {
    // Readable without signing: this test sends no credentials.
    const put = await fetch(`${s3.endpoint}/link/object.bin`, { method: 'PUT', body: object, headers: { 'x-amz-acl': 'public-read' } });
    await put.arrayBuffer();
    assert.equal(put.status, 200);
    const headers = { range: 'bytes=65536-2097151' };
    const direct = await fetch(`${s3.endpoint}/link/object.bin`, { headers });
    const linked = await fetch(`${s3Link.url}/link/object.bin`, { headers });
    assert.equal(linked.status, 206);
    assert.equal(linked.headers.get('content-range'), direct.headers.get('content-range'));
    const [a, b] = [await bytesOf(direct), await bytesOf(linked)];
    assert.ok(a.equals(b));
    assert.ok(b.equals(object.subarray(65536, 2097152)));
    assert.equal(s3Link.counters().responseBytes, b.length);
  } finally {
    await s3Link.close();
    await s3.stop();
  }
});

test('hold() keeps back the requests it names until release(); the others pass', async () => {
  const server = http.createServer((req, res) => res.end(req.url));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const link = await startLink({ target: `http://127.0.0.1:${server.address().port}`, latencyMs: 0 });
  try {
    link.hold((req) => req.url.startsWith('/held'));
    let heldDone = false;
    const held = fetch(`${link.url}/held/1`).then(async (r) => {
      heldDone = true;
      return r.text();
    });
    assert.equal(await (await fetch(`${link.url}/free`)).text(), '/free');
    assert.equal(heldDone, false, 'the held request is not answered before release()');
    link.release();
    assert.equal(await held, '/held/1');
    assert.equal(await (await fetch(`${link.url}/held/2`)).text(), '/held/2', 'nothing is held after release()');
  } finally {
    await link.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('requests() logs each request in arrival order, until reset()', async () => {
  const server = http.createServer((req, res) => res.end('x'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const link = await startLink({ target: `http://127.0.0.1:${server.address().port}`, ...FAST });
  try {
    await fetch(`${link.url}/a?q=1`, { headers: { range: 'bytes=0-9' } }).then((r) => r.text());
    await fetch(`${link.url}/b`, { method: 'PUT', body: 'y' }).then((r) => r.text());
    const log = link.requests();
    assert.deepEqual(
      log.map(({ method, url, range }) => ({ method, url, range })),
      [
        { method: 'GET', url: '/a?q=1', range: 'bytes=0-9' },
        { method: 'PUT', url: '/b', range: null },
      ],
    );
    assert.ok(log.every((r) => r.done !== null && r.done >= r.at));
    assert.ok(log[1].at >= log[0].done, 'the second was sent once the first was answered');
    assert.deepEqual(rounds(log).map((round) => round.length), [1, 1]);
    link.reset();
    assert.deepEqual(link.requests(), []);
  } finally {
    await link.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('rounds() puts a request one round after the latest answer it came after, and requests sent together in one', () => {
  const r = (name, at, done) => ({ name, at, done });
  // a and b together; c after a's answer; d after b's (round 1) and c's
  // (round 2) answers; e before any answer ended, though late.
  const log = [r('a', 0, 10), r('b', 1, 30), r('e', 5, 50), r('c', 12, 20), r('d', 31, 40)];
  assert.deepEqual(
    rounds(log).map((round) => round.map((x) => x.name)),
    [['a', 'b', 'e'], ['c'], ['d']],
  );
  assert.deepEqual(rounds([]), []);
  // A request still running has ended for nobody.
  assert.deepEqual(rounds([r('a', 0, null), r('b', 100, 110)]).map((round) => round.length), [2]);
});
