// The generated results tables (bench/lib/report/): `npm run bench --
// report --check` passes on this checkout, fails when a committed result
// and the README or the goals table disagree, and a results file or row the
// report does not know is reported and skipped, never a crash. Runs no
// benchmark: it reads the committed bench/results/*.json, and edits copies
// of them in a temporary folder.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { report } from '../lib/report/index.mjs';
import { SUMMARIES } from '../lib/report/summaries.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RESULTS = path.join(ROOT, 'bench', 'results');

const copies = [];
after(() => {
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
});

/** A folder holding copies of the README, every page with generated tables, and the results JSON. */
function copyOfCheckout() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-report-'));
  copies.push(dir);
  fs.mkdirSync(path.join(dir, 'bench', 'results'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'docs'));
  for (const f of fs.readdirSync(RESULTS).filter((n) => n.endsWith('.json'))) {
    fs.copyFileSync(path.join(RESULTS, f), path.join(dir, 'bench', 'results', f));
  }
  for (const page of new Set(['README.md', 'docs/performance.md', ...SUMMARIES.map((s) => s.page)])) {
    fs.mkdirSync(path.dirname(path.join(dir, page)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, page), path.join(dir, page));
  }
  return dir;
}

function editJson(dir, name, edit) {
  const file = path.join(dir, 'bench', 'results', `${name}.json`);
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  edit(json);
  fs.writeFileSync(file, JSON.stringify(json));
}

const read = (dir, file) => fs.readFileSync(path.join(dir, file), 'utf8');

test('`npm run bench -- report --check` passes on the committed README, goals table and results', () => {
  const { status, stderr } = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'run.mjs'), 'report', '--check'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(status, 0, stderr);
});

test('a changed result makes --check fail for the README and the goals table, and report writes the new figure', () => {
  const dir = copyOfCheckout();
  editJson(dir, 'server', (json) => {
    const run = json.runs.find((r) => r.config === 'offloop-node20');
    run.readWritePerSecond = 4321;
  });
  const checked = report(dir, { check: true });
  assert.deepEqual(checked.stale, ['README.md', 'docs/performance.md']);
  assert.equal(read(dir, 'README.md'), read(ROOT, 'README.md'), '--check writes nothing');

  const written = report(dir);
  assert.deepEqual(written.written, ['README.md', 'docs/performance.md']);
  assert.match(read(dir, 'README.md'), /4,321\/s/);
  assert.deepEqual(report(dir, { check: true }).stale, []);
});

test('text outside the markers is left as it was', () => {
  const dir = copyOfCheckout();
  editJson(dir, 'server', (json) => {
    json.runs.find((r) => r.config === 'offloop-node20').readWritePerSecond = 4321;
  });
  const outside = (text) => text.replace(/<!-- performance-table:begin[\s\S]*<!-- performance-table:end -->/, '');
  const before = read(dir, 'README.md');
  report(dir);
  assert.equal(outside(read(dir, 'README.md')), outside(before));
  assert.notEqual(read(dir, 'README.md'), before);
});

test('a results file with no summary is reported and skipped', () => {
  const dir = copyOfCheckout();
  fs.writeFileSync(path.join(dir, 'bench', 'results', 'tracing.json'), JSON.stringify({ date: '2026-12-05' }));
  const { messages, stale, problems } = report(dir, { check: true });
  assert.deepEqual(problems, []);
  assert.deepEqual(stale, []);
  assert.ok(
    messages.some((m) => m.includes('skipped bench/results/tracing.json') && m.includes('no summary')),
    messages.join('\n'),
  );
});

test('a results file of a shape its summary does not know is reported and its rows left out', () => {
  const dir = copyOfCheckout();
  editJson(dir, 'server', (json) => {
    delete json.runs;
  });
  const { messages } = report(dir);
  assert.ok(
    messages.some((m) => m.startsWith('skipped bench/results/server.json: ')),
    messages.join('\n'),
  );
  assert.doesNotMatch(read(dir, 'README.md'), /\[W3\]/);
  assert.match(read(dir, 'README.md'), /\[W2\]/);
});

test('rows added to a results file that the report does not show are named, and the figures stay', () => {
  const dir = copyOfCheckout();
  editJson(dir, 'sqlite3', (json) => {
    json.servers.push({ ...json.servers[0], peer: 'typeorm+offloop' });
  });
  const { messages, stale } = report(dir, { check: true });
  assert.deepEqual(stale, []);
  assert.ok(
    messages.some((m) => m.includes('bench/results/sqlite3.json') && m.includes('typeorm+offloop')),
    messages.join('\n'),
  );
});

test('a file whose markers are missing fails the check and is not written', () => {
  const dir = copyOfCheckout();
  const file = path.join(dir, 'docs', 'performance.md');
  const text = fs.readFileSync(file, 'utf8').replace(/<!-- goals-table:end -->\n/, '');
  fs.writeFileSync(file, text);
  const { problems } = report(dir);
  assert.equal(problems.length, 1);
  assert.match(problems[0], /^docs\/performance\.md: needs one "<!-- goals-table:begin/);
  assert.equal(fs.readFileSync(file, 'utf8'), text);
});
