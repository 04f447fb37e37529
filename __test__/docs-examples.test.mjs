// Every JavaScript example in README.md and docs/*.md runs, as a reader
// would paste it: saved as an ES module in an empty folder where `offloop`
// resolves to this package, and run by this Node in a process of its own.
// This file owns finding the examples and running them; it never checks
// what an example prints, and never rewrites an example's own code.
//
// The convention the docs follow (stated again in docs/api.md):
//
// - A ```js (or ```mjs) block is an example and runs. Blocks that show a
//   shape or a signature rather than code to run use ```text or ```ts.
// - Each example runs after a prelude: `import { Database } from 'offloop'`
//   unless the example imports from 'offloop' itself, then
//   `const db = await Database.open('app.db')` unless the example opens a
//   database itself (`Database.open(` or `new Database(`). After it, `db`
//   is closed.
// - An HTML comment right before the block can add code the example needs
//   (a table, a variable), run after the prelude and before the example:
//       <!-- example-setup
//       await db.exec('CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)');
//       -->
// - `<!-- example-skip: why -->` right before a block keeps it from running;
//   the reason is required.
//
// An example fails when it throws, when a promise it leaves behind rejects,
// or when it has not ended after EXAMPLE_TIMEOUT_MS.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { ROOT } from './engine-helpers.mjs';

// Far above what any example needs (they take well under a second), so
// only an example that hangs reaches it.
const EXAMPLE_TIMEOUT_MS = 60_000;

// Fence languages that hold JavaScript but would not run: examples must
// say `js` or `mjs`, or the test would silently pass them by.
const UNRUN_JS_LANGUAGES = new Set(['javascript', 'cjs', 'jsx', 'node', 'es6']);

const RUN_LANGUAGES = new Set(['js', 'mjs']);

const MARKER = /^<!--\s*example-(setup|skip)\b:?([\s\S]*?)-->$/;

const workDirs = [];
after(() => {
  for (const dir of workDirs) fs.rmSync(dir, { recursive: true, force: true });
});

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
 * first line (1-based), its code and the example marker before it.
 * Markers not followed by a block are returned in `orphans`.
 */
function parseMarkdown(text) {
  const lines = text.split('\n');
  const blocks = [];
  const orphans = [];
  let marker = null;
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
      blocks.push({ language: language.toLowerCase(), line: i + 1, code: body.join('\n'), marker });
      marker = null;
      i = j;
      continue;
    }
    if (line.trimStart().startsWith('<!--')) {
      let j = i;
      while (j < lines.length && !lines[j].includes('-->')) j++;
      const comment = lines.slice(i, j + 1).join('\n').trim();
      const match = MARKER.exec(comment);
      if (marker !== null) orphans.push(marker);
      marker = match === null ? null : { kind: match[1], text: match[2].trim(), line: i + 1 };
      i = j;
      continue;
    }
    if (line.trim() !== '' && marker !== null) {
      orphans.push(marker);
      marker = null;
    }
  }
  if (marker !== null) orphans.push(marker);
  return { blocks, orphans };
}

/** The module an example runs as: prelude, setup, the example, epilogue. */
function programFor(code, setup) {
  const parts = [];
  if (!/\bfrom\s+['"]offloop['"]/.test(code)) parts.push("import { Database } from 'offloop';");
  if (!/\b(?:Database\.open|new\s+Database)\s*\(/.test(code)) {
    parts.push("const db = await Database.open('app.db');");
  }
  if (setup !== '') parts.push(setup);
  parts.push(code);
  parts.push("if (typeof db !== 'undefined') await db.close();");
  return parts.join('\n') + '\n';
}

/**
 * Runs `program` as `example.mjs` in a fresh folder whose
 * `node_modules/offloop` is this package. Resolves to the exit code and
 * output; never rejects.
 */
function runProgram(program) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-docs-example-'));
  workDirs.push(dir);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'offloop'), 'dir');
  fs.writeFileSync(path.join(dir, 'example.mjs'), program);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['example.mjs'],
      { cwd: dir, timeout: EXAMPLE_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 2 ** 20 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : (error.code ?? error.signal), stdout, stderr, program });
      },
    );
  });
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

// ---------------------------------------------------------------------------
// The docs follow the convention.

test("the README's first example is an ES module that imports offloop", () => {
  const readme = pages.find((p) => p.file === 'README.md');
  const first = readme.blocks.find((b) => RUN_LANGUAGES.has(b.language));
  assert.ok(first !== undefined, 'README.md has no js example');
  assert.equal(first.marker, null, 'the first example needs no hidden setup');
  assert.match(first.code, /^import \{ Database \} from 'offloop';/m);
  assert.doesNotMatch(first.code, /\brequire\(/);
});

for (const page of pages) {
  test(`${page.file}: every example marker sits right before a code block`, () => {
    assert.deepEqual(
      page.orphans.map((m) => `line ${m.line}: example-${m.kind}`),
      [],
      'a marker must be followed by its ```js block, with nothing but blank lines between',
    );
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
    if (block.marker?.kind === 'skip') {
      test(`${where}: a skipped example says why`, () => {
        assert.notEqual(block.marker.text, '', `${where}: example-skip needs a reason`);
      });
      continue;
    }
    test(`${where}: the example runs without an error`, async () => {
      const setup = block.marker?.kind === 'setup' ? block.marker.text : '';
      const result = await runProgram(programFor(block.code, setup));
      assert.equal(result.code, 0, failureReport(where, result));
    });
  }
}
