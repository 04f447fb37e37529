// The paged-restore benchmark's report: the Markdown (tables, method,
// goals with what explains each miss) and the Vega-Lite chart, drawn from
// the report object bench/paged.mjs saves. It measures nothing.

import { describeMachine } from './machine.mjs';
import { markdownTable } from './results.mjs';
import { percentile, round, sorted } from './stats.mjs';

const MiB = 1 << 20;
const fix = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '—');
const sizeLabel = (mib) => (mib >= 1024 ? `${mib / 1024} GiB` : `${mib} MiB`);
const mb = (bytes) => `${fix(bytes / 1e6, bytes < 1e7 ? 2 : 1)} MB`;
const kb = (bytes) => `${fix(bytes / 1e3, 0)} KB`;
const verdict = (pass) => (pass ? 'met' : '**not met**');

const median = (xs) => (xs.length === 0 ? NaN : percentile(sorted(xs), 0.5));

/** The successful runs of one kind at one size. */
const runsOf = (size, kind) => size.runs.filter((r) => r.kind === kind && !r.error);
const failuresOf = (size) => size.runs.filter((r) => r.error);

/** `{ median, min, max, n }` of numbers. */
function spreadOf(values) {
  const xs = values.filter(Number.isFinite);
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

/** `{ median, min, max, n }` of `pick` over `runs`. */
const spread = (runs, pick) => spreadOf(runs.map(pick));

/** "median (min–max)" or just the value for one run. */
function cell(s, d = 0, unit = '') {
  if (!(s.n > 0)) return '—';
  const m = `${fix(s.median, d)}${unit}`;
  return s.n === 1 ? m : `${m} (${fix(s.min, d)}–${fix(s.max, d)})`;
}

/** The run whose `pick` is the median (the lower middle one for an even count). */
function medianRun(runs, pick) {
  const ok = [...runs].filter((r) => Number.isFinite(pick(r))).sort((a, b) => pick(a) - pick(b));
  return ok[Math.floor((ok.length - 1) / 2)] ?? null;
}

/** Figures per size that the tables, the goals and the chart share. */
export function summarize(report) {
  return report.sizes.map((size) => {
    const paged = runsOf(size, 'paged');
    const restore = runsOf(size, 'restore');
    const litestream = runsOf(size, 'litestream');
    const openFull = runsOf(size, 'open-full');
    const mid = medianRun(paged, (r) => r.filledMs);
    return {
      size,
      paged,
      mid,
      open: spread(paged, (r) => r.openMs),
      first: spread(paged, (r) => r.firstResponseMs),
      firstAfterOpen: spread(paged, (r) => r.firstResponseAfterOpenMs),
      reads: spreadOf(paged.flatMap((r) => r.readsMs)),
      readsP90: percentile(sorted(paged.flatMap((r) => r.readsMs)), 0.9),
      filled: spread(paged, (r) => r.filledMs / 1000),
      filledRatio: spread(paged, (r) => r.overLinkLimit),
      openFull: spread(openFull, (r) => r.openMs / 1000),
      restore: spread(restore, (r) => r.seconds),
      restoreRatio: spread(restore, (r) => r.overLinkLimit),
      litestream: spread(litestream, (r) => r.seconds),
      litestreamRatio: spread(litestream, (r) => r.overLinkLimit),
      restoreMid: medianRun(restore, (r) => r.seconds),
      litestreamMid: medianRun(litestream, (r) => r.seconds),
      openFullMid: medianRun(openFull, (r) => r.openMs),
      identical: size.runs.filter((r) => !r.error).every((r) => r.identicalToSource),
    };
  });
}

// ---------------------------------------------------------------------------

function header(report) {
  const { machine: m, offloop: o, tools } = report;
  return [
    '## PR — paged restore',
    '',
    `Command: \`${report.command}\`${report.plan.quick ? ' --quick' : ''} (${report.date}), ${report.minutes} minutes in all.`,
    `Machine: ${describeMachine(m)}; CPU ${m.cpuBusyPercentBeforeStart ?? '?'}% busy just before the start; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}), Node ${m.nodes.host}; Litestream ${tools.litestream}, s3rver ${report.s3rver}.`,
    '',
  ];
}

function method(report) {
  const { plan, link } = report;
  return [
    '### Method',
    '',
    `- **The database**: a shop's \`orders\` table (\`bench/lib/orders.mjs\`): integer primary key, customer id, time, status, e-mail, street address, a JSON list of two line items and a 32-byte random payment token, about 230 bytes a row with the index \`orders(customer_id, created_at)\`; orders in id order, customers random. Pages of it compress to about 60 % with LZ4, so the replica is smaller than the database. Built with 4 KiB pages until the file reaches the size.`,
    `- **The replica**: offloop replicates the database once to s3rver on loopback (its first upload is a snapshot: the same image at L9 and L0), then makes ${plan.laterCommits} commits that each refund ${plan.rowsPerCommit} random orders and syncs after each: the replica holds one snapshot and ${plan.laterCommits} L0 files, and a restore reads the L9 snapshot and the ${plan.laterCommits} L0 files ("replica" below: their bytes). s3rver rather than moto: moto reads a whole object for every ranged GET.`,
    `- **The link** (\`bench/lib/link.mjs\`): an HTTP proxy on loopback in front of s3rver that starts every response ${link.latencyMs} ms after the request and passes every body byte through one token bucket of ${link.bytesPerSecond / 1e6} MB/s shared by all transfers. A fresh link for every measurement, its counters sampled every millisecond (\`bench/lib/link-timeline.mjs\`). **Link limit** = the replica's bytes / ${link.bytesPerSecond / 1e6} MB/s + ${link.latencyMs} ms: no restore through this link can be faster.`,
    `- **Paged** (\`bench/workloads/paged-open.mjs\`, a fresh process each time): the clock starts at the call to \`Database.open(out, { replica, restore: 'paged' })\`. **Open**: until it resolves. **First response**: until \`SELECT * FROM orders WHERE id = ?\` of a random order, issued as soon as the open resolved, returns it (also given from the open's end). Then ${plan.moreReads} more random orders, one at a time, while the fill runs ("reads during the fill"), then \`await db.filled\`: **every page local**. The replica options turn compaction off for the run (it would read the replica back); nothing is written.`,
    "- **Full**: `Database.restore(url, out)` in a fresh process (the call's time), `litestream restore -o out <url>` (spawn to exit) and `Database.open(out, { replica, restore: 'full' })` (the call's time), through the same link settings.",
    '- Each output file was compared with the source (sha256) and removed; after all runs the replica was listed again to check that nothing had been written to it.',
    `- **The OS page cache** was not dropped: it is the shared machine's, and dropping it needs root and disturbs everyone's work. Each measurement restores into a new file, removed afterwards, so no page of the restored database was ever in the cache on the restoring side; s3rver's object files were cached from their upload on, so the server read from memory.`,
    `- Rounds: paged ${plan.paged.join(', ')}; full restores ${plan.full.join(', ')}; \`restore: 'full'\` ${plan.openFull.join(', ')} (for ${plan.sizesMiB.map(sizeLabel).join(', ')}). Median, and (min–max) over the rounds. With two rounds the median is the faster one. A measurement during which other processes used over 15 % of the CPU was run again once.`,
    '',
  ];
}

function mainTable(rows) {
  const columns = [
    { title: 'Size', align: 'left' },
    { title: 'replica', align: 'right' },
    { title: 'link limit', align: 'right' },
    { title: 'paged: open', align: 'right' },
    { title: 'first response', align: 'right' },
    { title: '… after open', align: 'right' },
    { title: 'every page local', align: 'right' },
    { title: '× limit', align: 'right' },
    { title: "restore: 'full'", align: 'right' },
    { title: '`Database.restore`', align: 'right' },
    { title: '× limit', align: 'right' },
    { title: '`litestream restore`', align: 'right' },
    { title: '× limit', align: 'right' },
  ];
  const body = rows.map((s) => [
    `${sizeLabel(s.size.mib)} (${mb(s.size.bytes)})`,
    mb(s.size.planBytes),
    `${fix(s.size.linkLimitSeconds, 2)} s`,
    cell(s.open, 0, ' ms'),
    cell(s.first, 0, ' ms'),
    cell(s.firstAfterOpen, 0, ' ms'),
    cell(s.filled, 2, ' s'),
    `${fix(s.filledRatio.median, 2)}×`,
    cell(s.openFull, 2, ' s'),
    cell(s.restore, 2, ' s'),
    `${fix(s.restoreRatio.median, 2)}×`,
    cell(s.litestream, 2, ' s'),
    `${fix(s.litestreamRatio.median, 2)}×`,
  ]);
  return markdownTable(columns, body);
}

const roundsText = (rounds) => rounds.map((r) => `${r.requests}@${fix(r.atMs)}`).join(', ');

function openTable(rows) {
  const columns = [
    { title: 'Size', align: 'left' },
    { title: 'pages', align: 'right' },
    { title: 'requests before open', align: 'right' },
    { title: 'bytes before open', align: 'right' },
    { title: "of which offloop's ranged reads", align: 'right' },
    { title: 'pages local at open', align: 'right' },
    { title: 'requests by round (count@ms from the call)', align: 'left' },
    { title: 'then, to the first response', align: 'left' },
  ];
  const body = rows
    .filter((s) => s.mid)
    .map((s) => {
      const r = s.mid;
      return [
        sizeLabel(s.size.mib),
        fix(r.restore.atOpen.pagesTotal),
        fix(r.link.atOpen.requests),
        `${kb(r.link.atOpen.bytes)} (${fix((100 * r.link.atOpen.bytes) / s.size.planBytes, 2)} % of the replica)`,
        `${fix(r.restore.atOpen.requests)}, ${kb(r.restore.atOpen.bytesFetched)}`,
        fix(r.restore.atOpen.pagesLocal),
        roundsText(r.link.roundsBeforeOpen),
        roundsText(r.link.roundsToFirstResponse),
      ];
    });
  return markdownTable(columns, body);
}

function fillTable(rows) {
  const columns = [
    { title: 'Size', align: 'left' },
    { title: 'reads during the fill: median, p90, max', align: 'right' },
    { title: 'open → first fill byte … last byte → filled', align: 'right' },
    { title: 'link idle ≥ 25 ms', align: 'right' },
    { title: 'link at `db.filled`: requests, MB', align: 'right' },
    { title: '`stats().restore` at the end: requests, MB', align: 'right' },
    { title: 'offloop CPU during the fill', align: 'right' },
    { title: 'of which offloop-fill', align: 'right' },
    { title: 's3rver CPU', align: 'right' },
    { title: 'link CPU', align: 'right' },
    { title: 'other load', align: 'right' },
  ];
  const body = rows
    .filter((s) => s.mid)
    .map((s) => {
      const r = s.mid;
      const fillWall = (r.filledMs - r.openMs) / 1000;
      const fillCpu = r.offloopCpuSeconds.fill;
      return [
        sizeLabel(s.size.mib),
        `${fix(s.reads.median, 1)}, ${fix(s.readsP90, 0)}, ${fix(s.reads.max, 0)} ms`,
        `${fix(r.link.firstByteAfterOpenMs, 0)} ms … ${fix(r.filledMs - r.link.lastByteMs, 0)} ms`,
        `${r.link.idleDuringFill.count}, ${fix(r.link.idleDuringFill.totalMs)} ms in all`,
        `${fix(r.link.atFilled.requests)}, ${mb(r.link.atFilled.bytes)}`,
        `${fix(r.restore.atEnd.requests)}, ${mb(r.restore.atEnd.bytesFetched)}`,
        `${fix(fillCpu, 2)} s in ${fix(fillWall, 2)} s (${fix(fillCpu / fillWall, 2)} cores)`,
        `${fix((r.threadCpuMs['offloop-fill'] ?? NaN) / 1000, 2)} s`,
        `${fix(r.serverCpuSeconds, 2)} s`,
        `${fix(r.linkCpuSeconds, 2)} s`,
        `${r.otherLoadPercent ?? '?'} %`,
      ];
    });
  return markdownTable(columns, body);
}

function fullTable(rows) {
  const columns = [
    { title: 'Size', align: 'left' },
    { title: 'Restorer', align: 'left' },
    { title: 'seconds', align: 'right' },
    { title: 'requests', align: 'right' },
    { title: 'MB over the link', align: 'right' },
    { title: 'to first request', align: 'right' },
    { title: 'link idle ≥ 25 ms', align: 'right' },
    { title: 'after last byte', align: 'right' },
    { title: 'restorer CPU s', align: 'right' },
    { title: 's3rver CPU s', align: 'right' },
  ];
  const body = [];
  for (const s of rows) {
    for (const [label, r] of [
      ['`Database.restore`', s.restoreMid],
      ['`litestream restore`', s.litestreamMid],
      ["`restore: 'full'`", s.openFullMid],
    ]) {
      if (!r) continue;
      const open = r.kind === 'open-full';
      const seconds = open ? r.openMs / 1000 : r.seconds;
      const cpu = open ? r.offloopCpuSeconds.open : r.restorerCpuSeconds;
      const idle = open ? null : r.link.idle;
      body.push([
        sizeLabel(s.size.mib),
        label,
        fix(seconds, 2),
        fix(r.link.total.requests),
        mb(r.link.total.bytes),
        `${fix(r.link.firstRequestMs)} ms`,
        idle ? `${idle.count}, ${fix(idle.totalMs)} ms in all` : '—',
        open ? '—' : `${fix(r.link.afterLastByteMs)} ms`,
        fix(cpu, 2),
        fix(r.serverCpuSeconds, 2),
      ]);
    }
  }
  return markdownTable(columns, body);
}

// ---------------------------------------------------------------------------

function goals(report, rows) {
  const { goal, anchor } = report;
  const lines = ['### Against the goals', ''];
  const withPaged = rows.filter((s) => s.mid);
  const firstOk = withPaged.every((s) => s.first.median < goal.firstResponseMs);
  lines.push(
    `- First response under ${goal.firstResponseMs} ms at every size: ${verdict(firstOk && withPaged.length === rows.length)} — ${withPaged.map((s) => `${sizeLabel(s.size.mib)} ${fix(s.first.median)} ms`).join(', ')} (the seed: ${Object.entries(anchor.firstResponseMs).map(([mib, v]) => `${v} ms at ${sizeLabel(Number(mib))}`).join(', ')}).`,
  );
  if (withPaged.length > 1) {
    const [small, large] = [withPaged[0], withPaged[withPaged.length - 1]];
    const ratio = large.open.median / small.open.median;
    lines.push(
      `- Open time flat in the size (read here as: the largest size's open within ${goal.openFlatRatio}× of the smallest's): ${verdict(ratio <= goal.openFlatRatio)} — ${withPaged.map((s) => `${sizeLabel(s.size.mib)} ${fix(s.open.median)} ms`).join(', ')}: ${fix(ratio, 2)}× over ${fix(large.size.bytes / small.size.bytes, 0)}× the data.`,
    );
  }
  lines.push(
    `- Every page local within ${goal.filledOverLinkLimit}× of the link's limit (from the call to \`db.filled\`): ${verdict(withPaged.every((s) => s.filledRatio.median <= goal.filledOverLinkLimit))} — ${withPaged.map((s) => `${sizeLabel(s.size.mib)} ${fix(s.filledRatio.median, 2)}×`).join(', ')}.`,
  );
  const restored = rows.filter((s) => s.restore.n > 0);
  if (restored.length > 0) {
    lines.push(
      `- For comparison, the full restore (the seed: ${Object.entries(anchor.fullRestoreSeconds).map(([mib, v]) => `${v} s at ${sizeLabel(Number(mib))}`).join(', ')}): \`Database.restore\` ${restored.map((s) => `${sizeLabel(s.size.mib)} ${fix(s.restore.median, 2)} s (${fix(s.restoreRatio.median, 2)}×)`).join(', ')}; \`litestream restore\` ${restored.map((s) => `${fix(s.litestream.median, 2)} s (${fix(s.litestreamRatio.median, 2)}×)`).join(', ')}.`,
    );
  }
  const bad = rows.filter((s) => !s.identical).map((s) => sizeLabel(s.size.mib));
  const changed = rows.filter((s) => !s.size.replicaUnchanged).map((s) => sizeLabel(s.size.mib));
  const failed = rows.flatMap((s) => failuresOf(s.size).map((r) => `${sizeLabel(s.size.mib)} ${r.kind}: ${r.error.split('\n')[0]}`));
  lines.push(
    `- Every output identical to the source: ${bad.length === 0 ? 'yes' : `**no** at ${bad.join(', ')}`}; replica unchanged by the runs: ${changed.length === 0 ? 'yes' : `**no** at ${changed.join(', ')}`}${failed.length ? `; failed runs: ${failed.join('; ')}` : ''}.`,
  );
  const disturbed = rows.flatMap((s) => s.size.runs.filter((r) => !r.error && r.otherLoadPercent > 15).map((r) => `${sizeLabel(s.size.mib)} ${r.kind} (round ${r.round + 1}, ${r.otherLoadPercent} %)`));
  if (disturbed.length) lines.push(`- Runs during which other processes used over 15 % of the CPU even when run again (kept): ${disturbed.join(', ')}.`);
  lines.push('', ...explanations(rows), '');
  return lines;
}

/** What the runs say about where the time went, size by size (the median paged run). */
function explanations(rows) {
  const lines = ['What explains the times, from the paged run with the median time to every page local:', ''];
  for (const s of rows.filter((x) => x.mid)) {
    const r = s.mid;
    const limit = s.size.linkLimitSeconds;
    const fillSeconds = (r.filledMs - r.openMs) / 1000;
    const bytesAfterOpen = r.link.total.bytes - r.link.atOpen.bytes;
    const cpu = (x) => `${fix(x, 2)} s`;
    const before = r.link.roundsBeforeOpen.length;
    const toFirst = r.link.roundsToFirstResponse.length;
    // The bytes between one idle stretch and the next: a pause every so
    // many bytes is the fill's own doing, not the link's.
    const stretches = r.link.idleDuringFill.at ?? [];
    const spacing = median(stretches.slice(1).map((x, i) => x[2] - stretches[i][2]).filter((b) => b > 0));
    const every = stretches.length > 2 ? ` (after the first, one every ${mb(spacing)} of the fill, median)` : '';
    lines.push(
      `- ${sizeLabel(s.size.mib)}: the open took ${fix(r.openMs)} ms, ${before} rounds of requests one after another (${fix(r.openMs / before)} ms a round, ${fix((100 * r.openMs) / 1000 / limit)} % of the link limit); the first response ${fix(r.firstResponseAfterOpenMs)} ms more, ${toFirst} round${toFirst === 1 ? '' : 's'} of on-demand reads. ` +
        `From the open to every page local: ${fix(fillSeconds, 2)} s for ${mb(bytesAfterOpen)} (${fix(bytesAfterOpen / 1e6 / fillSeconds, 0)} MB/s; the link alone would take ${fix(bytesAfterOpen / 1e8 + 0.02, 2)} s), with the link idle ${fix(r.link.idleDuringFill.totalMs)} ms in ${r.link.idleDuringFill.count} stretches of 25 ms or more${every} and ${fix(r.filledMs - r.link.lastByteMs)} ms from the last byte to \`db.filled\`. ` +
        `CPU over the run (${fix(r.filledMs / 1000, 2)} s to every page local): offloop ${cpu(r.offloopCpuSeconds.total)}, the link ${cpu(r.linkCpuSeconds)}, s3rver ${cpu(r.serverCpuSeconds)}; other processes used ${r.otherLoadPercent ?? '?'} % of the machine's CPU.`,
    );
  }
  return lines;
}

export function markdown(report) {
  const rows = summarize(report);
  return [
    ...header(report),
    ...method(report),
    '### Results',
    '',
    mainTable(rows),
    '',
    '### What the open read, and when',
    '',
    'From the paged run with the median time to every page local. "Requests by round": requests that reached the link before the open resolved, grouped by arrival (a gap of 10 ms or more starts a new round); a round that needs the answer of the one before starts a request latency (20 ms) or more after it. "Bytes before open" counts every response body, listings included; offloop\'s own ranged reads are those `stats().restore` counted when the open resolved. "Then": the requests from the open resolving to the first response: the replicator\'s first contact with the replica (ten listings and a header, which the open no longer waits for) and the on-demand reads; the fill starts once that contact is done.',
    '',
    "When this benchmark was written, a proxy that logged each request's path and range showed what the rounds are, in order: the restore plan's ten level listings (10 requests); the header of the plan's last file and the last 32 KiB of every plan file (1 + 4); the rest of the snapshot's page index, when it is longer than 32 KiB (1, from about 4,000 pages on); page 1 and its read-ahead, which SQLite reads to open (1). The replicator's own ten listings (10) and its read of the newest file's header (1) follow once the open has resolved (until commit aaf405b the open waited for them: two more rounds, about 50 ms). The counts per round below match that order.",
    '',
    openTable(rows),
    '',
    '### During the fill',
    '',
    'From the same runs. "Reads during the fill": the ' +
      `${report.plan.moreReads} random orders read one at a time after the first response, over every paged run of the size. "Open → first fill byte": from the open resolving to the first response byte after it; "last byte → filled": from the last byte over the link to \`db.filled\` resolving (the final sync). "Link idle": stretches of 25 ms or more, from the first byte after the open to the last, in which no response byte moved. The link counts listings too; \`stats().restore\` counts offloop's ranged reads of LTX files. CPU: the offloop process from the open resolving to \`db.filled\` (\`process.cpuUsage()\`), its \`offloop-fill\` thread (schedstat), s3rver and the link (this benchmark's process) over the whole run; other load: CPU used by other processes on the machine during the run.`,
    '',
    fillTable(rows),
    '',
    '### Full restores',
    '',
    fullTable(rows),
    '',
    ...goals(report, rows),
  ].join('\n');
}

// ---------------------------------------------------------------------------
// Chart

export function chartSpec(report) {
  const rows = summarize(report).filter((s) => s.mid);
  const first = [];
  for (const s of rows) {
    first.push({ size: sizeLabel(s.size.mib), what: 'open resolved', ms: round(s.open.median, 0) });
    first.push({ size: sizeLabel(s.size.mib), what: 'first response', ms: round(s.first.median, 0) });
  }
  const seed = Object.entries(report.anchor.firstResponseMs)
    .filter(([mib]) => rows.some((s) => s.size.mib === Number(mib)))
    .map(([mib, v]) => ({ size: sizeLabel(Number(mib)), ms: v }));
  const whole = [];
  for (const s of rows) {
    const size = sizeLabel(s.size.mib);
    whole.push({ size, what: 'link limit', seconds: s.size.linkLimitSeconds });
    whole.push({ size, what: 'paged: every page local', seconds: round(s.filled.median, 3) });
    if (s.restore.n) whole.push({ size, what: 'Database.restore', seconds: round(s.restore.median, 3) });
    if (s.litestream.n) whole.push({ size, what: 'litestream restore', seconds: round(s.litestream.median, 3) });
  }
  const order = rows.map((s) => sizeLabel(s.size.mib));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'PR: opening a database from its replica through a 20 ms, 100 MB/s link',
      subtitle: [`${report.command} (${report.date}); medians`],
      anchor: 'start',
    },
    hconcat: [
      {
        title: { text: 'a. paged open (dashed: goal; cross: the seed)', fontSize: 12 },
        width: 260,
        height: 200,
        layer: [
          {
            data: { values: first },
            mark: 'bar',
            encoding: {
              x: { field: 'size', type: 'ordinal', sort: order, title: 'database size', axis: { labelAngle: 0 } },
              xOffset: { field: 'what', sort: ['open resolved', 'first response'] },
              y: { field: 'ms', type: 'quantitative', title: 'ms from the call to Database.open' },
              color: { field: 'what', type: 'nominal', title: null, sort: ['open resolved', 'first response'], legend: { orient: 'bottom' } },
            },
          },
          { data: { values: seed }, mark: { type: 'point', shape: 'cross', size: 80, color: '#333' }, encoding: { x: { field: 'size', type: 'ordinal', sort: order }, y: { field: 'ms', type: 'quantitative' } } },
          { data: { values: [{}] }, mark: { type: 'rule', strokeDash: [4, 3], color: '#c00' }, encoding: { y: { datum: report.goal.firstResponseMs } } },
        ],
      },
      {
        title: { text: 'b. until every page is local', fontSize: 12 },
        width: 260,
        height: 200,
        data: { values: whole },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'size', type: 'ordinal', sort: order, title: 'database size', axis: { labelAngle: 0 } },
          y: { field: 'seconds', type: 'quantitative', scale: { type: 'log' }, title: 'seconds (log scale)' },
          color: { field: 'what', type: 'nominal', title: null, legend: { orient: 'bottom', columns: 2 } },
          strokeDash: { condition: { test: "datum.what === 'link limit'", value: [4, 3] }, value: [1, 0] },
        },
      },
    ],
    resolve: { scale: { color: 'independent' } },
    config: { axis: { labelFontSize: 10, titleFontSize: 10 }, legend: { labelFontSize: 10, labelLimit: 200 } },
  };
}
