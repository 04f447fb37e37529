// The stand-in package npm/offloop-sqlite3, as an application uses it: packed
// with offloop's release tarballs, installed into a fresh folder
// under the name `sqlite3` through npm's `overrides`, beneath a library
// that depends on the real `sqlite3` and requires it deep inside (Knex's
// sqlite3 client does). The app runs a migration, writes and reads, and
// sees offloop underneath.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { npmCommand, pack } from '../../scripts/pack.mjs';
import { ROOT, addonName, hostPlatform } from '../../scripts/targets.mjs';
import { pathWithoutToolchain } from './platform/install.mjs';

const platform = hostPlatform();
const manifestOf = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
const knexVersion = manifestOf(path.join(ROOT, 'node_modules', 'knex')).version;
const sqlite3Version = manifestOf(path.join(ROOT, 'node_modules', 'sqlite3')).version;

// The library's Knex comes from the npm cache (the repository's install put
// it there), the registry only for what the cache lacks. The bound only
// keeps a hung npm from hanging the suite.
const INSTALL_TIMEOUT_MS = 180_000;

let dir;
let installed;

function npm(args, cwd) {
  const [command, prefix] = npmCommand();
  return spawnSync(command, [...prefix, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: INSTALL_TIMEOUT_MS,
    env: { ...process.env, PATH: pathWithoutToolchain() },
  });
}

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-standin-'));
  const tarballs = path.join(dir, 'tarballs');
  const [main, native] = pack({ out: tarballs, platforms: [platform], addons: { [platform]: path.join(ROOT, addonName(platform)) } });
  const [standin] = JSON.parse(
    npm(['pack', path.join(ROOT, 'npm', 'offloop-sqlite3'), '--json', '--ignore-scripts', '--pack-destination', tarballs], dir).stdout,
  );
  // Absolute: npm reads an override's file: path from the package it replaces a dependency of.
  const file = (name) => `file:${path.join(tarballs, name)}`;

  // A library that depends on the real sqlite3 and loads it through Knex.
  const library = path.join(dir, 'library');
  fs.mkdirSync(library);
  fs.writeFileSync(
    path.join(library, 'package.json'),
    JSON.stringify({ name: 'library', version: '1.0.0', main: 'index.js', dependencies: { knex: knexVersion, sqlite3: `^${sqlite3Version}` } }),
  );
  fs.writeFileSync(
    path.join(library, 'index.js'),
    "module.exports = (filename) => require('knex')({ client: 'sqlite3', connection: { filename }, useNullAsDefault: true });\n",
  );

  const app = {
    private: true,
    dependencies: { library: 'file:library' },
    overrides: {
      sqlite3: file(standin.filename),
      offloop: file(path.basename(main.file)),
      [native.name]: file(path.basename(native.file)),
    },
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(app, null, 2));
  installed = npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('npm installs the stand-in under the name sqlite3, with offloop, and builds nothing', () => {
  assert.equal(installed.status, 0, `${installed.stdout}\n${installed.stderr}`);
  const sqlite3 = manifestOf(path.join(dir, 'node_modules', 'sqlite3'));
  assert.equal(sqlite3.name, 'offloop-sqlite3');
  assert.ok(fs.existsSync(path.join(dir, 'node_modules', 'offloop', 'adapters', 'sqlite3', 'index.js')));
  const built = fs.readdirSync(path.join(dir, 'node_modules', 'sqlite3'), { recursive: true }).filter((f) => String(f).endsWith('.node'));
  assert.deepEqual(built, []);
});

test("the library's require('sqlite3') gets offloop: a migration, writes and reads through Knex", () => {
  const script = `
    const open = require('library');
    (async () => {
      const knex = open('app.db');
      await knex.schema.createTable('notes', (t) => { t.increments('id'); t.string('body').notNullable().unique(); });
      await knex('notes').insert([{ body: 'one' }, { body: 'two' }]);
      const rows = await knex('notes').select('id', 'body').orderBy('id');
      const error = await knex('notes').insert({ body: 'one' }).catch((err) => ({ code: err.code, errno: err.errno }));
      const connection = await knex.client.acquireConnection();
      const readers = connection.stats().readers.length;
      await knex.client.releaseConnection(connection);
      await knex.destroy();
      console.log(JSON.stringify({ rows, error, readers, driver: require.resolve('sqlite3', { paths: [require.resolve('knex')] }) }));
    })();
  `;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.deepEqual(out.rows, [
    { id: 1, body: 'one' },
    { id: 2, body: 'two' },
  ]);
  assert.deepEqual(out.error, { code: 'SQLITE_CONSTRAINT', errno: 19 });
  assert.ok(out.readers > 0, 'offloop reader threads underneath');
  assert.equal(manifestOf(path.dirname(out.driver)).name, 'offloop-sqlite3');
});

test('import gets the same module as require', () => {
  const script = `
    import sqlite3, { Database } from 'sqlite3';
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    console.log(JSON.stringify([sqlite3 === require('sqlite3'), Database === require('offloop/sqlite3').Database]));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), [true, true]);
});
