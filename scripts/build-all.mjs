// `npm run build:all`: builds every target, one after the other (each build
// already uses every core), and leaves each .node in its npm/<platform>/
// folder (build-target.mjs). On a Linux host that is all seven: the Linux
// ones and macOS with cargo-zigbuild, Windows with MinGW-w64. On a macOS
// host the Linux ones and its own; Windows builds on Linux or Windows.

import { buildTarget } from './build-target.mjs';
import { TARGETS } from './targets.mjs';

const buildable = TARGETS.filter(
  ({ os }) => os === 'linux' || os === process.platform || (process.platform === 'linux' && os !== 'linux'),
);
const started = Date.now();
for (const { platform } of buildable) {
  const t0 = Date.now();
  buildTarget(platform);
  console.log(`${platform}: built in ${Math.round((Date.now() - t0) / 1000)} s`);
}
console.log(`build:all: ${buildable.length} targets in ${Math.round((Date.now() - started) / 1000)} s`);
