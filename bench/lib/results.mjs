// Writing results: JSON for machines, Markdown for people, both under
// bench/results/<name>.*. A Markdown file's "## History" section (what was
// tried, run by run, written by people) outlives the rewrite of the tables
// above it.

import fs from 'node:fs';
import path from 'node:path';

import { writeSvg } from './chart.mjs';
import { writeKeepingHistory } from './history.mjs';
import { RESULTS, repoRelative } from './paths.mjs';

/** The path of a results file, creating the folder if needed. */
export function resultPath(file) {
  fs.mkdirSync(RESULTS, { recursive: true });
  return path.join(RESULTS, file);
}

/** Writes `data` as pretty JSON; returns the path relative to the repo. */
export function writeJson(file, data) {
  const p = resultPath(file);
  fs.writeFileSync(p, `${JSON.stringify(data, null, 1)}\n`);
  return repoRelative(p);
}

/** Writes Markdown text, keeping the History of the file it replaces; returns the path relative to the repo. */
export function writeMarkdown(file, text) {
  const p = resultPath(file);
  writeKeepingHistory(p, text);
  return repoRelative(p);
}

/**
 * A Markdown table. `columns` are `{ title, align }` (`'left'` or
 * `'right'`); `rows` are arrays of cells, already formatted as strings.
 */
export function markdownTable(columns, rows) {
  const head = `| ${columns.map((c) => c.title).join(' | ')} |`;
  const rule = `|${columns.map((c) => (c.align === 'right' ? '---:' : ':---')).join('|')}|`;
  const body = rows.map((r) => `| ${r.join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

/**
 * Prints `text` and writes `<name>.json`, `<name>.md` and `<name>.svg` (the
 * Vega-Lite `spec` rendered); a partial run writes `*.tmp` files instead,
 * which git ignores.
 */
export async function publish(name, report, text, spec, partial) {
  console.log(text);
  const suffix = partial ? '.tmp' : '';
  const written = [writeJson(`${name}.json${suffix}`, report), writeMarkdown(`${name}.md${suffix}`, text)];
  const svg = resultPath(`${name}.svg${suffix}`);
  await writeSvg(svg, spec);
  written.push(repoRelative(svg));
  console.error(`wrote ${written.join(', ')}`);
}
