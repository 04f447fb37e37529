// `npm run build:all`: builds every target this host can, one after the
// other (each build already uses every core), and leaves each .node in its
// npm/<platform>/ folder (build-target.mjs). On a Linux host: the Linux
// ones with cargo-zigbuild, Windows with MinGW-w64, and macOS with
// cargo-zigbuild when SDKROOT names a macOS SDK (without one it says why
// and leaves them out). On a macOS host the Linux ones and its own.

import { MACOS_SDK_NEEDED, buildTarget } from './build-target.mjs';
import { TARGETS } from './targets.mjs';

const buildable = TARGETS.filter(({ os, platform }) => {
  if (os === 'linux' || os === process.platform) return true;
  if (process.platform !== 'linux') return false;
  if (os === 'darwin' && !process.env.SDKROOT) {
    console.log(`${platform}: not built: ${MACOS_SDK_NEEDED}`);
    return false;
  }
  return true;
});
const started = Date.now();
for (const { platform } of buildable) {
  const t0 = Date.now();
  buildTarget(platform);
  console.log(`${platform}: built in ${Math.round((Date.now() - t0) / 1000)} s`);
}
console.log(`build:all: ${buildable.length} targets in ${Math.round((Date.now() - started) / 1000)} s`);
