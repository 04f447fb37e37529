// The whole public API, as a TypeScript user writes it: types.test.mjs
// compiles this file with `tsc --noEmit`. Each @ts-expect-error line is a
// wrong use the types must refuse (tsc fails if one is accepted).

import { Database, ReadSnapshot, Statement, Transaction } from 'offloop';
import type { ColumnInfo, DatabaseSettings, DatabaseStats, FollowStats, QueryResult, RestoreStats, RunResult } from 'offloop';
import { OffloopDialect } from 'offloop/kysely';
import { drizzle } from 'offloop/drizzle';
import { migrate } from 'offloop/drizzle/migrator';
import { PrismaOffloop } from 'offloop/prisma';
import { instrument } from 'offloop/otel';
import { register } from 'offloop/metrics';
import type { OperationTraceContext, QueryTraceContext, TracedOperation } from 'offloop';

import { Kysely, type Generated } from 'kysely';
import { eq, relations } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import diagnosticsChannel from 'node:diagnostics_channel';

// Core.
const db: Database = await Database.open('app.db', {
  readers: 2,
  timeout: 1000,
  readBigInts: false,
  transactionIdleTimeout: 10_000,
  checkpoint: { thresholdFrames: 500 },
  pragmas: { cache_size: -8000 },
});
const later = new Database(new URL('file:///srv/app/app.db'));
await later.ready;
const version: string = Database.sqliteVersion;
const options: string[] = Database.compileOptions();
const open: boolean = db.isOpen && !db.isTransaction;
const where: string | null = db.location('main');
const image: Uint8Array = await db.serialize('main');
const replaced: void = await db.deserialize(image, { dbName: 'main' });
// @ts-expect-error: an image is a Uint8Array
await db.deserialize('image');
const closedFirst = new Database(':memory:', { open: false, allowExtension: true, limits: { sqlLength: 1000 } });
const reopened: Database = await closedFirst.open();
const sqlLength: number = reopened.limits.sqlLength;
reopened.limits.column = Infinity;
reopened.enableDefensive(true);
reopened.enableLoadExtension(false);
const loaded: Promise<void> = reopened.loadExtension('./ext', 'init');
loaded.catch(() => {});

await db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)', { timeout: 100 });
const insert: Statement = db.prepare('INSERT INTO t(v) VALUES (?)', { readBigInts: true });
const ran: RunResult = await insert.run('a');
const row = await db.prepare('SELECT * FROM t WHERE id = $id').get<{ id: number; v: string }>({ id: 1 });
const id: number | undefined = row?.id;
const rows = await db.prepare('SELECT * FROM t').all();
for await (const r of db.prepare('SELECT * FROM t').iterate<{ v: string }>()) r.v.toUpperCase();
const result: QueryResult<{ id: number }> = await db.prepare('INSERT INTO t(v) VALUES (?) RETURNING id').query<{ id: number }>('b');
const firstId: number = result.rows[0].id;
const columns: ColumnInfo[] = result.columns;
const changes: number | bigint = result.changes;
const meta: ColumnInfo[] = await insert.columns();
const sqlText: string = insert.sourceSQL;
const expanded: string = await insert.expandedSQL;
db.prepare('SELECT 1').close();
db.prepare('SELECT 1')[Symbol.dispose]();
const bounded: Statement = insert.withOptions({ signal: AbortSignal.timeout(100), timeout: 50 });
insert.setReadBigInts(true);
insert.setReturnArrays(false);
insert.setAllowBareNamedParameters(true);
insert.setAllowUnknownNamedParameters(false);

const total: number = await db.transaction(
  async (tx: Transaction) => {
    await tx.prepare('UPDATE t SET v = ?').run('x');
    await tx.exec('DELETE FROM t WHERE id > 10');
    await tx.batch([[insert, ['y']], ['DELETE FROM t WHERE v = ?', 'z']]);
    await tx.transaction(async (nested) => nested.prepare('SELECT 1').get());
    return 1;
  },
  { mode: 'immediate' },
);

const tx: Transaction = await db.begin({ mode: 'deferred' });
await tx.savepoint('a');
await tx.rollbackTo('a');
await tx.release('a');
await tx.commit();
await tx.rollback();
await tx[Symbol.asyncDispose]();

const batch = await db.batch([[insert, 'c'], ['SELECT * FROM t']]);
const count: number = await db.read(async (snapshot: ReadSnapshot) => (await snapshot.prepare('SELECT 1').all()).length);
const checkpointed: number = (await db.checkpoint('truncate')).checkpointedFrames;
await db.stopCheckpointer();
const stats: DatabaseStats = db.stats();
const restoring: RestoreStats | null = stats.restore;
const pagesLeft: number = restoring === null ? 0 : restoring.pagesTotal - restoring.pagesLocal;
const lingeredShare: number = stats.drains.lingered / (stats.drains.woken + stats.drains.lingered);
await db.filled;
const paged = await Database.open('paged.db', { replica: { url: 's3://bucket/app' }, restore: 'paged' });
// @ts-expect-error: restore is 'paged' or 'full'
await Database.open('lazy.db', { replica: { url: 's3://bucket/app' }, restore: 'lazy' });
const follower = await Database.open('follower.db', { follow: { url: 's3://bucket/app', pollInterval: 100 }, restore: 'paged' });
const followed: FollowStats | null = follower.stats().follow;
const caughtUp: number = (await follower.catchUp({ txid: followed?.txid ?? 0, timeout: 5000 })).txid;
await follower.filled;
const settings: DatabaseSettings = await db.settings();
const writer = await Database.open('writer.db', {
  replica: { url: 's3://bucket/app', leaseTtl: 10_000, durability: 'replica', gatherWindow: 4 },
});
const backupOnly = await Database.open('backup.db', { replica: { url: 's3://bucket/backup', lease: false } });
// @ts-expect-error: lease is a boolean
await Database.open('backup.db', { replica: { url: 's3://bucket/backup', lease: 'no' } });
await backupOnly.close();
const holder: string | null = writer.stats().replica?.leaseHolder ?? null;
const fenced: boolean = writer.stats().replica?.fenced ?? false;
const perUpload: number = (writer.stats().replica?.durableWrites ?? 0) / (writer.stats().replica?.durableRounds ?? 1);
// @ts-expect-error: durability is 'local' or 'replica'
await Database.open('eventual.db', { replica: { url: 's3://bucket/app', durability: 'eventual' } });
const standby = await Database.open('standby.db', {
  follow: { url: 's3://bucket/app', promote: 'auto', leaseTtl: 10_000, durability: 'replica', syncInterval: 100, gatherWindow: 0 },
});
standby.on('promoted', ({ txid }) => console.log(txid + 1));
const promotedAt: number = (await standby.promote()).txid;
const kept: string | null = standby.stats().follow?.keptFile ?? null;
// @ts-expect-error: promote is 'auto'
await Database.open('standby2.db', { follow: { url: 's3://bucket/app', promote: true } });

// @ts-expect-error: an unknown transaction mode
await db.begin({ mode: 'later' });
// @ts-expect-error: undefined cannot be bound
await insert.run(undefined);
// @ts-expect-error: savepoint names are strings
await tx.savepoint(1);
// @ts-expect-error: query() resolves to a result object, not rows
const notRows: unknown[] = await insert.query();

// Kysely.
interface KyselyTables {
  users: { id: Generated<number>; email: string };
}
const kysely = new Kysely<KyselyTables>({ dialect: new OffloopDialect({ database: db, transactionMode: 'immediate' }) });
const lazy = new OffloopDialect({ database: () => Database.open('other.db') });
const emails: string[] = (await kysely.selectFrom('users').select('email').execute()).map((u) => u.email);
await kysely.transaction().execute(async (trx) => trx.insertInto('users').values({ email: 'a@example.com' }).execute());
// @ts-expect-error: the dialect needs a database
new OffloopDialect({});
// @ts-expect-error: not a transaction mode
new OffloopDialect({ database: db, transactionMode: 'serializable' });

// Drizzle.
const users = sqliteTable('users', { id: integer().primaryKey(), email: text().notNull() });
const posts = sqliteTable('posts', { id: integer().primaryKey(), authorId: integer().notNull(), title: text().notNull() });
const usersRelations = relations(users, ({ many }) => ({ posts: many(posts) }));
const postsRelations = relations(posts, ({ one }) => ({ author: one(users, { fields: [posts.authorId], references: [users.id] }) }));
const orm = drizzle(db, { schema: { users, posts, usersRelations, postsRelations }, logger: true, casing: 'snake_case' });
const client: Database = orm.$client;
const selected: { id: number; email: string }[] = await orm.select().from(users).where(eq(users.id, 1));
const runResult: RunResult = await orm.insert(users).values({ email: 'b@example.com' });
const withPosts = await orm.query.users.findMany({ with: { posts: true } });
const titles: string[] = withPosts.flatMap((u) => u.posts.map((p) => p.title));
const [inserted, all] = await orm.batch([orm.insert(users).values({ email: 'c@example.com' }).returning(), orm.select().from(posts)]);
await orm.transaction(async (t) => t.update(users).set({ email: 'd@example.com' }), { behavior: 'immediate' });
await migrate(orm, { migrationsFolder: './drizzle' });
// @ts-expect-error: drizzle() takes an offloop Database, not a path
drizzle('app.db');
// @ts-expect-error: the migrator needs a migrations folder
await migrate(orm, {});

// Prisma.
const factory: SqlDriverAdapterFactory = new PrismaOffloop(db, { transactionMode: 'immediate' });
const adapter = await factory.connect();
const resultSet = await adapter.queryRaw({ sql: 'SELECT 1', args: [], argTypes: [] });
const names: string[] = resultSet.columnNames;
// @ts-expect-error: the adapter needs a database
new PrismaOffloop();
// @ts-expect-error: not a transaction mode
new PrismaOffloop(db, { transactionMode: 'now' });

// Observability.
const queryChannel = diagnosticsChannel.tracingChannel<unknown, QueryTraceContext>('offloop:query');
const onQueryEnd = (ctx: QueryTraceContext) => {
  const waited: number | undefined = ctx.queueWait;
  const parentMethod: string | undefined = ctx.parent?.method;
  const text: string = ctx.sql;
  void waited, parentMethod, text;
};
const ignore = () => {};
queryChannel.subscribe({ start: ignore, end: ignore, asyncStart: ignore, asyncEnd: onQueryEnd, error: ignore });
const traced: TracedOperation = 'checkpoint';
const operationChannel = diagnosticsChannel.tracingChannel<unknown, OperationTraceContext>(`offloop:${traced}`);
operationChannel.subscribe({ start: (ctx) => void ctx.mode, end: ignore, asyncStart: ignore, asyncEnd: ignore, error: ignore });
const uninstrument: () => void = instrument({ tracerProvider: trace.getTracerProvider(), parameters: false });
uninstrument();
// @ts-expect-error: parameters is a boolean
instrument({ parameters: 'yes' });
const unregister: () => void = register(new Registry(), { databases: ['app.db'] });
unregister();
// @ts-expect-error: databases are paths
register(new Registry(), { databases: [db] });
// @ts-expect-error: not an operation with a channel
const untraced: TracedOperation = 'get';

export {
  version, options, open, where, image, replaced, ran, id, rows, firstId, columns, changes, meta, sqlText, bounded, total, batch, count,
  checkpointed, stats, settings, notRows, lazy, emails, client, selected, runResult, titles, inserted, all, names, untraced,
};
