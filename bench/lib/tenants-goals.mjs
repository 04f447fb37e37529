// The many-databases benchmark's goals (issue 39's table, BENCH.md's
// TENANTS) and how a run is judged against them: offloop's runs at the
// default open-files limit, with Litestream's figure from the same run
// beside each. Pure functions of the report object bench/tenants.mjs saves:
// the benchmark's own Markdown and the generated results tables
// (bench/lib/report/) both read them. It imports nothing, so the report
// check runs without the bench package's dependencies.

/** The goals on a 2-vCPU machine; `atTenants` where the goal holds at one size. */
export const GOAL = {
  threads: { max: 32, atTenants: 10_000 },
  fds: { max: 1024 },
  rssKiBPerTenant: { max: 32, atTenants: 10_000 },
  rssKiBPerIdleTenant: { max: 16, atTenants: 100_000 },
  openMedianMs: { max: 2 },
  readP99Ms: { max: 10 },
  idleCpuPercent: { max: 2, atTenants: 10_000 },
  idleS3PerMinutePerTenant: { max: 0.1 },
};

export const fix = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '—');
export const n = (x) => fix(x, 0);
export const kib = (x) => (Number.isFinite(x) ? `${fix(x, x < 100 ? 1 : 0)} KiB` : '—');
export const msText = (x) => (Number.isFinite(x) ? `${fix(x, x < 10 ? 2 : x < 100 ? 1 : 0)} ms` : '—');
export const ok = (r) => r && !r.error && r.totals;

const REASONS = {
  fds: 'out of file descriptors',
  guard: "the benchmark's guard",
  sidecar: 'Litestream did not replicate them all',
  crash: 'the app process died',
  error: 'an open failed',
};

/** Why a run stopped short, in a few words. */
export const stopText = (run) => REASONS[run.stop.reason] ?? run.stop.reason;

/** "200 tenants", or "85 of 10,000 tenants, stopped: out of file descriptors". */
export function reachedText(run) {
  if (!run.stop) return `${n(run.tenantsReached)} tenants`;
  return `${n(run.tenantsReached)} of ${n(run.tenantsAsked)} tenants, stopped: ${stopText(run)}`;
}

const storeText = (run) => (run.store === 's3' ? 'S3' : 'folder');

/** offloop's runs at the limit the goals assume (the first run of each size), and Litestream's. */
function runsOf(report) {
  const runs = report.runs ?? [];
  return {
    offloop: runs.filter((r) => r.replicator === 'offloop' && r.fdLimitAsked === report.plan.fdLimit),
    peerOf: (run) => runs.find((r) => r.replicator === 'litestream' && r.store === run.store && r.tenantsAsked === run.tenantsAsked),
  };
}

/** The run a goal at `atTenants` tenants is read from: that size, else the largest folder run. */
function runAt(runs, atTenants) {
  const folder = runs.filter((r) => r.store === 'folder');
  return folder.find((r) => r.tenantsAsked === atTenants) ?? folder.sort((a, b) => b.tenantsAsked - a.tenantsAsked)[0];
}

/**
 * Met (true), missed (false) or not shown (null: the run stopped at no
 * figure over the goal, but short of the size the goal is about).
 */
function verdict(run, value, max, atTenants) {
  if (!ok(run) || !Number.isFinite(value)) return false;
  if (value > max) return false;
  if (run.stop) return false;
  if (atTenants && run.tenantsReached < atTenants) return null;
  return true;
}

/** Each goal with offloop's figure, Litestream's from the same run, and met / missed / not shown. */
export function goalResults(report) {
  const { offloop, peerOf } = runsOf(report);
  const goal = report.goal ?? GOAL;
  const out = [];
  const sized = (id, text, g, figure, format) => {
    const run = runAt(offloop, g.atTenants);
    if (!run) return out.push({ id, goal: text, result: 'not run', peer: '—', met: null });
    const value = ok(run) ? figure(run) : NaN;
    const peer = peerOf(run);
    out.push({
      id,
      goal: text,
      value,
      result: `${format(value)} at ${reachedText(run)}`,
      peer: ok(peer) ? `${format(figure(peer))} at ${reachedText(peer)}` : '—',
      met: verdict(run, value, g.max, g.atTenants),
    });
  };
  // Over every run at the default limit: the worst figure decides. A run
  // that stopped short shows nothing of the tenants it did not reach: the
  // goal is then missed only by the figure, or (`stopMisses`) by the stop.
  const worst = (id, text, g, figure, format, { runs = offloop, stopMisses = () => false } = {}) => {
    const measured = runs.filter(ok);
    if (measured.length === 0) return out.push({ id, goal: text, result: 'not run', peer: '—', met: runs.length ? false : null });
    const worstRun = measured.reduce((a, b) => (figure(b) > figure(a) ? b : a));
    const value = figure(worstRun);
    const peers = measured.map(peerOf).filter(ok);
    const peerWorst = peers.length ? Math.max(...peers.map(figure)) : NaN;
    const stopped = runs.filter((r) => r.stop || !ok(r));
    const stops = stopped.map((r) => (r.stop ? `${storeText(r)} at ${n(r.tenantsReached)} of ${n(r.tenantsAsked)} (${stopText(r)})` : `${storeText(r)} failed`));
    const missed = !Number.isFinite(value) || value > g.max || stopped.some((r) => !ok(r) || stopMisses(r));
    out.push({
      id,
      goal: text,
      value,
      result: `${format(value)} (${storeText(worstRun)}, ${n(worstRun.tenantsReached)} tenants)${stops.length ? `; stopped short: ${stops.join(', ')}` : ''}`,
      peer: peers.length ? format(peerWorst) : '—',
      met: missed ? false : stopped.length ? null : true,
    });
  };
  const tenantsAt = (x) => (x >= 100_000 ? `${x / 1000}k` : n(x));
  sized('threads', `threads in all with ${tenantsAt(goal.threads.atTenants)} open ≤ ${goal.threads.max}`, goal.threads, (r) => r.totals.idle.threads, n);
  worst('fds', `file descriptors in all ≤ ${n(goal.fds.max)}, at \`ulimit -n ${n(report.plan.fdLimit ?? goal.fds.max)}\``, goal.fds, (r) => Math.max(r.totals.open.fds, r.totals.idle.fds, r.totals.read.fds), n, {
    stopMisses: (r) => r.stop.reason === 'fds',
  });
  sized('rss', `RSS per tenant at ${tenantsAt(goal.rssKiBPerTenant.atTenants)} ≤ ${goal.rssKiBPerTenant.max} KiB`, goal.rssKiBPerTenant, (r) => r.perTenant.rssKiBAfterReads, kib);
  sized('rss-idle', `RSS per idle tenant at ${tenantsAt(goal.rssKiBPerIdleTenant.atTenants)} ≤ ${goal.rssKiBPerIdleTenant.max} KiB`, goal.rssKiBPerIdleTenant, (r) => r.perTenant.rssKiB, kib);
  worst('open', `\`Database.open\` median ≤ ${goal.openMedianMs.max} ms`, goal.openMedianMs, (r) => r.openMs.p50, msText);
  worst('read', `read p99 to a random tenant ≤ ${goal.readP99Ms.max} ms, 64 in flight, cold and warm`, goal.readP99Ms, (r) => Math.max(r.reads.cold.p99, r.reads.warm.p99), msText);
  sized('idle-cpu', `idle CPU at ${tenantsAt(goal.idleCpuPercent.atTenants)} ≤ ${goal.idleCpuPercent.max} % of a core`, goal.idleCpuPercent, (r) => r.idleCpuPercent, (x) => `${fix(x, 2)} %`);
  const s3 = offloop.filter((r) => r.store === 's3');
  worst('idle-s3', `idle S3 requests ≤ ${goal.idleS3PerMinutePerTenant.max} a minute per tenant`, goal.idleS3PerMinutePerTenant, (r) => r.s3?.perMinutePerTenant ?? NaN, (x) => fix(x, 2), { runs: s3 });
  return out;
}
