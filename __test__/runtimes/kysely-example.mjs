// Kysely's own getting-started example for SQLite (kysely.dev, "Getting
// started": the `person` table, src/database.ts, src/PersonRepository.ts
// and src/PersonRepository.spec.ts), on offloop/kysely, for
// runtimes.test.mjs to run in Bun and in Node. It prints one JSON line of
// what each call returned; it judges nothing. Its argument: a database
// file that does not exist yet.
//
// Changed from the docs, and nothing else:
// - the dialect: `new OffloopDialect({ database })` on an offloop
//   database, where the docs write `new SqliteDialect({ database: new
//   SQLite(':memory:') })` on better-sqlite3;
// - TypeScript's types left out (plain JavaScript), and the spec's
//   describe/it run in order by hand, each result kept;
// - `let query` in findPeople, where the docs' `const query` is then
//   reassigned (a TypeError in JavaScript);
// - the spec's `truncate table person`, which SQLite does not have, is
//   `delete from person`.
// After the spec, the same repository functions run once on the person the
// spec created, so that each returns a row and not only nothing.

import { Kysely, sql } from 'kysely';
import { Database } from 'offloop';
import { OffloopDialect } from 'offloop/kysely';

const file = process.argv.at(-1);

// src/database.ts
const dialect = new OffloopDialect({
  database: await Database.open(file),
});

export const db = new Kysely({
  dialect,
});

// src/PersonRepository.ts
export async function findPersonById(id) {
  return await db.selectFrom('person').where('id', '=', id).selectAll().executeTakeFirst();
}

export async function findPeople(criteria) {
  let query = db.selectFrom('person');

  if (criteria.id) {
    query = query.where('id', '=', criteria.id); // Kysely is immutable, you must re-assign!
  }

  if (criteria.first_name) {
    query = query.where('first_name', '=', criteria.first_name);
  }

  if (criteria.last_name !== undefined) {
    query = query.where('last_name', criteria.last_name === null ? 'is' : '=', criteria.last_name);
  }

  if (criteria.gender) {
    query = query.where('gender', '=', criteria.gender);
  }

  if (criteria.created_at) {
    query = query.where('created_at', '=', criteria.created_at);
  }

  return await query.selectAll().execute();
}

export async function updatePerson(id, updateWith) {
  await db.updateTable('person').set(updateWith).where('id', '=', id).execute();
}

export async function createPerson(person) {
  return await db.insertInto('person').values(person).returningAll().executeTakeFirstOrThrow();
}

export async function deletePerson(id) {
  return await db.deleteFrom('person').where('id', '=', id).returningAll().executeTakeFirst();
}

// src/PersonRepository.spec.ts
const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
/** A row with its `created_at` (the clock's) checked for shape and named, so that runs compare. */
function stable(value) {
  if (Array.isArray(value)) return value.map(stable);
  if (value === undefined) return { undefined: true };
  if (value === null || typeof value !== 'object') return value;
  const created = value.created_at;
  return { ...value, created_at: TIMESTAMP.test(created) ? 'a current_timestamp' : created };
}

const seen = {};
const spec = {
  'should find a person with a given id': () => findPersonById(123),
  'should find all people named Arnold': () => findPeople({ first_name: 'Arnold' }),
  'should update gender of a person with a given id': () => updatePerson(123, { gender: 'woman' }),
  'should create a person': () =>
    createPerson({
      first_name: 'Jennifer',
      last_name: 'Aniston',
      gender: 'woman',
    }),
  'should delete a person with a given id': () => deletePerson(123),
};

// before
await db.schema
  .createTable('person')
  .addColumn('id', 'integer', (cb) => cb.primaryKey().autoIncrement().notNull())
  .addColumn('first_name', 'varchar(255)', (cb) => cb.notNull())
  .addColumn('last_name', 'varchar(255)')
  .addColumn('gender', 'varchar(50)', (cb) => cb.notNull())
  .addColumn('created_at', 'timestamp', (cb) => cb.notNull().defaultTo(sql`current_timestamp`))
  .execute();

for (const [name, it] of Object.entries(spec)) {
  seen[name] = stable(await it());
  // afterEach
  await sql`delete from ${sql.table('person')}`.execute(db);
}

// The repository on a person that exists.
const jennifer = await createPerson({ first_name: 'Jennifer', last_name: 'Aniston', gender: 'woman' });
const { id } = jennifer;
seen.created = stable(jennifer);
seen.foundById = stable(await findPersonById(id));
seen.foundByName = stable(await findPeople({ first_name: 'Jennifer', last_name: 'Aniston' }));
seen.foundWithNullLastName = stable(await findPeople({ last_name: null }));
await updatePerson(id, { gender: 'female' });
seen.updated = stable(await findPersonById(id));
seen.deleted = stable(await deletePerson(id));
seen.afterDelete = stable(await findPeople({}));

// after
await db.schema.dropTable('person').execute();
seen.tables = (await db.introspection.getTables()).map((t) => t.name);
await db.destroy();

console.log(JSON.stringify(seen));
