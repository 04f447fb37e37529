// The adapters from CommonJS TypeScript: each resolves to the CommonJS
// build of its library, and the types agree with it.

import offloop = require('offloop');
import kysely = require('kysely');
import offloopKysely = require('offloop/kysely');
import offloopDrizzle = require('offloop/drizzle');
import offloopPrisma = require('offloop/prisma');
import offloopOtel = require('offloop/otel');
import offloopMetrics = require('offloop/metrics');
import promClient = require('prom-client');
import sqliteCore = require('drizzle-orm/sqlite-core');

async function main(): Promise<void> {
  const db = await offloop.Database.open(':memory:');
  const k = new kysely.Kysely<{ t: { id: number } }>({ dialect: new offloopKysely.OffloopDialect({ database: db }) });
  const ids: number[] = (await k.selectFrom('t').select('id').execute()).map((r) => r.id);
  const t = sqliteCore.sqliteTable('t', { id: sqliteCore.integer().primaryKey() });
  const rows: { id: number }[] = await offloopDrizzle.drizzle(db).select().from(t);
  const factory = new offloopPrisma.PrismaOffloop(db);
  // @ts-expect-error: a Kysely dialect is not a Database
  offloopDrizzle.drizzle(new offloopKysely.OffloopDialect({ database: db }));
  const stopSpans: () => void = offloopOtel.instrument();
  const stopMetrics: () => void = offloopMetrics.register(new promClient.Registry());
  stopSpans();
  stopMetrics();
  void ids, rows, factory;
}

void main;
