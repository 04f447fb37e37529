// `npm run build:all`: builds the four Linux targets, one after the other
// (each build already uses every core), on a Linux or macOS host. Each
// .node lands in its npm/<platform>/ folder (build-target.mjs). macOS and
// Windows builds need their own machines: the release workflow builds them
// there with build-target.mjs.

import { buildTarget } from './build-target.mjs';
import { LINUX_TARGETS } from './targets.mjs';

const started = Date.now();
for (const { platform } of LINUX_TARGETS) {
  const t0 = Date.now();
  buildTarget(platform);
  console.log(`${platform}: built in ${Math.round((Date.now() - t0) / 1000)} s`);
}
console.log(`build:all: ${LINUX_TARGETS.length} targets in ${Math.round((Date.now() - started) / 1000)} s`);
