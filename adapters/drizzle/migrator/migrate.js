'use strict';

// offloop/drizzle/migrator: applies drizzle-kit's migrations folder to the
// database a `drizzle()` of offloop/drizzle returned. It owns only the
// order of the work; files are read by Drizzle's own readMigrationFiles,
// and the bookkeeping table is Drizzle's (`__drizzle_migrations`, the same
// columns), so other Drizzle migrators agree with it.
//
// Unlike Drizzle's migrators, which read the last applied migration before
// they open their transaction, everything here happens in one offloop
// write transaction (BEGIN IMMEDIATE): a second migrator, in this process or
// another, waits for the first and then finds the migrations applied. Each
// migration chunk runs with `exec()`, so a chunk holding several statements
// (a hand-written file without breakpoints) runs whole.

function createMigrator({ readMigrationFiles }) {
  /** Applies the migrations of `config.migrationsFolder` not applied yet. */
  async function migrate(db, config) {
    const client = db?.$client;
    if (client === undefined || typeof client.transaction !== 'function') {
      const err = new TypeError('migrate() takes the database drizzle() from offloop/drizzle returned');
      err.code = 'ERR_INVALID_ARG_TYPE';
      throw err;
    }
    const migrations = readMigrationFiles(config);
    const table = `"${(config.migrationsTable ?? '__drizzle_migrations').replaceAll('"', '""')}"`;
    await client.transaction(
      async (tx) => {
        await tx.exec(`CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
        const last = await tx.prepare(`SELECT created_at FROM ${table} ORDER BY created_at DESC LIMIT 1`).get();
        const lastMillis = last === undefined ? -Infinity : Number(last.created_at);
        const record = tx.prepare(`INSERT INTO ${table} ("hash", "created_at") VALUES (?, ?)`);
        for (const migration of migrations) {
          if (migration.folderMillis <= lastMillis) continue;
          for (const chunk of migration.sql) await tx.exec(chunk);
          await record.run(migration.hash, BigInt(migration.folderMillis));
        }
      },
      { mode: 'immediate' },
    );
  }

  return { migrate };
}

module.exports = { createMigrator };
