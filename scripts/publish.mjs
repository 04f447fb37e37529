// Publishes the tarballs of a release (scripts/pack.mjs) to npm:
//
//   node scripts/publish.mjs [--dry-run] DIR
//
// Every platform package goes first and offloop itself last, so that the
// versions its optionalDependencies name exist by the time anyone can
// install it. A release ships every target or nothing: a missing platform
// tarball stops it before anything is published. On GitHub Actions the
// release tag must be v<version>. It never builds or packs.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { npmCommand } from './pack.mjs';
import { ROOT, TARGETS } from './targets.mjs';

const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');
const [dir] = args.filter((a) => a !== '--dry-run');
if (!dir) {
  console.error('usage: node scripts/publish.mjs [--dry-run] DIR');
  process.exit(2);
}

const { name, version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const tag = process.env.GITHUB_REF_TYPE === 'tag' ? process.env.GITHUB_REF_NAME : null;
if (tag !== null && tag !== `v${version}`) {
  throw new Error(`the tag ${tag} does not match package.json version ${version}`);
}

const tarballs = [...TARGETS.map((t) => `${name}-${t.platform}-${version}.tgz`), `${name}-${version}.tgz`].map((f) =>
  path.resolve(dir, f),
);
const missing = tarballs.filter((f) => !fs.existsSync(f));
if (missing.length) throw new Error(`not publishing, missing: ${missing.join(', ')}`);

const [command, prefix] = npmCommand();
for (const tarball of tarballs) {
  const flags = ['--access', 'public'];
  if (dryRun) flags.push('--dry-run');
  const result = spawnSync(command, [...prefix, 'publish', tarball, ...flags], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm publish ${path.basename(tarball)} exited with ${result.status}`);
}
