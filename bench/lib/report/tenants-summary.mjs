// What the generated results tables say about TENANTS (bench/tenants.mjs),
// read from bench/results/tenants.json: offloop's per-tenant cost, open and
// read times and idle cost beside Litestream's from the same run, and the
// goals as bench/lib/tenants-goals.mjs judges them. Like every summary, it
// reads no file and formats no table; a results file of another shape
// makes it throw.

import { goalResults, kib, msText, n, ok, reachedText } from '../tenants-goals.mjs';

const WHY = 'bench/README.md#tenants--many-databases';

export function tenants(r) {
  if (!Array.isArray(r.runs) || !r.plan) throw new Error('no runs');
  const folder = r.runs.filter((x) => x.store === 'folder' && ok(x));
  // The largest size both measured (a run stopped short still has its
  // figures; one stopped before any has none, as Litestream's at 100,000).
  const at = (replicator, size) =>
    folder.find((x) => x.replicator === replicator && x.tenantsAsked === size && (replicator !== 'offloop' || x.fdLimitAsked === r.plan.fdLimit));
  const largest = Math.max(...folder.map((x) => x.tenantsAsked).filter((size) => at('offloop', size) && at('litestream', size)));
  const [o, p] = [at('offloop', largest), at('litestream', largest)];
  if (!o || !p) throw new Error('no offloop and Litestream folder runs of the same size');
  // Both apps start at the default limit (offloop may have a second, raised run).
  const s3 = (replicator) => r.runs.find((x) => x.store === 's3' && x.replicator === replicator && x.fdLimitAsked === r.plan.fdLimit && ok(x));
  const footprint = (x) => `${x.perTenant.threads.toFixed(2)} / ${x.perTenant.fds.toFixed(2)} / ${kib(x.perTenant.rssKiB)}`;
  const times = (x) => `${msText(x.openMs.p50)}; ${msText(x.reads.cold.p99)} / ${msText(x.reads.warm.p99)}`;
  const idle = (x, s3Run) => `${x.idleCpuPercent.toFixed(2)} %; ${s3Run?.s3 ? s3Run.s3.perMinutePerTenant.toFixed(2) : '—'}`;
  const limit = `\`ulimit -n ${n(r.plan.fdLimit)}\``;
  return {
    rows: [
      {
        measure: `[TENANTS](${WHY}): per tenant with a folder replica, asked for ${n(largest)} at ${limit}: threads / fds / RSS`,
        offloop: `${footprint(o)} at ${reachedText(o)}`,
        peer: `Litestream + better-sqlite3 ${footprint(p)} at ${reachedText(p)}`,
      },
      {
        measure: `[TENANTS](${WHY}): open median; read p99 to a random tenant, 64 in flight, cold / warm`,
        offloop: times(o),
        peer: `Litestream + better-sqlite3 ${times(p)}`,
      },
      {
        measure: `[TENANTS](${WHY}): idle CPU, % of a core; S3 requests a minute per idle tenant (${n(r.plan.s3Tenants)} tenants)`,
        offloop: idle(o, s3('offloop')),
        peer: `Litestream + better-sqlite3 ${idle(p, s3('litestream'))}`,
      },
    ],
    goals: goalResults(r).map((g) => ({
      goal: g.goal,
      // Met where the run reached, but not shown where the goal is about: not met here.
      result: g.met === null ? `not shown at the size it is about: ${g.result}` : g.result,
      met: g.met === true,
      why: WHY,
    })),
  };
}
