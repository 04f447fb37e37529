// W3, a real server: one node:http server on one peer, on a copy of the
// database bench/server.mjs built (the W2 table: 10,000 rows).
//
//   node bench/workloads/w3-server.mjs --peer <name> --file <db> [--offloop <package dir>]
//                                      [--thread-nice N]
//
// It runs in Node, and in Bun and Deno for bench/runtimes.mjs.
//
// A peer is a driver (better-sqlite3, node:sqlite, bun:sqlite, offloop), or a query
// builder on one (kysely+offloop against Kysely's own SQLite dialect on
// better-sqlite3, drizzle+offloop against Drizzle's better-sqlite3 driver),
// which builds the same two queries. knex+sqlite3 and sequelize+sqlite3
// run Knex and Sequelize on the sqlite3 package; knex+offloop and
// sequelize+offloop the same libraries on offloop/sqlite3.
//
// Routes:
//   /read    a query that costs about a millisecond of SQLite CPU (a LIKE
//            over every row's text), answered with its one result row;
//   /write   one insert;
//   /health  no database at all.
// Prints `{"port": N}` once listening on 127.0.0.1 (an ephemeral port).
// `GET /stats` answers with what the server measured since the last
// `GET /stats?reset`: requests per route, event-loop utilisation, process
// and JS-thread CPU. Ends on SIGTERM or when stdin closes.

import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, benchRequire, requireOffloop } from '../lib/paths.mjs';


const { values: opts } = parseArgs({
  options: {
    peer: { type: 'string' },
    file: { type: 'string' },
    offloop: { type: 'string', default: ROOT },
    'thread-nice': { type: 'string', default: '0' },
  },
});

// About 1 ms of SQLite CPU on the 10,000-row table (bench/server.mjs
// measures it with better-sqlite3 and records the figure).
const READ = 'SELECT count(*) AS n, sum(length(text)) AS bytes FROM t WHERE text LIKE ?';
const WRITE = 'INSERT INTO w(nul, integer, real, text, blob) VALUES (?, ?, ?, ?, ?)';
const CACHE_SIZE = -16000;
const ROW = [null, 123456789, 3.14159, 'The quick brown fox jumps over the lazy dog', new Uint8Array(16).fill(7)];

// Each adapter: `{ version, read(pattern), write(), close() }`; read and
// write return the value (sync) or a promise of it.
const adapters = {
  async 'better-sqlite3'() {
    const Database = benchRequire('better-sqlite3');
    const db = new Database(opts.file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`cache_size = ${CACHE_SIZE}`);
    const read = db.prepare(READ);
    const write = db.prepare(WRITE);
    return {
      version: benchRequire('better-sqlite3/package.json').version,
      read: (p) => read.get(p),
      write: () => write.run(...ROW),
      close: () => db.close(),
    };
  },
  async 'node:sqlite'() {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(opts.file);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = ${CACHE_SIZE}`);
    const read = db.prepare(READ);
    const write = db.prepare(WRITE);
    return {
      version: process.versions.deno ?? process.versions.node,
      read: (p) => read.get(p),
      write: () => write.run(...ROW),
      close: () => db.close(),
    };
  },
  async 'bun:sqlite'() {
    const { Database } = await import('bun:sqlite');
    const db = new Database(opts.file);
    for (const p of ['journal_mode = WAL', 'synchronous = NORMAL', `cache_size = ${CACHE_SIZE}`]) db.exec(`PRAGMA ${p}`);
    const read = db.prepare(READ);
    const write = db.prepare(WRITE);
    return {
      version: process.versions.bun,
      read: (p) => read.get(p),
      write: () => write.run(...ROW),
      close: () => db.close(),
    };
  },
  async offloop() {
    const { Database } = requireOffloop(opts.offloop);
    const db = await Database.open(opts.file, { cacheSize: CACHE_SIZE, threadNice: Number(opts['thread-nice']) });
    const read = db.prepare(READ);
    const write = db.prepare(WRITE);
    return {
      version: JSON.parse(fs.readFileSync(path.join(opts.offloop, 'package.json'), 'utf8')).version,
      read: (p) => read.get(p),
      write: () => write.run(...ROW),
      close: () => db.close(),
    };
  },
};

// The query builders' tables: the W2 table `t` and the write table `w`.
function drizzleTables() {
  const { blob, integer, real, sqliteTable, text } = benchRequire('drizzle-orm/sqlite-core');
  return {
    t: sqliteTable('t', { text: text('text') }),
    w: sqliteTable('w', {
      nul: integer('nul'),
      integer: integer('integer'),
      real: real('real'),
      text: text('text'),
      blob: blob('blob', { mode: 'buffer' }),
    }),
  };
}

const WRITE_VALUES = { nul: ROW[0], integer: ROW[1], real: ROW[2], text: ROW[3], blob: Buffer.from(ROW[4]) };

/** A peer serving /read and /write through Kysely with `dialect`. */
function kyselyPeer(dialect, version, close) {
  const { Kysely, sql } = benchRequire('kysely');
  const db = new Kysely({ dialect });
  return {
    version,
    read: (p) =>
      db
        .selectFrom('t')
        .select([sql`count(*)`.as('n'), sql`sum(length(text))`.as('bytes')])
        .where('text', 'like', p)
        .executeTakeFirstOrThrow(),
    write: async () => ({ lastInsertRowid: (await db.insertInto('w').values(WRITE_VALUES).executeTakeFirstOrThrow()).insertId }),
    close: async () => {
      await db.destroy();
      await close?.();
    },
  };
}

/** A peer serving /read and /write through the Drizzle database `db`. */
function drizzlePeer(db, version, close) {
  const { like, sql } = benchRequire('drizzle-orm');
  const { t, w } = drizzleTables();
  return {
    version,
    read: async (p) => db.select({ n: sql`count(*)`, bytes: sql`sum(length(text))` }).from(t).where(like(t.text, p)).get(),
    write: async () => db.insert(w).values(WRITE_VALUES).run(),
    close,
  };
}

function betterSqlite3() {
  const Database = benchRequire('better-sqlite3');
  const db = new Database(opts.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`cache_size = ${CACHE_SIZE}`);
  return db;
}

async function offloopDatabase() {
  const { Database } = requireOffloop(opts.offloop);
  return Database.open(opts.file, { cacheSize: CACHE_SIZE, threadNice: Number(opts['thread-nice']) });
}

/**
 * An offloop adapter from the checkout under test, built on the bench
 * package's copy of its library (the one the better-sqlite3 side uses).
 */
function offloopAdapter(file) {
  return createRequire(path.join(opts.offloop, 'package.json'))(path.join(opts.offloop, 'adapters', file));
}

/** The version of bench package dependency `name` (whose exports may hide its package.json). */
function versionOf(name) {
  for (let dir = path.dirname(benchRequire.resolve(name)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (pkg.name === name) return pkg.version;
  }
  return 'unknown';
}

Object.assign(adapters, {
  async 'kysely+better-sqlite3'() {
    const { SqliteDialect } = benchRequire('kysely');
    return kyselyPeer(new SqliteDialect({ database: betterSqlite3() }), `kysely ${versionOf('kysely')}`);
  },
  async 'kysely+offloop'() {
    const { createKyselyDialect } = offloopAdapter('kysely/dialect.js');
    const { OffloopDialect } = createKyselyDialect(benchRequire('kysely'));
    return kyselyPeer(new OffloopDialect({ database: await offloopDatabase() }), `kysely ${versionOf('kysely')}`);
  },
  async 'drizzle+better-sqlite3'() {
    const client = betterSqlite3();
    const { drizzle } = benchRequire('drizzle-orm/better-sqlite3');
    return drizzlePeer(drizzle(client), `drizzle-orm ${versionOf('drizzle-orm')}`, () => client.close());
  },
  async 'drizzle+offloop'() {
    const { createDrizzle } = offloopAdapter('drizzle/driver.js');
    const { drizzle } = createDrizzle({ orm: benchRequire('drizzle-orm'), sqlite: benchRequire('drizzle-orm/sqlite-core') });
    const database = await offloopDatabase();
    return drizzlePeer(drizzle(database), `drizzle-orm ${versionOf('drizzle-orm')}`, () => database.close());
  },
});

// Knex and Sequelize, on sqlite3 or offloop/sqlite3. sqlite3 gets the
// settings offloop has by default (WAL, synchronous NORMAL) and both the
// cache size the other peers use.
const SQLITE3_PRAGMAS = ['PRAGMA journal_mode = WAL', 'PRAGMA synchronous = NORMAL', `PRAGMA cache_size = ${CACHE_SIZE}`];
const offloopSqlite3 = () => offloopAdapter('sqlite3/index.js');
const offloopOptions = () => ({ cacheSize: CACHE_SIZE, threadNice: Number(opts['thread-nice']) });

function knexPeer(client, connection, pool) {
  const knex = benchRequire('knex')({ client, connection: { filename: opts.file, ...connection }, useNullAsDefault: true, pool });
  return {
    version: `knex ${versionOf('knex')}`,
    read: (p) => knex('t').select(knex.raw('count(*) AS n'), knex.raw('sum(length(text)) AS bytes')).where('text', 'like', p).first(),
    write: async () => ({ lastInsertRowid: (await knex('w').insert(WRITE_VALUES))[0] }),
    close: () => knex.destroy(),
  };
}

async function sequelizePeer(dialectModule, pragmas) {
  const { DataTypes, QueryTypes, Sequelize } = benchRequire('sequelize');
  const sequelize = new Sequelize({ dialect: 'sqlite', storage: opts.file, dialectModule, logging: false });
  for (const pragma of pragmas) await sequelize.query(pragma);
  const W = sequelize.define(
    'w',
    { nul: DataTypes.INTEGER, integer: DataTypes.INTEGER, real: DataTypes.REAL, text: DataTypes.TEXT, blob: DataTypes.BLOB },
    { tableName: 'w', timestamps: false },
  );
  W.removeAttribute('id');
  const READ_BOUND = 'SELECT count(*) AS n, sum(length(text)) AS bytes FROM t WHERE text LIKE $p';
  return {
    version: `sequelize ${versionOf('sequelize')}`,
    read: (p) => sequelize.query(READ_BOUND, { bind: { p }, type: QueryTypes.SELECT, plain: true }),
    write: async () => {
      await W.create(WRITE_VALUES);
      return { lastInsertRowid: 0 };
    },
    close: () => sequelize.close(),
  };
}

Object.assign(adapters, {
  async 'knex+sqlite3'() {
    const afterCreate = (conn, done) => conn.exec(SQLITE3_PRAGMAS.join('; '), done);
    return knexPeer('sqlite3', {}, { afterCreate });
  },
  async 'knex+offloop'() {
    const { createKnexClient } = offloopAdapter('knex/client.js');
    return knexPeer(createKnexClient(benchRequire('knex/lib/dialects/sqlite3')), { offloop: offloopOptions() });
  },
  async 'sequelize+sqlite3'() {
    return sequelizePeer(benchRequire('sqlite3'), SQLITE3_PRAGMAS);
  },
  async 'sequelize+offloop'() {
    return sequelizePeer(offloopSqlite3().withOptions(offloopOptions()), []);
  },
});

const open = adapters[opts.peer];
if (!open) throw new Error(`unknown peer ${opts.peer}`);
const db = await open();

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const jsThreadCpuMs = () => {
  try {
    return Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
};

let counts;
let since;
function reset() {
  counts = { read: 0, write: 0, health: 0, errors: 0 };
  since = { t: performance.now(), elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), js: jsThreadCpuMs() };
}
reset();

function stats() {
  const wallMs = performance.now() - since.t;
  const cpu = process.cpuUsage(since.cpu);
  const js = jsThreadCpuMs();
  return {
    node: process.version,
    runtime: process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : 'node',
    peer: opts.peer,
    version: db.version,
    wallMs,
    counts,
    eventLoopUtilization: performance.eventLoopUtilization(since.elu).utilization,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    jsThreadCpuMs: js === null || since.js === null ? null : js - since.js,
  };
}

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

let seq = 0;
async function handle(req, res) {
  const url = req.url;
  try {
    if (url === '/health') {
      counts.health += 1;
      reply(res, 200, { ok: true });
    } else if (url === '/read') {
      counts.read += 1;
      const row = await db.read(`%dog ${seq++ % 10}%`);
      reply(res, 200, { n: row.n, bytes: row.bytes });
    } else if (url === '/write') {
      counts.write += 1;
      const r = await db.write();
      reply(res, 200, { id: Number(r.lastInsertRowid) });
    } else if (url.startsWith('/stats')) {
      const body = stats();
      if (url.endsWith('?reset')) reset();
      reply(res, 200, body);
    } else {
      reply(res, 404, { error: 'no such route' });
    }
  } catch (err) {
    counts.errors += 1;
    reply(res, 500, { error: err.message });
  }
}

const server = http.createServer((req, res) => {
  handle(req, res);
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port, pid: process.pid }));
});

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  server.closeAllConnections?.();
  server.close();
  await db.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.stdin.on('end', shutdown);
process.stdin.resume();
