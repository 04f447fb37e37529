// The replication benchmark's report: the Markdown (tables, method, goals
// with what explains each miss) and the Vega-Lite chart, drawn from the
// report object bench/replicate.mjs saves. It measures nothing.

import { describeMachine } from './machine.mjs';
import { markdownTable } from './results.mjs';
import { round } from './stats.mjs';

const MiB = 1 << 20;
const fix = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '—');
const size = (bytes) => (bytes >= 1024 * MiB ? `${round(bytes / (1024 * MiB), 2)} GiB` : `${Math.round(bytes / MiB)} MiB`);
const verdict = (pass) => (pass ? 'met' : '**not met**');

function header(report) {
  const { machine: m, offloop: o, tools } = report;
  const settings = report.insert?.modes.find((r) => r.settings)?.settings;
  return [
    '## REP — replication',
    '',
    `Command: \`${report.command}\`${report.plan.quick ? ' --quick' : ''} (${report.date}), ${report.minutes} minutes in all.`,
    `Machine: ${describeMachine(m)}; CPU ${m.cpuBusyPercentBeforeStart ?? '?'}% busy just before the start; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}), Node ${m.nodes.host}; Litestream ${tools.litestream}, moto ${tools.moto}, s3rver ${report.s3rver}.`,
    '',
    "Every database runs with offloop's defaults" +
      (settings ? ` (read back: journal_mode=${settings.journalMode}, synchronous=${settings.synchronous}, journal_size_limit ${settings.journalSizeLimit / MiB} MiB` : ' (journal_mode=WAL, synchronous=NORMAL') +
      ', the checkpointer on: a PASSIVE checkpoint from 1,000 WAL frames). offloop replicates with `syncInterval: 1000`; the Litestream sidecar runs `litestream replicate -config F` with `sync-interval: 1s` and its other defaults, beside an offloop that does not replicate (its checkpointer on, unless the row says off). The S3 server is moto on loopback, with no link in between for a and b.',
    '',
  ];
}

// ---------------------------------------------------------------------------
// a. Insert throughput

function insertSection(insert) {
  const columns = [
    { title: 'Mode', align: 'left' },
    { title: 'rows/s', align: 'right' },
    { title: 'vs off', align: 'right' },
    { title: 'p50 ms', align: 'right' },
    { title: 'p99 ms', align: 'right' },
    { title: 'p999 ms', align: 'right' },
    { title: 'CPU ms / 1,000 rows', align: 'right' },
    { title: 'of which replica threads', align: 'right' },
    { title: 'sidecar cores', align: 'right' },
    { title: 'moto cores', align: 'right' },
    { title: 'WAL at end', align: 'right' },
    { title: 'replica caught up in', align: 'right' },
  ];
  const rows = insert.modes.map((r) => [
    r.label,
    fix(r.rowsPerSecond),
    `${fix(r.ratioToOff, 2)}×`,
    fix(r.latencyMs.p50, 3),
    fix(r.latencyMs.p99, 2),
    fix(r.latencyMs.p999, 2),
    fix(r.cpuMsPerThousandRows, 0),
    r.mode.startsWith('offloop') ? fix(r.replicaThreadsCpuMsPerThousandRows, 1) : '—',
    r.sidecarCpuCores === null ? '—' : fix(r.sidecarCpuCores, 2),
    r.serverCpuCores === null ? '—' : fix(r.serverCpuCores, 2),
    `${fix(r.walMBAtEnd, 1)} MB`,
    r.drainMs === null ? '—' : `${fix(r.drainMs)} ms`,
  ]);
  const cpuColumns = [
    { title: 'Mode', align: 'left' },
    { title: 'offloop process', align: 'right' },
    { title: 'JS thread', align: 'right' },
    { title: 'writer', align: 'right' },
    { title: 'checkpointer', align: 'right' },
    { title: 'replica threads', align: 'right' },
    { title: 'writer µs / row', align: 'right' },
    { title: 'checkpoints', align: 'right' },
    { title: "writer's longest queue wait", align: 'right' },
  ];
  const cpuRows = insert.modes.map((r) => [
    r.label,
    fix(r.threadCores.process, 2),
    fix(r.threadCores.js, 2),
    fix(r.threadCores.writer, 2),
    fix(r.threadCores.checkpointer, 2),
    fix(r.threadCores.replica, 2),
    fix(r.writerUsPerRow, 1),
    fix(r.checkpointRuns),
    `${fix(r.writerWaitMaxMs)} ms`,
  ]);
  const rounds = insert.modes
    .map((r) => `${r.label}: ${r.rounds.map((x) => (x.error ? 'failed' : `${fix(x.rowsPerSecond)}${x.otherLoadPercent > 15 ? ` (other load ${x.otherLoadPercent}%)` : ''}`)).join(', ')}`)
    .join('; ');
  return [
    '### a. Insert throughput and latency',
    '',
    `${insert.callers} async callers each insert one row per awaited \`run()\` — \`INSERT INTO events(at, body) VALUES (?, ?)\`, an integer and 184 random bytes, about 200 bytes a row — back to back for ${insert.seconds} s after a 1 s warm-up, in a fresh process and database per run; ${insert.rounds} round(s), the modes in a rotating order, the median shown. A run during which other processes used over 15% of the CPU was run again (once).`,
    '',
    markdownTable(columns, rows),
    '',
    '- CPU per 1,000 rows: the offloop process, the Litestream sidecar and moto together, during the timed window. "Replica threads": offloop\'s `offloop-replicator` and `offloop-replica-io` threads.',
    "- WAL at end: the `-wal` file's size when the load stopped. Replica caught up in: `db.syncReplica()` (offloop) or `litestream sync -wait` (sidecar) right after the load stopped.",
    `- Rows/s of every round: ${rounds}.`,
    '',
    'Where the CPU went, in cores (CPU time over the timed window, from each thread\'s schedstat; the median of the rounds):',
    '',
    markdownTable(cpuColumns, cpuRows),
    '',
  ];
}

// ---------------------------------------------------------------------------
// b. Lag

function lagSection(lag) {
  const columns = [
    { title: 'Mode', align: 'left' },
    { title: 'commits', align: 'right' },
    { title: 'lag p50', align: 'right' },
    { title: 'p90', align: 'right' },
    { title: 'p99', align: 'right' },
    { title: 'max', align: 'right' },
    { title: 'never seen', align: 'right' },
    { title: 'files restored', align: 'right' },
    { title: 'listed every', align: 'right' },
    { title: 'from stats(): p50 / p99', align: 'right' },
    { title: 'other load', align: 'right' },
  ];
  const rows = lag.modes.map((r) =>
    r.error
      ? [r.label, `failed: ${r.error.split('\n')[0]}`, '', '', '', '', '', '', '', '', '']
      : [
          r.label,
          fix(r.commits),
          `${fix(r.lagMs.p50)} ms`,
          `${fix(r.lagMs.p90)} ms`,
          `${fix(r.lagMs.p99)} ms`,
          `${fix(r.lagMs.max)} ms`,
          fix(r.unseen),
          fix(r.filesRestored),
          `${r.watch.intervalMs} ms (+${fix(r.watch.listingMs.p50, 1)} ms)`,
          r.statsLagMs ? `${fix(r.statsLagMs.p50)} / ${fix(r.statsLagMs.p99)} ms` : '—',
          `${r.otherLoadPercent ?? '?'}%`,
        ],
  );
  const paced = lag.modes.filter((r) => !r.error).map((r) => `${r.label} ${fix(r.achievedRate)}/s (issued late by ${fix(r.issueLateMs.p99, 1)} ms at p99)`);
  const gaps = lag.modes.filter((r) => r.listingAfterStatsMs).map((r) => `${r.label} ${fix(r.listingAfterStatsMs.p50, 1)} ms (${fix(r.listingAfterStatsMs.min, 1)} to ${fix(r.listingAfterStatsMs.max, 1)})`);
  return [
    '### b. Replication lag at 1,000 commits/s',
    '',
    `One row per commit (the same ~200-byte rows), issued on a 1 ms schedule whatever the earlier commits are doing, for ${lag.warmupSeconds} s of warm-up and then ${lag.seconds} s measured; replicas sync every ${lag.syncIntervalMs} ms. **Lag** is the time from a commit's acknowledgement (its promise settling) until the replica holds it, measured from outside:`,
    '',
    '1. The writing process records when each commit (row id) was acknowledged.',
    '2. Meanwhile the benchmark lists the replica over and over — a folder with `readdir` every 5 ms, S3 with `ListObjectsV2` every 20 ms — and notes when each L0 file (TXID) first showed. That time is when the listing *answered*, so a file never looks earlier than it was; it can look late by one interval plus one listing.',
    '3. Afterwards each such TXID is restored (`Database.restore(url, { txid })`, which reads Litestream\'s replicas too) and its largest row id read: the commits that file made restorable.',
    '4. A commit\'s lag is the time the first file holding it showed, less its acknowledgement.',
    '',
    markdownTable(columns, rows),
    '',
    `- Achieved rates: ${paced.join('; ')}.`,
    '- "From stats()": the same commits timed by when `db.stats().replica.txid` (sampled about every millisecond in the writing process) first reached each file instead of by the listing: offloop\'s own account, which the outside view confirms.' +
      (gaps.length ? ` The listing saw each file this much after stats() did: ${gaps.join('; ')}.` : ''),
    '',
  ];
}

// ---------------------------------------------------------------------------
// c. Restore

/** The runs of one size, server and restorer, and the one with the median time. */
function restoreGroups(restore) {
  const groups = [];
  for (const bytesTarget of restore.sizes) {
    for (const server of ['moto', 's3rver']) {
      for (const restorer of ['offloop', 'litestream']) {
        const runs = restore.runs.filter((r) => r.server === server && r.restorer === restorer && Math.abs(r.bytes - bytesTarget) < bytesTarget * 0.05);
        if (runs.length === 0) continue;
        const ok = runs.filter((r) => !r.error).sort((a, b) => a.seconds - b.seconds);
        const mid = ok[Math.floor((ok.length - 1) / 2)] ?? null;
        groups.push({ bytesTarget, server, restorer, runs, mid, errors: runs.filter((r) => r.error) });
      }
    }
  }
  return groups;
}

function restoreSection(restore) {
  const columns = [
    { title: 'Size', align: 'left' },
    { title: 'Server', align: 'left' },
    { title: 'Restorer', align: 'left' },
    { title: 'seconds', align: 'right' },
    { title: 'MB/s', align: 'right' },
    { title: '× link limit', align: 'right' },
    { title: 'requests', align: 'right' },
    { title: 'MB over link', align: 'right' },
    { title: 'to first request', align: 'right' },
    { title: 'after last byte', align: 'right' },
    { title: 'restorer CPU s', align: 'right' },
    { title: 'server CPU s', align: 'right' },
    { title: 'output', align: 'left' },
  ];
  const rows = restoreGroups(restore).map(({ bytesTarget, server, restorer, runs, mid, errors }) => {
    const head = [size(bytesTarget), server, restorer === 'offloop' ? 'offloop `Database.restore`' : '`litestream restore`'];
    if (!mid) return [...head, `failed: ${errors[0].error.split('\n')[0]}`, '', '', '', '', '', '', '', '', ''];
    const all = runs.filter((r) => !r.error).map((r) => fix(r.seconds, 2));
    return [
      ...head,
      `${fix(mid.seconds, 2)}${all.length > 1 ? ` (${all.join(', ')})` : ''}`,
      fix(mid.megabytesPerSecond, 1),
      `${fix(mid.overLinkLimit, 2)}×`,
      Object.entries(mid.requests)
        .map(([m, n]) => `${n} ${m}`)
        .join(', '),
      fix(mid.bytesOverLink / 1e6, 1),
      `${fix(mid.beforeFirstRequestSeconds, 2)} s`,
      `${fix(mid.afterLastByteSeconds, 2)} s`,
      fix(mid.restorerCpuSeconds, 2),
      fix(mid.serverCpuSeconds, 2),
      runs.every((r) => r.error || r.identicalToSource) ? 'identical' : '**differs**',
    ];
  });
  const uploads = restore.uploads.map((u) => `${size(u.bytes)} to ${u.server} ${fix(u.uploadSeconds, 1)} s`).join(', ');
  return [
    `### c. Full restore through a simulated link (${restore.link.latencyMs} ms per request, one shared ${restore.link.bytesPerSecond / 1e6} MB/s)`,
    '',
    "Each database holds random 1000-byte blobs, four to a page, so LZ4 finds nothing to compress and the bytes over the link are the database's size. offloop replicates it once to each server (its first upload: one full snapshot, one LTX file) and both restorers read that replica through `bench/lib/link.mjs`: an HTTP proxy on loopback that holds every response 20 ms before it starts and passes every body byte, both ways, through one token bucket of 100 MB/s that all transfers share. **Link limit** = size / 100 MB/s + 20 ms. offloop's time is that of the `Database.restore` call in a child process; Litestream's from spawning `litestream restore` to its exit. Every output was compared with the source file (sha256).",
    '',
    '- moto answers every GET, a ranged one too, by reading the whole object first: each 8 MiB range offloop asks of a 1 GiB file costs moto about half a second of CPU ("server CPU s"). s3rver keeps objects in files and streams a range, as S3 does; the same restore from it shows what the restorer and the link do.',
    '- To first request / after last byte: from the start of the restore to its first request over the link, and from the last byte over the link to the end (decoding, writing and syncing what is not yet written).',
    `- Snapshot uploads (offloop, direct to the server, no link): ${uploads}.`,
    '',
    markdownTable(columns, rows),
    '',
  ];
}

// ---------------------------------------------------------------------------
// Goals

function goalsSection(report) {
  const lines = ['### Against the goals', ''];
  const { goal } = report;
  if (report.insert) {
    const modes = report.insert.modes;
    const off = modes.find((r) => r.mode === 'off');
    const mine = modes.filter((r) => r.mode.startsWith('offloop'));
    const side = modes.filter((r) => r.mode.startsWith('litestream'));
    const met = mine.every((r) => r.ratioToOff >= goal.throughputRatio);
    lines.push(
      `- Replication costs under ${Math.round((1 - goal.throughputRatio) * 100)}% of insert throughput (≥ ${goal.throughputRatio}× off): ${verdict(met)} — ${mine.map((r) => `${r.label} ${fix(r.ratioToOff, 2)}×`).join(', ')}; the Litestream sidecar ${side.map((r) => `${r.label.replace('Litestream sidecar ', '')} ${fix(r.ratioToOff, 2)}×`).join(', ')}.`,
    );
    const folder = mine.find((r) => r.mode === 'offloop-folder');
    if (!met && folder) {
      lines.push(
        `  What the figures show: the writer spends the same CPU per row (${fix(off.writerUsPerRow, 1)} µs off, ${fix(folder.writerUsPerRow, 1)} µs replicating to a folder) but is busy less of the time (${fix(off.threadCores.writer, 2)} → ${fix(folder.threadCores.writer, 2)} cores). Replication adds ${fix(folder.cpuMsPerThousandRows - off.cpuMsPerThousandRows, 0)} ms of CPU per 1,000 rows — ${fix(folder.replicaThreadsCpuMsPerThousandRows, 1)} ms in the replica threads, most of the rest in the checkpointer (${fix(off.threadCores.checkpointer, 2)} → ${fix(folder.threadCores.checkpointer, 2)} cores, in ${fix(folder.checkpointRuns)} passes instead of ${fix(off.checkpointRuns)}) — on a 2-core machine where the loop alone keeps ${fix(off.threadCores.process, 2)} cores busy, and the writer's longest wait in its queue grows from ${fix(off.writerWaitMaxMs)} to ${fix(folder.writerWaitMaxMs)} ms.`,
      );
    }
  }
  if (report.lag) {
    const ok = report.lag.modes.filter((r) => !r.error);
    const mine = ok.filter((r) => r.mode.startsWith('offloop'));
    lines.push(
      `- Lag p99 under ${fix(goal.lagP99Ms)} ms: ${verdict(mine.length > 0 && mine.every((r) => r.lagMs.p99 < goal.lagP99Ms && r.unseen === 0))} — ${ok.map((r) => `${r.label} ${fix(r.lagMs.p99)} ms`).join(', ')}.`,
    );
  }
  if (report.restore) {
    const groups = restoreGroups(report.restore).filter((g) => g.mid && g.restorer === 'offloop');
    lines.push(
      `- offloop's full restore within ${goal.restoreOverLinkLimit}× of the link's limit: ${groups.map((g) => `${size(g.bytesTarget)} from ${g.server} ${fix(g.mid.overLinkLimit, 2)}× (${verdict(g.mid.overLinkLimit <= goal.restoreOverLinkLimit)})`).join(', ')}.`,
    );
    for (const g of groups.filter((x) => x.mid.overLinkLimit > goal.restoreOverLinkLimit)) {
      const m = g.mid;
      const why =
        m.serverCpuSeconds > m.seconds / 2
          ? `${g.server} used ${fix(m.serverCpuSeconds, 1)} s of CPU in the ${fix(m.seconds, 1)} s restore, answering ${Object.values(m.requests).reduce((a, b) => a + b, 0)} requests: its ranged GETs each read the whole object`
          : `the last byte crossed the link ${fix(m.afterLastByteSeconds, 2)} s before the end (the file is decoded, written and synced only once all of it has arrived), and before the file's own requests comes a listing round trip the limit does not count`;
      lines.push(`  ${size(g.bytesTarget)} from ${g.server}: ${why}; offloop's restore used ${fix(m.restorerCpuSeconds, 2)} s of CPU.`);
    }
  }
  lines.push('');
  return lines;
}

function memorySection(memory, goal) {
  const what = {
    snapshot: 'first sync: full image and L9 snapshot staged and uploaded',
    compact: 'L1 compaction over the full image',
    restore: '`Database.restore`',
    paged: "paged restore, open to `filled`",
  };
  const limit = goal.memoryGrowthMiB ?? 64;
  const rows = memory.runs.map(
    (r) =>
      `| ${what[r.phase] ?? r.phase} | ${r.store ?? 'folder'} | ${r.idleMiB} | ${r.peakMiB} | **${r.growthMiB}** | ${r.growthMiB < limit ? 'met' : 'missed'} |`,
  );
  return [
    `### d. Memory on a ${size(memory.bytes)} database`,
    '',
    'Each operation runs in a fresh child process, on a folder replica and the first sync also to S3 (moto): resident memory once the addon is loaded (at rest), the peak during the operation (VmHWM, reset at rest), and the growth. Goal: under ' +
      `${limit} MiB of growth whatever the database's size.`,
    '',
    '| operation | replica | at rest (MiB) | peak (MiB) | growth (MiB) | goal |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ];
}

export function markdown(report) {
  return [
    ...header(report),
    ...(report.insert ? insertSection(report.insert) : []),
    ...(report.lag ? lagSection(report.lag) : []),
    ...(report.restore ? restoreSection(report.restore) : []),
    ...(report.memory ? memorySection(report.memory, report.goal) : []),
    ...goalsSection(report),
  ].join('\n');
}

// ---------------------------------------------------------------------------
// Chart

/** A mode's label short enough for an axis. */
const shortLabel = (label) => label.replace('Litestream sidecar', 'Litestream').replace(", offloop's checkpointer off", ', ckpt off');

export function chartSpec(report) {
  const panels = [];
  if (report.insert) {
    panels.push({
      title: { text: 'a. inserts per second (8 callers)', fontSize: 12 },
      width: 230,
      height: 170,
      data: { values: report.insert.modes.map((r) => ({ mode: shortLabel(r.label), rows: r.rowsPerSecond, replicator: r.mode.split('-')[0] })) },
      layer: [
        {
          mark: 'bar',
          encoding: {
            y: { field: 'mode', type: 'nominal', sort: null, title: null },
            x: { field: 'rows', type: 'quantitative', title: 'rows/s' },
            color: { field: 'replicator', type: 'nominal', legend: null },
          },
        },
        {
          mark: { type: 'rule', strokeDash: [4, 3], color: '#c00' },
          encoding: { x: { datum: round(report.insert.modes.find((r) => r.mode === 'off').rowsPerSecond * report.goal.throughputRatio, 0) } },
        },
      ],
    });
  }
  if (report.lag) {
    const values = [];
    for (const r of report.lag.modes.filter((x) => !x.error)) {
      r.lagMs.quantiles.forEach((ms, q) => values.push({ mode: shortLabel(r.label), q, ms }));
    }
    panels.push({
      title: { text: 'b. lag at 1,000 commits/s: share of commits within', fontSize: 12 },
      width: 230,
      height: 170,
      data: { values },
      layer: [
        {
          mark: { type: 'line', interpolate: 'monotone' },
          encoding: {
            x: { field: 'ms', type: 'quantitative', title: 'ms after acknowledgement' },
            y: { field: 'q', type: 'quantitative', title: '% of commits in the replica' },
            color: { field: 'mode', type: 'nominal', title: null, legend: { orient: 'bottom', columns: 1 } },
          },
        },
        { mark: { type: 'rule', strokeDash: [4, 3], color: '#c00' }, encoding: { x: { datum: report.goal.lagP99Ms } } },
      ],
    });
  }
  if (report.restore) {
    const values = restoreGroups(report.restore)
      .filter((g) => g.mid)
      .map((g) => ({ case: `${size(g.bytesTarget)}, ${g.server}`, restorer: g.restorer, ratio: g.mid.overLinkLimit }));
    panels.push({
      title: { text: 'c. full restore, × the link\'s limit', fontSize: 12 },
      width: 230,
      height: 170,
      data: { values },
      layer: [
        {
          mark: 'bar',
          encoding: {
            y: { field: 'case', type: 'nominal', sort: null, title: null },
            yOffset: { field: 'restorer' },
            x: { field: 'ratio', type: 'quantitative', title: 'time / (size ÷ 100 MB/s + 20 ms)' },
            color: { field: 'restorer', type: 'nominal', title: null, legend: { orient: 'bottom' } },
          },
        },
        { mark: { type: 'rule', strokeDash: [4, 3], color: '#c00' }, encoding: { x: { datum: report.goal.restoreOverLinkLimit } } },
      ],
    });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'REP: replication with offloop and with a Litestream sidecar',
      subtitle: [`${report.command} (${report.date}); dashed: the goals`],
      anchor: 'start',
    },
    hconcat: panels,
    resolve: { scale: { color: 'independent' } },
    config: { axis: { labelFontSize: 10, titleFontSize: 10, labelLimit: 200 }, legend: { labelFontSize: 10, labelLimit: 200 } },
  };
}
