// Deno's own Web Workers (not node:worker_threads) using offloop, for
// runtimes.test.mjs: two workers and the main thread each write and read a
// database of their own at once, and it prints one JSON line of what each
// got. It only runs the calls; it judges nothing. Its arguments: the
// offloop entry point and an empty folder.

import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const ROWS = 50;

/** What each thread does: rowids of concurrent inserts, then their sum read back. */
export async function writeAndRead(entry, file) {
  const { Database } = require(entry);
  const db = await Database.open(file, { readers: 2 });
  await db.exec('CREATE TABLE w(id INTEGER PRIMARY KEY, n INTEGER)');
  const ins = db.prepare('INSERT INTO w(n) VALUES (?)');
  const runs = await Promise.all(Array.from({ length: ROWS }, (_, i) => ins.run(i)));
  const { c, s } = await db.prepare('SELECT count(*) AS c, sum(n) AS s FROM w').get();
  await db.close();
  return { ids: runs.map((r) => r.lastInsertRowid), count: c, sum: s };
}

if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  self.onmessage = async ({ data }) => {
    try {
      self.postMessage({ result: await writeAndRead(data.entry, data.file) });
    } catch (err) {
      self.postMessage({ error: String(err && err.stack) });
    }
    self.close();
  };
} else {
  const [entry, dir] = Deno.args;
  const inWorker = (name) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(import.meta.url, { type: 'module' });
      worker.onmessage = ({ data }) => (data.error ? reject(new Error(data.error)) : resolve(data.result));
      worker.onerror = (event) => reject(new Error(event.message));
      worker.postMessage({ entry, file: path.join(dir, `${name}.db`) });
    });
  const results = await Promise.all([inWorker('web-1'), inWorker('web-2'), writeAndRead(entry, path.join(dir, 'main.db'))]);
  console.log(JSON.stringify(results));
}
