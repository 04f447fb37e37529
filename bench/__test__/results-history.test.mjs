// A benchmark rewrites its bench/results/<name>.md on every run; the
// "## History" section people keep at its end (what was tried, run by run)
// must survive that rewrite (bench/lib/history.mjs). Writes only into a
// temporary folder.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { withHistory, writeKeepingHistory } from '../lib/history.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-history-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test("a benchmark's new tables replace the old ones and the History after them is kept", () => {
  const previous = '## W9\n\nold table\n\n## History\n\n### 2026-12-01\n\ntried X\n';
  assert.equal(withHistory(previous, '## W9\n\nnew table'), '## W9\n\nnew table\n\n## History\n\n### 2026-12-01\n\ntried X\n');
});

test('a page with no History before is written as given', () => {
  assert.equal(withHistory(null, 'new'), 'new\n');
  assert.equal(withHistory('## W9\n\nold\n', 'new\n'), 'new\n');
});

test('writing over a results page keeps its History', () => {
  const file = path.join(dir, 'w9.md');
  fs.writeFileSync(file, '## W9\n\nold\n\n## History\n\nkept\n');
  writeKeepingHistory(file, '## W9\n\nnew\n');
  assert.equal(fs.readFileSync(file, 'utf8'), '## W9\n\nnew\n\n## History\n\nkept\n');
});
