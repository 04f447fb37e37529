// The macOS builds made on Linux (`npm run build:all`, which links the two
// system frameworks against the stubs in scripts/macos/), checked as a
// Mac's loader would check them, since nothing here can run them: each
// passes scripts/foreign-binaries.mjs's checkMacAddon, and the check fails
// on a copy broken the way it guards against (a page changed after
// signing, the signature gone, a symbol its framework stub does not list,
// MH_NOUNDEFS set while a symbol is left to the host). Then each package
// installs from its tarball into an app with `npm install --os=darwin
// --cpu=<cpu>`, which must pick it, and native.js, run as if on that Mac,
// must resolve to its addon. The release workflow runs the builds on real
// Macs. A platform with no build in npm/<platform>/, or a machine without
// the tools the check reads with, is skipped with the reason.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { checkMacAddon, zigLibSystemStub } from '../../scripts/foreign-binaries.mjs';
import { FRAMEWORKS, keptSymbols } from '../../scripts/macos/frameworks.mjs';
import { MH_NOUNDEFS, readMachO, rehashAdhocSignature } from '../../scripts/macos/macho.mjs';
import { TARGETS, addonName, packagedAddon } from '../../scripts/targets.mjs';
import { install, onPath } from './platform/install.mjs';

const LIBSYSTEM = '/usr/lib/libSystem.B.dylib';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'offloop-darwin-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/**
 * Makes one of the library's imports a lookup in the host, as an addon
 * that left libuv to dyld would have: the first undefined symbol bound to
 * a library (in the symbol table, LC_SYMTAB's nlist_64 entries) is renamed
 * `_uv_...` in place and given the dynamic lookup ordinal.
 */
function leaveOneToHost(buf) {
  const LC_SYMTAB = 0x2;
  const N_TYPE = 0x0e;
  const N_EXT = 0x01;
  const DYNAMIC_LOOKUP_ORDINAL = 0xfe;
  let at = 32;
  for (let i = 0; i < buf.readUInt32LE(16); i++, at += buf.readUInt32LE(at + 4)) {
    if (buf.readUInt32LE(at) !== LC_SYMTAB) continue;
    const [symoff, nsyms, stroff] = [8, 12, 16].map((o) => buf.readUInt32LE(at + o));
    for (let n = 0; n < nsyms; n++) {
      const entry = symoff + n * 16;
      const type = buf[entry + 4];
      const desc = buf.readUInt16LE(entry + 6);
      const ordinal = desc >> 8;
      if ((type & N_TYPE) !== 0 || (type & N_EXT) === 0 || ordinal === 0 || ordinal >= DYNAMIC_LOOKUP_ORDINAL) continue;
      const name = stroff + buf.readUInt32LE(entry);
      if (buf.indexOf(0, name) - name <= 4) continue;
      buf.write('_uv_', name, 'latin1');
      buf.writeUInt16LE((desc & 0xff) | (DYNAMIC_LOOKUP_ORDINAL << 8), entry + 6);
      return;
    }
  }
  throw new Error('no import bound to a library');
}

/** A copy of `file` changed by `mend(buffer)`, in the scratch folder. */
function brokenCopy(file, name, mend) {
  const buf = fs.readFileSync(file);
  mend(buf);
  const copy = path.join(scratch, name);
  fs.writeFileSync(copy, buf);
  return copy;
}

// What the checks read the builds with: LLVM's llvm-nm (Debian's llvm,
// which OFFLOOP_CROSS=1 bash .ci/tools installs) and zig's libSystem stub,
// which the darwin builds install. A Mac of the release workflow has
// neither: it runs the builds instead.
function checkToolsMissing() {
  if (!onPath('llvm-nm', process.env.PATH ?? '')) return 'llvm-nm is not on the PATH (OFFLOOP_CROSS=1 bash .ci/tools)';
  try {
    zigLibSystemStub();
  } catch (error) {
    return error.message;
  }
  return null;
}
const toolsMissing = checkToolsMissing();

for (const { platform, cpu, os: targetOs } of TARGETS.filter((t) => t.os === 'darwin')) {
  const addon = packagedAddon(platform);
  const noBuild = fs.existsSync(addon) ? false : `npm/${platform}/ holds no build (npm run build:all)`;
  const skip = noBuild || (toolsMissing ? `cannot check ${platform} here: ${toolsMissing}` : false);

  test(`the ${platform} build is a library a Mac loads from Node 20 up`, { skip }, () => {
    const report = checkMacAddon(addon, cpu);
    assert.deepEqual([...report.dylibs].sort(), [LIBSYSTEM, ...Object.values(FRAMEWORKS)].sort());
    // Node-API and libuv are looked up at run time (dlsym), so nothing is
    // left to the host's namespace, and every kept symbol is still imported.
    assert.equal(report.fromHost, 0);
    const kept = keptSymbols();
    for (const framework of Object.keys(FRAMEWORKS)) assert.equal(report.frameworkSymbols[framework], kept[framework].length, framework);
    if (cpu === 'arm64') assert.ok(report.signedPages > 0);
  });

  // macOS loads unsigned x64 code; zig signs only the arm64 build.
  const unsigned = cpu === 'x64' ? 'the x64 build is not signed (macOS loads unsigned x64 code)' : false;
  test(`the ${platform} check fails on a page changed after signing, and on a missing signature`, { skip: skip || unsigned }, () => {
    const { signature } = readMachO(fs.readFileSync(addon));
    assert.ok(signature, 'the arm64 build is signed');
    const changed = brokenCopy(addon, `${platform}-page.node`, (buf) => {
      buf[signature.offset - 1] ^= 0xff;
    });
    assert.throws(() => checkMacAddon(changed, cpu), /does not match its hash/);
    const unsigned = brokenCopy(addon, `${platform}-unsigned.node`, (buf) => {
      buf.fill(0, signature.offset, signature.offset + 8);
    });
    assert.throws(() => checkMacAddon(unsigned, cpu), /no embedded signature/);
  });

  test(`the ${platform} build is named @rpath/offloop.node, and the check fails on a build named by a path`, { skip }, () => {
    assert.equal(readMachO(fs.readFileSync(addon)).id, '@rpath/offloop.node');
    const named = brokenCopy(addon, `${platform}-named.node`, (buf) => {
      const at = buf.indexOf('@rpath/offloop.node');
      buf.write('/build/offloop.node', at);
    });
    assert.throws(() => checkMacAddon(named, cpu), /is named by the path it was built at: \/build\/offloop\.node/);
  });

  test(`the ${platform} check fails when a framework stub lacks a symbol the build imports`, { skip }, () => {
    const kept = keptSymbols();
    for (const framework of Object.keys(kept)) {
      const [dropped, ...rest] = kept[framework];
      assert.ok(dropped, `${framework} lists symbols`);
      assert.throws(() => checkMacAddon(addon, cpu, { frameworks: { ...kept, [framework]: rest } }), new RegExp(`${dropped} \\(from ${framework}\\)`));
    }
  });

  test(`the ${platform} check fails on MH_NOUNDEFS while symbols are left to the host`, { skip }, () => {
    const lookedUp = (flagged) =>
      brokenCopy(addon, `${platform}-lookup-${flagged}.node`, (buf) => {
        leaveOneToHost(buf);
        const flags = buf.readUInt32LE(24);
        buf.writeUInt32LE(flagged ? flags | MH_NOUNDEFS : flags & ~MH_NOUNDEFS, 24);
        if (readMachO(buf).signature) rehashAdhocSignature(buf);
      });
    assert.equal(checkMacAddon(lookedUp(false), cpu).fromHost, 1);
    assert.throws(() => checkMacAddon(lookedUp(true), cpu), /MH_NOUNDEFS set but leaves 1 symbols to the host/);
  });

  test(`npm install --os=darwin --cpu=${cpu} picks offloop-${platform}, and native.js resolves its addon`, { skip: noBuild }, () => {
    const installed = install(platform);
    try {
      const modules = path.join(installed.dir, 'node_modules');
      assert.ok(fs.existsSync(path.join(modules, `offloop-${platform}`, addonName(platform))));
      // As on that Mac: the platform and CPU it reports, and a .node loader
      // that records the file instead of loading it (a Mach-O cannot load here).
      const probe = [
        `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(targetOs)} });`,
        `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(cpu)} });`,
        "require('node:module')._extensions['.node'] = (m, filename) => { m.exports = { filename }; };",
        `console.log(require(${JSON.stringify(path.join(modules, 'offloop', 'native.js'))}).filename);`,
      ].join('\n');
      const run = spawnSync(process.execPath, ['-e', probe], { cwd: installed.dir, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(fs.realpathSync(run.stdout.trim()), fs.realpathSync(path.join(modules, `offloop-${platform}`, addonName(platform))));
    } finally {
      installed.cleanup();
    }
  });
}
