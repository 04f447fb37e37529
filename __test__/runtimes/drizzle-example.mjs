// Drizzle's own getting-started example for Bun and SQLite
// (orm.drizzle.team, "Get Started with Drizzle and Bun:SQLite":
// src/db/schema.ts and src/index.ts), on offloop/drizzle, for
// runtimes.test.mjs to run in Bun and in Node. It prints one JSON line of
// what each step returned and logged; it judges nothing. Its argument: a
// database file that does not exist yet.
//
// Changed from the docs, and nothing else:
// - the driver: `drizzle(await Database.open(file))` from offloop/drizzle,
//   where the docs write `drizzle(process.env.DB_FILE_NAME!)` from
//   drizzle-orm/bun-sqlite (the file comes as an argument, not from .env);
// - the table is created by the SQL that `drizzle-kit generate` writes for
//   this schema, where the docs run `npx drizzle-kit push`;
// - TypeScript's types left out, and console.log's lines kept, not printed;
// - two selects added, after the update and after the delete, so that
//   each step's effect is seen.

import { eq } from 'drizzle-orm';
import { int, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { Database } from 'offloop';
import { drizzle } from 'offloop/drizzle';

const file = process.argv.at(-1);
const logged = [];
const log = (...args) => logged.push(args);

// src/db/schema.ts
export const usersTable = sqliteTable('users_table', {
  id: int().primaryKey({ autoIncrement: true }),
  name: text().notNull(),
  age: int().notNull(),
  email: text().notNull().unique(),
});

// drizzle-kit push
const client = await Database.open(file);
await client.exec(`CREATE TABLE \`users_table\` (
	\`id\` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	\`name\` text NOT NULL,
	\`age\` integer NOT NULL,
	\`email\` text NOT NULL
);
CREATE UNIQUE INDEX \`users_table_email_unique\` ON \`users_table\` (\`email\`);`);

// src/index.ts
const db = drizzle(client);

async function main() {
  const user = {
    name: 'John',
    age: 30,
    email: 'john@example.com',
  };

  await db.insert(usersTable).values(user);
  log('New user created!');

  const users = await db.select().from(usersTable);
  log('Getting all users from the database: ', users);

  await db
    .update(usersTable)
    .set({
      age: 31,
    })
    .where(eq(usersTable.email, user.email));
  log('User info updated!');

  log('After the update: ', await db.select().from(usersTable));

  await db.delete(usersTable).where(eq(usersTable.email, user.email));
  log('User deleted!');

  log('After the delete: ', await db.select().from(usersTable));
}

await main();
await client.close();

console.log(JSON.stringify(logged));
