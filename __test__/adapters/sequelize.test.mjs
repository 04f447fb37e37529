// Sequelize 6 on offloop/sqlite3 (`dialectModule`): sync, queries,
// transactions and concurrency, with the real Sequelize.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { DataTypes, QueryTypes, Sequelize, Transaction } from 'sequelize';
import sqlite3 from 'offloop/sqlite3';

import { readerExecuted, tempDir } from '../engine-helpers.mjs';

const tmp = tempDir('sequelize');
after(() => tmp.cleanup());

/** Sequelize on a new database file, its models synced. */
async function open(dialectModule = sqlite3) {
  const sequelize = new Sequelize({ dialect: 'sqlite', storage: tmp.file(), dialectModule, logging: false });
  const User = sequelize.define('User', {
    email: { type: DataTypes.STRING, allowNull: false, unique: true },
    name: { type: DataTypes.STRING, allowNull: false },
  });
  const Post = sequelize.define('Post', { title: { type: DataTypes.STRING, allowNull: false } });
  User.hasMany(Post, { foreignKey: { name: 'userId', allowNull: false } });
  Post.belongsTo(User, { foreignKey: { name: 'userId', allowNull: false } });
  await sequelize.sync();
  return { sequelize, User, Post };
}

/** The sqlite3 Database Sequelize runs its queries outside transactions on. */
function handle(sequelize) {
  return sequelize.connectionManager.getConnection({});
}

test('sync creates the tables; sync again changes nothing', async () => {
  const { sequelize } = await open();
  try {
    await sequelize.sync();
    const tables = await sequelize.getQueryInterface().showAllTables();
    assert.deepEqual([...tables].sort(), ['Posts', 'Users']);
  } finally {
    await sequelize.close();
  }
});

test('create, read, update, delete, a join and raw SQL', async () => {
  const { sequelize, User, Post } = await open();
  try {
    const ada = await User.create({ email: 'ada@example.com', name: 'Ada' });
    const grace = await User.create({ email: 'grace@example.com', name: 'Grace' });
    assert.deepEqual([ada.id, grace.id], [1, 2]);
    await Post.bulkCreate([
      { userId: ada.id, title: 'Notes' },
      { userId: grace.id, title: 'Compilers' },
    ]);
    const [changed] = await User.update({ name: 'Ada L.' }, { where: { id: ada.id } });
    assert.equal(changed, 1);
    const posts = await Post.findAll({ include: User, order: [['id', 'ASC']] });
    assert.deepEqual(
      posts.map((p) => [p.title, p.User.name]),
      [
        ['Notes', 'Ada L.'],
        ['Compilers', 'Grace'],
      ],
    );
    const [rows] = await sequelize.query('SELECT count(*) AS n, ? AS tag FROM Users WHERE id > ?', { replacements: ['x', 0] });
    assert.deepEqual(rows, [{ n: 2, tag: 'x' }]);
    assert.equal(await Post.destroy({ where: { userId: grace.id } }), 1);
    assert.deepEqual((await Post.findAll()).map((p) => p.title), ['Notes']);
  } finally {
    await sequelize.close();
  }
});

test('a committed transaction keeps its writes', async () => {
  const { sequelize, User, Post } = await open();
  try {
    await sequelize.transaction(async (transaction) => {
      const user = await User.create({ email: 'tx@example.com', name: 'Tx' }, { transaction });
      await Post.create({ userId: user.id, title: 'inside' }, { transaction });
      assert.equal(await Post.count({ transaction }), 1);
    });
    assert.equal(await Post.count(), 1);
    assert.deepEqual((await User.findAll()).map((u) => u.email), ['tx@example.com']);
  } finally {
    await sequelize.close();
  }
});

test("a transaction failing on a unique constraint leaves nothing behind, with sqlite3's error", async () => {
  const { sequelize, User } = await open();
  try {
    await User.create({ email: 'taken@example.com', name: 'First' });
    const failing = sequelize.transaction(async (transaction) => {
      await User.create({ email: 'new@example.com', name: 'New' }, { transaction });
      await User.create({ email: 'taken@example.com', name: 'Again' }, { transaction });
    });
    await assert.rejects(failing, (err) => {
      assert.equal(err.name, 'SequelizeUniqueConstraintError');
      assert.equal(err.parent.code, 'SQLITE_CONSTRAINT');
      assert.equal(err.parent.errno, 19);
      assert.match(err.parent.message, /^SQLITE_CONSTRAINT: UNIQUE constraint failed: Users\.email$/);
      return true;
    });
    assert.deepEqual((await User.findAll()).map((u) => u.email), ['taken@example.com']);
  } finally {
    await sequelize.close();
  }
});

test('32 concurrent transactions and 200 concurrent reads, the reads on reader threads', async () => {
  // Each Sequelize transaction opens a database of its own: with BEGIN
  // IMMEDIATE they take turns on the file's write lock, waiting up to the
  // busy timeout given through offloop's options.
  const { sequelize, User, Post } = await open(sqlite3.withOptions({ timeout: 30000 }));
  try {
    await User.bulkCreate(Array.from({ length: 200 }, (_, i) => ({ email: `r${i}@example.com`, name: `reader ${i}` })));
    const counter = await Post.create({ userId: 1, title: 'counter' });
    // Sequelize writes a model query's values into its SQL, so each id is a
    // new SQL text, which offloop's writer classifies first (docs/sqlite3.md);
    // a query with bound parameters is one text, and runs on the readers.
    const byPk = (id) => User.findByPk(id, { attributes: ['id', 'email', 'name'], raw: true });
    const bound = (id) =>
      sequelize.query('SELECT id, email, name FROM Users WHERE id = $id', { bind: { id }, type: QueryTypes.SELECT, plain: true });
    await bound(1); // the writer prepares a new SQL text first and learns it may run on a reader

    const db = await handle(sequelize);
    const before = readerExecuted(db.stats());
    const [models, reads, writes] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => byPk(i + 1))),
      Promise.all(Array.from({ length: 200 }, (_, i) => bound(i + 1))),
      Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          sequelize.transaction({ type: Transaction.TYPES.IMMEDIATE }, async (transaction) => {
            const { title } = await Post.findByPk(counter.id, { transaction, raw: true });
            const seen = title === 'counter' ? 0 : Number(title);
            await Post.update({ title: String(seen + 1) }, { where: { id: counter.id }, transaction });
            await Post.create({ userId: 2, title: `tx ${i} saw ${seen}` }, { transaction });
            return seen;
          }),
        ),
      ),
    ]);
    models.forEach((row, i) => assert.deepEqual(row, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    reads.forEach((row, i) => assert.deepEqual(row, { id: i + 1, email: `r${i}@example.com`, name: `reader ${i}` }));
    assert.ok(readerExecuted(db.stats()) - before >= 200, 'every bound read ran on a reader');

    assert.deepEqual([...writes].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
    assert.equal((await Post.findByPk(counter.id)).title, '32');
    const logged = await Post.findAll({ where: { userId: 2 }, raw: true });
    assert.equal(logged.length, 32);
    for (const { title } of logged) {
      const [, i, seen] = title.match(/^tx (\d+) saw (\d+)$/);
      assert.equal(writes[Number(i)], Number(seen));
    }
  } finally {
    await sequelize.close();
  }
});
