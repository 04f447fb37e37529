// `npm run build:all`: builds every target this host can, one after the
// other (each build already uses every core), and leaves each .node in its
// npm/<platform>/ folder (build-target.mjs). On a Linux host: the Linux
// ones and macOS with cargo-zigbuild (macOS against the framework stubs in
// scripts/macos/, or a macOS SDK named by SDKROOT), Windows with MinGW-w64.
// On a macOS host the Linux ones and its own.

import { buildTarget } from './build-target.mjs';
import { TARGETS } from './targets.mjs';

const buildable = TARGETS.filter(({ os }) => os === 'linux' || os === process.platform || process.platform === 'linux');
const started = Date.now();
for (const { platform } of buildable) {
  const t0 = Date.now();
  buildTarget(platform);
  console.log(`${platform}: built in ${Math.round((Date.now() - t0) / 1000)} s`);
}
console.log(`build:all: ${buildable.length} targets in ${Math.round((Date.now() - started) / 1000)} s`);
