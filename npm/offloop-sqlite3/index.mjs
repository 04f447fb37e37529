// offloop-sqlite3 for ES modules: offloop/sqlite3's default export and names.

export * from 'offloop/sqlite3';
export { default } from 'offloop/sqlite3';
