// A reporter for `node --test` that prints, once the run ends, every test
// that failed (not the todo ones): its file, its name and the first lines
// of its error. `npm test` runs it beside the TAP reporter, so that the
// last lines of a long run's output say what failed without a search
// through thousands of lines. It prints nothing when nothing failed, and
// never changes what passes or fails.

const ERROR_LINES = 12;

/** The first lines of what a failed test threw, its cause's too. */
function describe(error) {
  let err = error;
  // The runner wraps a test's own error (code ERR_TEST_FAILURE) in `cause`.
  if (err?.code === 'ERR_TEST_FAILURE' && err.cause !== undefined) err = err.cause;
  const text = err instanceof Error ? err.stack ?? String(err) : String(err);
  return text.split('\n').slice(0, ERROR_LINES);
}

export default async function* failures(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.todo !== undefined && data.todo !== false) continue;
    if (data.skip !== undefined && data.skip !== false) continue;
    // A parent fails with its subtest: report the innermost only.
    if (data.details?.error?.failureType === 'subtestsFailed') continue;
    failed.push(data);
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed:\n`;
  for (const data of failed) {
    yield `# FAILED ${data.file ?? '?'}:${data.line ?? '?'} - ${data.name}\n`;
    for (const line of describe(data.details?.error)) yield `#   ${line}\n`;
  }
}
