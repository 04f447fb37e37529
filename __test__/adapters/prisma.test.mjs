// offloop/prisma with the real Prisma 7 client: queries, nested writes,
// errors, interactive and batch transactions, savepoints and concurrency.
//
// `prisma generate` runs first, offline: it needs no engine, but Prisma's
// CLI insists on a schema engine binary it would download, so
// PRISMA_SCHEMA_ENGINE_BINARY points at a stand-in that is never run. The
// tables come from migration.sql through the adapter's executeScript, since
// Prisma Migrate needs the real schema engine.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { PrismaOffloop } from 'offloop/prisma';

import { Database, ROOT, readerExecuted, tempDir } from '../engine-helpers.mjs';

const require = createRequire(import.meta.url);
const tmp = tempDir('prisma');
after(() => tmp.cleanup());

const HERE = path.join(ROOT, '__test__', 'adapters', 'prisma');
const MIGRATION = fs.readFileSync(path.join(HERE, 'migration.sql'), 'utf8');

function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

let PrismaClient;

before(async () => {
  const standIn = path.join(tmp.dir, 'schema-engine-stand-in');
  fs.writeFileSync(standIn, '#!/bin/sh\necho "no schema engine in these tests" >&2\nexit 1\n', { mode: 0o755 });
  const { code, output } = await run(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'prisma', 'build', 'index.js'), 'generate', '--schema', path.join(HERE, 'schema.prisma')],
    { PRISMA_SCHEMA_ENGINE_BINARY: standIn, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  );
  assert.equal(code, 0, output);
  ({ PrismaClient } = require('./prisma/generated/index.js'));
});

async function open() {
  const database = await Database.open(tmp.file());
  const factory = new PrismaOffloop(database);
  await (await factory.connect()).executeScript(MIGRATION);
  const prisma = new PrismaClient({ adapter: factory });
  return {
    database,
    prisma,
    close: async () => {
      await prisma.$disconnect();
      await database.close();
    },
  };
}

test('the migration applies through executeScript; applying it again does nothing', async () => {
  const database = await Database.open(tmp.file());
  try {
    const adapter = await new PrismaOffloop(database).connect();
    await adapter.executeScript(MIGRATION);
    const schema = () => database.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    const first = await schema();
    assert.deepEqual(
      first.filter((o) => o.type === 'table').map((o) => o.name),
      ['Post', 'Profile', 'User', 'sqlite_sequence'],
    );
    await database.prepare('INSERT INTO "User"(email) VALUES (?)').run('kept@example.com');
    await adapter.executeScript(MIGRATION);
    assert.deepEqual(await schema(), first);
    assert.equal((await database.prepare('SELECT count(*) AS n FROM "User"').get()).n, 1);
  } finally {
    await database.close();
  }
});

test('a nested create, include, updates, a relation filter and raw SQL', async () => {
  const { prisma, close } = await open();
  try {
    const ada = await prisma.user.create({
      data: {
        email: 'ada@example.com',
        name: 'Ada',
        balance: 9007199254740993n,
        profile: { create: { bio: 'mathematician' } },
        posts: { create: [{ title: 'one' }, { title: 'two', published: true }] },
      },
      include: { posts: { orderBy: { id: 'asc' } }, profile: true },
    });
    assert.equal(ada.id, 1);
    assert.equal(ada.balance, 9007199254740993n);
    assert.equal(ada.profile.bio, 'mathematician');
    assert.deepEqual(
      ada.posts.map((p) => [p.title, p.published, p.createdAt instanceof Date]),
      [
        ['one', false, true],
        ['two', true, true],
      ],
    );

    const updated = await prisma.post.updateMany({ where: { authorId: ada.id }, data: { published: true } });
    assert.equal(updated.count, 2);
    const renamed = await prisma.user.update({ where: { email: 'ada@example.com' }, data: { name: 'Ada L.' } });
    assert.equal(renamed.name, 'Ada L.');

    await prisma.user.create({ data: { email: 'bob@example.com', posts: { create: { title: 'three' } } } });
    const byAuthor = await prisma.post.findMany({ where: { author: { name: 'Ada L.' } }, select: { title: true }, orderBy: { id: 'asc' } });
    assert.deepEqual(byAuthor, [{ title: 'one' }, { title: 'two' }]);

    const when = new Date('2024-02-03T04:05:06.789Z');
    await prisma.post.update({ where: { id: 3 }, data: { createdAt: when } });
    assert.deepEqual((await prisma.post.findUnique({ where: { id: 3 } })).createdAt, when);

    const counts = await prisma.$queryRaw`SELECT u.email, count(p.id) AS n FROM "User" u JOIN "Post" p ON p."authorId" = u.id GROUP BY u.id ORDER BY u.id`;
    assert.deepEqual(counts, [
      { email: 'ada@example.com', n: 2n },
      { email: 'bob@example.com', n: 1n },
    ]);
    const changed = await prisma.$executeRaw`UPDATE "Post" SET title = upper(title) WHERE "authorId" = ${ada.id}`;
    assert.equal(changed, 2);
  } finally {
    await close();
  }
});

test('a unique violation is P2002, carrying the SQLite code', async () => {
  const { prisma, close } = await open();
  try {
    await prisma.user.create({ data: { email: 'taken@example.com' } });
    await assert.rejects(prisma.user.create({ data: { email: 'taken@example.com' } }), (err) => {
      assert.equal(err.code, 'P2002');
      const { cause } = err.meta.driverAdapterError;
      assert.deepEqual(cause.constraint, { fields: ['email'] });
      assert.equal(cause.originalCode, 'SQLITE_CONSTRAINT_UNIQUE');
      return true;
    });
  } finally {
    await close();
  }
});

test('an interactive transaction commits; one that throws, or fails on a unique constraint, leaves nothing', async () => {
  const { prisma, close } = await open();
  try {
    const id = await prisma.$transaction(async (tx) => {
      const user = await tx.user.create({ data: { email: 'c@example.com' } });
      await tx.post.create({ data: { title: 'first', authorId: user.id } });
      return user.id;
    });
    assert.equal(await prisma.post.count({ where: { authorId: id } }), 1);

    await assert.rejects(
      prisma.$transaction(async (tx) => {
        await tx.user.create({ data: { email: 'rolled-back@example.com' } });
        throw new Error('change of plan');
      }),
      /change of plan/,
    );
    await assert.rejects(
      prisma.$transaction(async (tx) => {
        await tx.user.create({ data: { email: 'new@example.com' } });
        await tx.user.create({ data: { email: 'c@example.com' } });
      }),
      (err) => err.code === 'P2002' && err.meta.driverAdapterError.cause.originalCode === 'SQLITE_CONSTRAINT_UNIQUE',
    );
    const emails = (await prisma.user.findMany({ select: { email: true } })).map((u) => u.email);
    assert.deepEqual(emails, ['c@example.com']);
  } finally {
    await close();
  }
});

test('a nested transaction rolls back to its savepoint while the outer one commits', async () => {
  const { prisma, close } = await open();
  try {
    await prisma.$transaction(async (tx) => {
      await tx.user.create({ data: { email: 'outer@example.com' } });
      await assert.rejects(
        tx.$transaction(async (inner) => {
          await inner.user.create({ data: { email: 'inner@example.com' } });
          throw new Error('undo the inner one');
        }),
        /undo the inner one/,
      );
    });
    const emails = (await prisma.user.findMany({ select: { email: true } })).map((u) => u.email);
    assert.deepEqual(emails, ['outer@example.com']);
  } finally {
    await close();
  }
});

test('a batch $transaction runs every query in one transaction', async () => {
  const { prisma, close } = await open();
  try {
    const [a, b, count] = await prisma.$transaction([
      prisma.user.create({ data: { email: 'a@example.com' } }),
      prisma.user.create({ data: { email: 'b@example.com' } }),
      prisma.user.count(),
    ]);
    assert.deepEqual([a.email, b.email, count], ['a@example.com', 'b@example.com', 2]);
    await assert.rejects(prisma.$transaction([prisma.user.create({ data: { email: 'c@example.com' } }), prisma.user.create({ data: { email: 'a@example.com' } })]), {
      code: 'P2002',
    });
    assert.equal(await prisma.user.count(), 2);
  } finally {
    await close();
  }
});

test('32 concurrent transactions and 200 concurrent reads, the reads on reader threads', async () => {
  const { database, prisma, close } = await open();
  try {
    await prisma.user.createMany({ data: Array.from({ length: 200 }, (_, i) => ({ email: `r${i}@example.com`, name: `reader ${i}` })) });
    await prisma.post.create({ data: { id: 1, title: '0', authorId: 1 } });

    // findFirst, not findUnique: Prisma merges findUnique calls made in one
    // tick into a single query.
    const byId = (id) => prisma.user.findFirstOrThrow({ where: { id }, select: { id: true, email: true, name: true } });
    await byId(1); // the writer prepares a new SQL text first and learns it may run on a reader

    const before = readerExecuted(database.stats());
    const [reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byId(i + 1))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          prisma.$transaction(
            async (tx) => {
              const { title } = await tx.post.findUniqueOrThrow({ where: { id: 1 } });
              const seen = Number(title);
              await tx.post.update({ where: { id: 1 }, data: { title: String(seen + 1) } });
              await tx.post.create({ data: { title: `tx ${i} saw ${seen}`, authorId: 2 } });
              return seen;
            },
            // Prisma's own bounds on waiting for and running a transaction.
            { maxWait: 60_000, timeout: 60_000 },
          ),
        ),
      ),
    ]);
    reads.forEach((row, i) => assert.deepEqual(row, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    assert.equal(readerExecuted(database.stats()) - before, 200, 'every read ran on a reader');

    assert.deepEqual([...writes].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    assert.equal((await prisma.post.findUniqueOrThrow({ where: { id: 1 } })).title, '32');
    const logged = await prisma.post.findMany({ where: { authorId: 2 }, select: { title: true } });
    assert.equal(logged.length, 32);
    for (const { title } of logged) {
      const [, i, seen] = title.match(/^tx (\d+) saw (\d+)$/);
      assert.equal(writes[Number(i)], Number(seen));
    }
  } finally {
    await close();
  }
});

test('PrismaOffloop refuses what is not an offloop database; CommonJS gets the same adapter', () => {
  assert.throws(() => new PrismaOffloop({}), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.equal(typeof require('offloop/prisma').PrismaOffloop, 'function');
});
