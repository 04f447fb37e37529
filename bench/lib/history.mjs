// The "## History" section of a benchmark's results page
// (bench/results/<name>.md): what was tried, run by run, written by people
// below the tables the benchmark writes. A benchmark rewrites its page on
// every run; this file makes the History outlive that rewrite. It never
// reads or changes the tables above the History.

import fs from 'node:fs';

/** The heading that starts the section a rewrite keeps. */
export const HISTORY_HEADING = '## History';

/**
 * `next` (a benchmark's new Markdown) followed by the History section of
 * `previous` (the text it replaces), if `previous` has one and `next` has
 * none of its own.
 */
export function withHistory(previous, next) {
  const body = next.endsWith('\n') ? next : `${next}\n`;
  const historyAt = (text) => text.search(new RegExp(`^${HISTORY_HEADING}$`, 'm'));
  if (previous === null || historyAt(previous) < 0 || historyAt(body) >= 0) return body;
  return `${body}\n${previous.slice(historyAt(previous))}`;
}

/** Writes `text` to `file`, keeping the History of the text it replaces. */
export function writeKeepingHistory(file, text) {
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  fs.writeFileSync(file, withHistory(previous, text));
}
