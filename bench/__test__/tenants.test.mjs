// The many-databases benchmark (bench/tenants.mjs), run end to end with a
// handful of tenants: every configuration reports its figures in the shape
// the report reads, an app that runs out of file descriptors under a small
// `ulimit -n` is recorded as stopped (and offloop run again with the limit
// raised) rather than crashing the benchmark, and the results name no path
// of this machine. It asserts no timing. It needs the bench package's
// dependencies, Litestream and moto; without them it is skipped.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { skipWithout } from '../../__test__/replication/helpers.mjs';
import { tenants } from '../lib/report/tenants-summary.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BENCH_DEPS = ['better-sqlite3', 'vega', 'vega-lite'];
const missingDeps = BENCH_DEPS.filter((name) => !fs.existsSync(path.join(ROOT, 'bench', 'node_modules', name, 'package.json')));
const skip = missingDeps.length ? `the bench package is not installed (npm install --prefix bench): ${missingDeps.join(', ')}` : skipWithout('litestream', 'moto_server');

/** Low enough that offloop's app runs out of descriptors within a few tenants: the cap on connections never goes below 16, which need more than this. */
const FD_LIMIT = 64;
const TENANTS = 6;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-tenants-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let ran = null;
/** Runs the benchmark once (the tests share it) and returns its report and stdout. */
function run() {
  if (ran) return ran;
  const out = path.join(dir, 'tenants.json');
  const args = ['--tenants', String(TENANTS), '--s3-tenants', '3', '--idle-s', '1', '--settle-s', '1', '--reads', '20'];
  args.push('--fd-limit', String(FD_LIMIT), '--max-load', '1000', '--json', out);
  const child = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'tenants.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
  assert.equal(child.status, 0, child.stderr);
  ran = { report: JSON.parse(fs.readFileSync(out, 'utf8')), text: fs.readFileSync(out, 'utf8'), stdout: child.stdout };
  return ran;
}

const find = (report, pred, what) => {
  const found = report.runs.find(pred);
  assert.ok(found, `no run ${what} in ${report.runs.map((r) => r.id).join(', ')}`);
  return found;
};

test('every configuration reports threads, files, memory, open and read times and idle cost per tenant', { skip, timeout: 300_000 }, () => {
  const { report } = run();
  const measured = report.runs.filter((r) => r.totals);
  assert.deepEqual([...new Set(measured.map((r) => `${r.replicator} ${r.store}`))].sort(), ['litestream folder', 'litestream s3', 'offloop folder', 'offloop s3']);
  for (const r of measured) {
    assert.ok(r.tenantsReached > 0, r.id);
    assert.ok(r.totals.idle.threads > 0 && r.totals.idle.fds > 0 && r.totals.idle.rssKiB > 0, r.id);
    for (const key of ['threads', 'fds', 'rssKiB', 'rssKiBAfterReads']) assert.equal(typeof r.perTenant[key], 'number', `${r.id} ${key}`);
    assert.equal(r.openMs.count, r.replicator === 'offloop' ? r.tenantsReached : r.tenantsAsked, r.id);
    assert.ok(r.reads.cold.count > 0 && r.reads.warm.count > 0, r.id);
    assert.equal(r.reads.cold.errors + r.reads.warm.errors, 0, r.id);
    assert.equal(typeof r.idleCpuPercent, 'number', r.id);
    assert.equal(typeof r.limits.hard, 'number', r.id);
    if (r.store === 's3') assert.equal(typeof r.s3.perMinutePerTenant, 'number', r.id);
  }
  const litestream = find(report, (r) => r.replicator === 'litestream' && r.store === 'folder', 'Litestream folder');
  assert.equal(litestream.tenantsReached, TENANTS);
  assert.equal(litestream.sidecar.replicated, TENANTS);
  assert.ok(litestream.totals.idle.threads > litestream.baseline.threads, 'the sidecar is counted with the app');
});

test('an app out of file descriptors is recorded as stopped, and offloop runs again with the limit raised', { skip, timeout: 300_000 }, () => {
  const { report } = run();
  const limited = find(report, (r) => r.replicator === 'offloop' && r.store === 'folder' && r.fdLimitAsked === FD_LIMIT, `offloop at ${FD_LIMIT}`);
  assert.equal(limited.limits.hard, FD_LIMIT, 'the limit in force is recorded');
  assert.equal(limited.stop?.reason, 'fds', JSON.stringify(limited.stop));
  assert.ok(limited.tenantsReached < TENANTS);
  const raised = find(report, (r) => r.replicator === 'offloop' && r.store === 'folder' && r.fdLimitAsked === null, 'offloop raised');
  assert.equal(raised.stop, null);
  assert.equal(raised.tenantsReached, TENANTS);
  assert.ok(raised.limits.hard > FD_LIMIT);

  const fds = report.goals.find((g) => g.id === 'fds');
  assert.equal(fds.met, false, 'running out of descriptors misses the goal');
});

test('the report, the goals and the generated summary read the results; no path of this machine is in them', { skip, timeout: 300_000 }, () => {
  const { report, text, stdout } = run();
  assert.equal(report.goals.length, 8);
  for (const g of report.goals) assert.ok([true, false, null].includes(g.met), g.id);
  assert.match(stdout, /### Goals/);
  const summary = tenants(report);
  assert.equal(summary.rows.length, 3);
  assert.equal(summary.goals.length, 8);
  for (const p of [dir, os.tmpdir(), ROOT]) assert.ok(!text.includes(p), `the results name ${p}`);
});

test('the generated summary compares the largest size both apps measured: a peer stopped before any figure at a larger size is passed over', { skip, timeout: 300_000 }, () => {
  const { report } = run();
  const folder = report.runs.filter((r) => r.store === 'folder');
  const offloop = find(report, (r) => r.store === 'folder' && r.replicator === 'offloop' && r.fdLimitAsked === report.plan.fdLimit, 'offloop, folder');
  const litestream = find(report, (r) => r.store === 'folder' && r.replicator === 'litestream', 'Litestream, folder');
  // As a full run's largest size can end: offloop measured, Litestream's
  // sidecar stopped by the guard before its app measured anything.
  const larger = TENANTS * 10;
  const runs = [
    ...folder,
    { ...offloop, id: `${offloop.id}-larger`, tenantsAsked: larger, tenantsReached: larger },
    { id: 'litestream-larger', replicator: 'litestream', store: 'folder', tenantsAsked: larger, tenantsReached: 0, stop: { reason: 'guard', at: 0 }, totals: null },
  ];
  const summary = tenants({ ...report, runs });
  assert.match(summary.rows[0].measure, new RegExp(`asked for ${TENANTS} at`));
  assert.match(summary.rows[0].peer, new RegExp(`at ${litestream.tenantsReached}`));
});
