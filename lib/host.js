'use strict';

// The JavaScript runtime this process is (Node, Bun or Deno) and its
// version, found once. The addon chooses how completions wake the event
// loop by it (src/node/waker.rs), and the loader (native.js) names it when
// the addon cannot load. It reads `process.versions` only, which Deno
// answers without a permission.

const NAMES = { node: 'Node.js', bun: 'Bun', deno: 'Deno' };

/** `[name, version]`: `['bun', '1.4.5']`, `['deno', '2.9.6']` or `['node', '20.20.2']`. */
function host() {
  if (process.versions.bun !== undefined) return ['bun', process.versions.bun];
  if (process.versions.deno !== undefined) return ['deno', process.versions.deno];
  return ['node', process.versions.node];
}

/** The runtime as a person names it: `Deno 2.9.6`. */
function hostLabel() {
  const [name, version] = host();
  return `${NAMES[name]} ${version}`;
}

module.exports = { host, hostLabel };
