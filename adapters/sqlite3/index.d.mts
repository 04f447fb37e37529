// The declarations of index.d.ts, for ES module importers, with the module
// as the default export.

export * from './index.js';
import type { sqlite3 as Module } from './index.js';

declare const sqlite3: Module;
export default sqlite3;
