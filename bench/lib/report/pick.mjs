// Finding the rows a summary needs in a results file: shared by the
// summaries (summaries.mjs and the ones in files of their own, which
// summaries.mjs imports). Throws, naming what is missing, so that a
// results file of another shape is reported and skipped.

/** The one element of `list` that `pred` accepts; throws naming `what` if none does. */
export function one(list, pred, what) {
  const found = (list ?? []).find(pred);
  if (found === undefined) throw new Error(`no ${what}`);
  return found;
}
