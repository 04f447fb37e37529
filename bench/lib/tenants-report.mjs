// The many-databases benchmark's report (bench/tenants.mjs): the Markdown
// (the goals, as tenants-goals.mjs judges them, then every run's figures)
// and the Vega-Lite chart, drawn from the report object the benchmark
// saves. It measures nothing.

import { labelledBars } from './chart.mjs';
import { describeMachine } from './machine.mjs';
import { markdownTable } from './results.mjs';
import { round } from './stats.mjs';
import { fix, goalResults, kib, msText, n, ok, reachedText } from './tenants-goals.mjs';

const metText = (met) => (met === true ? 'met' : met === false ? '**missed**' : 'not shown at that size');

function header(report) {
  const { machine: m, offloop: o, tools, plan } = report;
  const limit = plan.fdLimit === null ? 'the limit it was given' : `\`ulimit -n ${n(plan.fdLimit)}\` (soft and hard: Node raises its soft limit to the hard one at start)`;
  return [
    '## TENANTS — many databases',
    '',
    `Command: \`${report.command}${plan.quick ? ' --quick' : ''}\` (${report.date}), ${report.minutes} minutes in all.`,
    `Machine: ${describeMachine(m)}; CPU ${m.cpuBusyPercentBeforeStart ?? '?'}% busy just before the start; load average ${m.loadAverageAtStart.join(' ')} at the start, ${m.loadAverageAtEnd?.join(' ') ?? '?'} at the end.`,
    `offloop ${o.version} at ${o.commit}${o.uncommittedChanges ? ' with uncommitted changes' : ''} (addon sha256 ${o.addonSha256}), Node ${m.nodes.host}; Litestream ${tools.litestream}, moto ${tools.moto}, better-sqlite3 ${tools.betterSqlite3}.`,
    '',
    `Every tenant is a copy of one small database (WAL, one table of 10 rows of about 100 bytes). **offloop**: one process opens every tenant with \`Database.open(file, { replica })\` (a folder of its own, or a prefix in one S3 bucket; the defaults otherwise) and keeps it open, under ${limit}; a run that runs out of descriptors there is run again with the limit this benchmark was given (${n(plan.raisedFdLimit)}). **Litestream**: \`litestream replicate\` with \`dbs: - dir:\` over the tenants' folder, beside an app on better-sqlite3 (the same limit) that keeps its ${plan.peerCache} most recently used handles open and opens the others on demand; its figures are the two processes together. Each configuration runs alone, in a fresh process, on fresh copies.`,
    '',
    ...(plan.quick
      ? [
          `**A --quick run**: ${n(plan.sizes[0])} tenants in folders and ${n(plan.s3Tenants)} on S3, idle windows of ${plan.idleS} s and ${plan.s3IdleS} s. The S3 window starts ${plan.s3SettleS} s after the first uploads, before either replicator's first compaction (30 s): its requests are not yet an idle tenant's. The goals at 10,000 and 100,000 tenants are judged only where a smaller run already misses them.`,
          '',
        ]
      : []),
    `Per tenant: the growth over the app's own process before it opened anything (Litestream counted whole), after the idle window, divided by the tenants held: those the app opened (Litestream watches each of them, replicated or not). Reached: those open and replicated. Open: the time of each \`Database.open\` (offloop) or \`new Database(file)\` (better-sqlite3), one at a time. Reads: \`SELECT v FROM t WHERE id = ?\` of a random tenant, ${plan.inFlight} in flight, ${n(plan.reads)} of them; cold: each tenant untouched since it was opened, read once; warm: ${plan.inFlight} tenants read just before. better-sqlite3's calls are synchronous: a read waits for its turn on the event loop, as a request does in a server. Idle CPU: both processes' CPU time over ${plan.idleS} s (folder) while nothing is asked, from ${plan.settleS} s after every tenant's first upload (offloop's tenants come to rest 30 s after their last call), in % of one core. S3: requests through a counting proxy in front of moto, over ${plan.s3IdleS} s from ${plan.s3SettleS} s after every tenant's first upload. Opening stops at a failure, at ${n(plan.maxThreads)} threads, or (Litestream) at ${n(plan.maxSidecarRssMiB)} MiB resident: guards for a shared machine.`,
    '',
  ];
}

function goalsSection(report) {
  const goals = report.goals ?? goalResults(report);
  const columns = [
    { title: 'Goal', align: 'left' },
    { title: 'offloop', align: 'left' },
    { title: 'Litestream, same run', align: 'left' },
    { title: 'Met', align: 'left' },
  ];
  return [
    `### Goals (offloop at \`ulimit -n ${n(report.plan.fdLimit)}\`)`,
    '',
    markdownTable(columns, goals.map((g) => [g.goal, g.result, g.peer, metText(g.met)])),
    '',
    'The single-database figures (RT, W2, W3) are the other benchmarks\' to hold; "not shown at that size": the run met the goal with fewer tenants than the goal is about.',
    '',
  ];
}

function footprintSection(runs) {
  const columns = [
    { title: 'Configuration', align: 'left' },
    { title: 'Tenants', align: 'left' },
    { title: 'ulimit -n (app / Litestream)', align: 'right' },
    { title: 'threads', align: 'right' },
    { title: 'fds', align: 'right' },
    { title: 'RSS', align: 'right' },
    { title: 'threads / tenant', align: 'right' },
    { title: 'fds / tenant', align: 'right' },
    { title: 'RSS / idle tenant', align: 'right' },
    { title: 'RSS / tenant after reads', align: 'right' },
  ];
  const limit = (l) => (l ? n(l.hard) : '—');
  const rows = runs.map((r) =>
    ok(r)
      ? [
          r.label,
          reachedText(r),
          `${limit(r.limits)}${r.sidecarLimits ? ` / ${limit(r.sidecarLimits)}` : ''}`,
          n(r.totals.idle.threads),
          n(r.totals.idle.fds),
          `${fix(r.totals.idle.rssKiB / 1024, 0)} MiB`,
          fix(r.perTenant.threads, 2),
          fix(r.perTenant.fds, 2),
          kib(r.perTenant.rssKiB),
          kib(r.perTenant.rssKiBAfterReads),
        ]
      : [r.label, reachedText(r), '—', '—', '—', '—', '—', '—', '—', '—'],
  );
  return ['### Threads, files and memory', '', markdownTable(columns, rows), ''];
}

function timeSection(runs) {
  const columns = [
    { title: 'Configuration', align: 'left' },
    { title: 'open p50 / p99', align: 'right' },
    { title: 'cold read p50 / p99', align: 'right' },
    { title: 'warm read p50 / p99', align: 'right' },
    { title: 'read errors', align: 'right' },
    { title: 'idle CPU, % of a core', align: 'right' },
    { title: 'S3 requests / min / idle tenant', align: 'right' },
  ];
  const pair = (q) => (q ? `${msText(q.p50)} / ${msText(q.p99)}` : '—');
  const rows = runs
    .filter(ok)
    .map((r) => [
      r.label,
      pair(r.openMs),
      pair(r.reads.cold),
      pair(r.reads.warm),
      n(r.reads.cold.errors + r.reads.warm.errors),
      fix(r.idleCpuPercent, 2),
      r.s3 ? fix(r.s3.perMinutePerTenant, 2) : '—',
    ]);
  return ['### Open, reads and idle cost', '', markdownTable(columns, rows), ''];
}

/** offloop's per-tenant figures over Litestream's, for each offloop run that has a peer. */
function ratioSection(report) {
  const runs = report.runs.filter(ok);
  const pairs = runs
    .filter((r) => r.replicator === 'offloop')
    .map((r) => [r, runs.find((p) => p.replicator === 'litestream' && p.store === r.store && p.tenantsAsked === r.tenantsAsked)])
    .filter(([, p]) => p);
  if (pairs.length === 0) return [];
  const x = (a, b) => (Number.isFinite(a / b) && b !== 0 ? `${fix(a / b, 2)}×` : '—');
  const perTenantCpu = (r) => r.idleCpuPercent / r.tenantsHeld;
  const columns = ['offloop run', 'threads / tenant', 'fds / tenant', 'RSS / idle tenant', 'open p50', 'cold read p99', 'warm read p99', 'idle CPU / tenant', 'S3 / idle tenant'].map(
    (title, i) => ({ title, align: i === 0 ? 'left' : 'right' }),
  );
  const rows = pairs.map(([o, p]) => [
    o.label,
    x(o.perTenant.threads, p.perTenant.threads),
    x(o.perTenant.fds, p.perTenant.fds),
    x(o.perTenant.rssKiB, p.perTenant.rssKiB),
    x(o.openMs.p50, p.openMs.p50),
    x(o.reads.cold.p99, p.reads.cold.p99),
    x(o.reads.warm.p99, p.reads.warm.p99),
    x(perTenantCpu(o), perTenantCpu(p)),
    o.s3 && p.s3 ? x(o.s3.perMinutePerTenant, p.s3.perMinutePerTenant) : '—',
  ]);
  return ['### offloop over Litestream (same store and size; below 1× is offloop ahead)', '', markdownTable(columns, rows), ''];
}

function notesSection(runs) {
  const lines = [];
  for (const r of runs) {
    if (r.error) lines.push(`- ${r.label}: failed: ${r.error}`);
    else if (r.stop) lines.push(`- ${r.label}: stopped at ${n(r.tenantsReached)} of ${n(r.tenantsAsked)}: ${r.stop.message.replace(/\s+/g, ' ').slice(0, 600)}`);
    if (r.s3) lines.push(`- ${r.label}: S3 requests in ${fix(r.s3.idleSeconds, 0)} s idle: ${Object.entries(r.s3.requests).map(([k, v]) => `${k} ${n(v)}`).join(', ') || 'none'}.`);
    if (r.firstSync?.errors) lines.push(`- ${r.label}: ${n(r.firstSync.errors)} of ${n(r.tenantsReached)} replicas failed their first sync: ${r.firstSync.firstError}`);
    if (r.replicator === 'offloop' && r.engineStats) lines.push(`- ${r.label}: \`Database.stats()\` with every tenant open: \`${JSON.stringify(r.engineStats).slice(0, 400)}\``);
    if (r.close) lines.push(`- ${r.label}: closing every tenant took ${msText(r.close.ms)}; a second later ${n(r.close.threadsLeft)} threads and ${n(r.close.fdsLeft)} fds were left over the baseline.`);
  }
  return lines.length ? ['### Notes', '', ...lines, ''] : [];
}

export function markdown(report) {
  const runs = report.runs ?? [];
  return [...header(report), ...goalsSection(report), ...footprintSection(runs), ...timeSection(runs), ...ratioSection(report), ...notesSection(runs)].join('\n');
}

/** Short labels for the chart. */
const shortLabel = (r) => `${r.replicator} ${r.store} ${n(r.tenantsReached)}/${n(r.tenantsAsked)}${r.replicator === 'offloop' ? ` fd ${r.fdLimitAsked ?? 'raised'}` : ''}`;

export function chartSpec(report) {
  const runs = (report.runs ?? []).filter(ok);
  const labels = runs.map(shortLabel);
  const values = runs.flatMap((r) => [
    { label: shortLabel(r), metric: 'threads per tenant', value: r.perTenant.threads },
    { label: shortLabel(r), metric: 'file descriptors per tenant', value: r.perTenant.fds },
    { label: shortLabel(r), metric: 'RSS per idle tenant (KiB)', value: round(r.perTenant.rssKiB, 1) },
    { label: shortLabel(r), metric: 'cold read p99 (ms), 64 in flight', value: round(r.reads.cold.p99, 1) },
  ]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'TENANTS: what a database per tenant costs (offloop against Litestream directory mode)',
    data: { values },
    concat: [
      labelledBars('threads per tenant', '.2f', labels),
      labelledBars('file descriptors per tenant', '.2f', labels),
      labelledBars('RSS per idle tenant (KiB)', '.0f', labels),
      labelledBars('cold read p99 (ms), 64 in flight', '.1f', labels),
    ],
    columns: 2,
  };
}
