// Types of offloop-sqlite3 for ES module importers: offloop/sqlite3's.

export * from 'offloop/sqlite3';
export { default } from 'offloop/sqlite3';
