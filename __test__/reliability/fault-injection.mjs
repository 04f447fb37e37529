// Turns on offloop's test-only fault injection for the process of the test
// file that imports it, and hands out its controls. Import it before
// anything that loads offloop: the addon reads the switch once, as it
// loads. Not a test file itself (node --test only runs *.test.mjs).

import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.OFFLOOP_FAULT_INJECTION = '1';

const require = createRequire(import.meta.url);
const native = require(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'native.js'));

if (!native.faultInjection()) throw new Error('fault injection did not turn on: was offloop loaded first?');

/** The bits of `setIo`'s mask, as the addon names them. */
export const IO = native.faultIoBits();
IO.allFiles = IO.mainDb | IO.wal | IO.journal;

/** The URI that opens `file` through the fault-injecting VFS. */
export function faultyUri(file) {
  return `file:${file}?vfs=offloop-faults`;
}

/** Sets the I/O faults (0 clears them). */
export function setIo(mask) {
  native.faultIo(mask);
}

/** I/O operations failed so far. */
export function ioInjected() {
  return native.faultIoInjected();
}

/** The next `count` passes of a `site` loop ('writer', 'reader', 'checkpointer') panic. */
export function panicIn(site, count = 1) {
  native.faultPanic(site, count);
}
