// The Drizzle schema of drizzle.test.mjs; migrations/ creates it
// (in drizzle-kit's folder format). Column names come from the keys, in
// snake_case through drizzle()'s `casing` option.

import { relations } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable('users', {
  id: integer().primaryKey(),
  email: text().notNull().unique(),
  name: text().notNull(),
});

export const posts = sqliteTable('posts', {
  id: integer().primaryKey(),
  authorId: integer()
    .notNull()
    .references(() => users.id),
  title: text().notNull(),
});

export const usersRelations = relations(users, ({ many }) => ({ posts: many(posts) }));

export const postsRelations = relations(posts, ({ one }) => ({
  author: one(users, { fields: [posts.authorId], references: [users.id] }),
}));
