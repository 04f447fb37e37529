// offloop/drizzle/migrator for ES modules: migrate() built on Drizzle's ES build.

import { readMigrationFiles } from 'drizzle-orm/migrator';

import migrator from './migrate.js';

export const { migrate } = migrator.createMigrator({ readMigrationFiles });
