// The house rules that keep the code readable, checked on the source:
// data on the ground floor and threads above it means no import circle
// among a crate's files (the one allowed is a recursive type: a job can
// start a scope, and a scope is a queue of jobs), and no file grows past
// the size at which it starts mixing concerns.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function rustFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...rustFiles(path));
    else if (name.endsWith('.rs')) out.push(path);
  }
  return out;
}

/** Module name (first path segment under `dir`) to the modules it imports. */
function importGraph(dir, prefix) {
  const graph = new Map();
  const pattern = new RegExp(`${prefix}(\\w+)`, 'g');
  for (const file of rustFiles(dir)) {
    const module = relative(dir, file).split(sep)[0].replace(/\.rs$/, '');
    // Unit tests may reach anywhere; only the code proper must not loop.
    const code = readFileSync(file, 'utf8').split('#[cfg(test)]')[0];
    const deps = graph.get(module) ?? new Set();
    for (const [, dep] of code.matchAll(pattern)) if (dep !== module) deps.add(dep);
    graph.set(module, deps);
  }
  return graph;
}

/** The strongly connected components of more than one module. */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('engine files import no circle but the recursive job/scope type', () => {
  const found = circles(importGraph(join(ROOT, 'crates', 'engine', 'src'), 'crate::'));
  assert.deepEqual(found, [['job', 'scope']]);
});

test('the binding files import no circle', () => {
  assert.deepEqual(circles(importGraph(join(ROOT, 'src', 'node'), 'super::')), []);
});

test('the replica files import no circle', () => {
  assert.deepEqual(circles(importGraph(join(ROOT, 'crates', 'replica', 'src'), 'crate::')), []);
});

test('the paged VFS files import no circle', () => {
  assert.deepEqual(circles(importGraph(join(ROOT, 'crates', 'vfs', 'src'), 'crate::')), []);
});

test('the circle finder sees a circle when there is one', () => {
  const graph = new Map([
    ['a', new Set(['b'])],
    ['b', new Set(['c'])],
    ['c', new Set(['a'])],
    ['d', new Set(['a'])],
  ]);
  assert.deepEqual(circles(graph), [['a', 'b', 'c']]);
});

test('no Rust or lib/ file is over 600 lines', () => {
  const files = [
    ...rustFiles(join(ROOT, 'crates')),
    ...rustFiles(join(ROOT, 'src')),
    ...readdirSync(join(ROOT, 'lib')).map((name) => join(ROOT, 'lib', name)),
  ];
  const long = files
    .map((file) => [relative(ROOT, file), readFileSync(file, 'utf8').split('\n').length])
    .filter(([, lines]) => lines > 600);
  assert.deepEqual(long, []);
});

/** Every Rust file of the crates and the binding, tests included. */
function allRustFiles() {
  return [...rustFiles(join(ROOT, 'crates')), ...rustFiles(join(ROOT, 'src'))];
}

test('no Rust file outside the file crate names the operating system: offloop builds for Windows too', () => {
  const shim = join(ROOT, 'crates', 'file', 'src');
  const named = allRustFiles()
    .filter((file) => !file.startsWith(shim + sep))
    .filter((file) => /std::os::(unix|windows)/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file));
  assert.deepEqual(named, []);
});

test('the engine does not depend on the paged VFS: it offers a hook the paged restore fills', () => {
  const manifest = readFileSync(join(ROOT, 'crates', 'engine', 'Cargo.toml'), 'utf8');
  assert.doesNotMatch(manifest, /offloop-vfs/);
  const uses = rustFiles(join(ROOT, 'crates', 'engine'))
    .filter((file) => /offloop_vfs/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file));
  assert.deepEqual(uses, []);
});

test('only offloop-file syncs a file: Windows flushes none opened read-only, so each sync is a WritableFile one', () => {
  // durable.rs is WritableFile's sync; dir.rs syncs a directory, which is
  // Unix-only (a directory cannot be opened for writing).
  const syncs = new Set([join('crates', 'file', 'src', 'durable.rs'), join('crates', 'file', 'src', 'dir.rs')]);
  const sync = /\.sync_(all|data)\s*\(|\b(FlushFileBuffers|fsync|fdatasync)\s*\(/;
  const found = allRustFiles()
    .map((file) => relative(ROOT, file))
    .filter((file) => !syncs.has(file) && sync.test(readFileSync(join(ROOT, file), 'utf8')));
  assert.deepEqual(found, []);
});
