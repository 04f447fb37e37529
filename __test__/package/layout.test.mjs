// The platform list is written in four places that must agree: the targets
// the scripts build (scripts/targets.mjs), package.json `napi.targets`, the
// npm/<platform>/ packages, and the loader's list (native.js). And the
// build's own check keeps the glibc floor: it refuses an addon that needs a
// newer glibc, and every addon in npm/ passes it; the Windows addon in npm/
// passes its own (format, CPU, export, imports); the macOS ones have a test
// of their own (darwin.test.mjs).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { checkLinuxAddon } from '../../scripts/build-target.mjs';
import { checkMacAddon, checkWindowsAddon } from '../../scripts/foreign-binaries.mjs';
import { LINUX_TARGETS, ROOT, TARGETS, addonName, hostPlatform, packagedAddon } from '../../scripts/targets.mjs';

const readJson = (file) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const rootManifest = readJson('package.json');

test('package.json napi.targets lists exactly the targets the scripts build', () => {
  assert.deepEqual(
    rootManifest.napi.targets,
    TARGETS.map((t) => t.triple),
  );
});

// Beside them, offloop-sqlite3: the stand-in for the sqlite3 package
// (__test__/package-sqlite3-standin.test.mjs).
test('npm/ holds one package per target, the sqlite3 stand-in, and nothing else', () => {
  assert.deepEqual(
    fs.readdirSync(path.join(ROOT, 'npm')).sort(),
    [...TARGETS.map((t) => t.platform), 'offloop-sqlite3'].sort(),
  );
});

test('the sqlite3 stand-in is versioned with offloop and depends on that exact version', () => {
  const manifest = readJson(path.join('npm', 'offloop-sqlite3', 'package.json'));
  assert.equal(manifest.version, rootManifest.version);
  assert.deepEqual(manifest.dependencies, { [rootManifest.name]: rootManifest.version });
});

test('each platform package is named, versioned and restricted for its platform, holding only its addon', () => {
  for (const t of TARGETS) {
    const manifest = readJson(path.join('npm', t.platform, 'package.json'));
    assert.equal(manifest.name, `${rootManifest.name}-${t.platform}`);
    assert.equal(manifest.version, rootManifest.version);
    assert.deepEqual(manifest.os, [t.os]);
    assert.deepEqual(manifest.cpu, [t.cpu]);
    assert.deepEqual(manifest.libc, t.libc ? [t.libc] : undefined);
    assert.equal(manifest.main, addonName(t.platform));
    assert.deepEqual(manifest.files, [addonName(t.platform)]);
    assert.equal(manifest.scripts, undefined);
  }
});

test("the loader's list of prebuilt platforms is the targets'", () => {
  const source = fs.readFileSync(path.join(ROOT, 'native.js'), 'utf8');
  const list = source.match(/const PREBUILT = \[([^\]]*)\]/)[1];
  assert.deepEqual(
    [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]),
    TARGETS.map((t) => t.platform),
  );
});

// The release workflow publishes what its jobs upload: one addons-<platform>
// artifact per target (the macOS ones from the linux job, which builds and
// checks them; the macOS jobs download them to run), all of them packed.
test('the release workflow uploads, and packs, one addon of every target; its macOS jobs run each macOS one', () => {
  const workflow = fs.readFileSync(path.join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8');
  const uploads = [...workflow.matchAll(/upload-artifact@v\d+\n\s+with:\n\s+name: addons-([\w-]+)/g)].map((m) => m[1]);
  assert.deepEqual(uploads.sort(), ['linux', ...TARGETS.filter((t) => t.os !== 'linux').map((t) => t.platform)].sort());
  const pack = workflow.match(/node scripts\/pack\.mjs --addons addons --out dist (.*)/)[1].split(' ');
  assert.deepEqual(pack, TARGETS.map((t) => t.platform));
  const macos = [...workflow.matchAll(/- \{ platform: (darwin-[\w]+), runner: /g)].map((m) => m[1]);
  assert.deepEqual(macos.sort(), TARGETS.filter((t) => t.os === 'darwin').map((t) => t.platform).sort());
  assert.match(workflow, /download-artifact@v\d+\n\s+with:\n\s+name: addons-\$\{\{ matrix\.platform \}\}/);
});

test('the repository manifest runs no install script', () => {
  for (const name of ['preinstall', 'install', 'postinstall']) assert.equal(rootManifest.scripts[name], undefined);
});

const hostGnu = LINUX_TARGETS.find((t) => t.platform === hostPlatform() && t.libc === 'glibc');
const sourceBuild = hostGnu && path.join(ROOT, addonName(hostGnu.platform));

test(
  'the build check refuses an addon that needs a glibc newer than the floor',
  { skip: hostGnu ? false : 'the host is not a glibc Linux target' },
  (t) => {
    // `npm run build` links against the host's glibc, newer than the floor
    // on any distribution of the last ten years.
    const message = /needs GLIBC_(\d+\.\d+(\.\d+)?), newer than the floor GLIBC_2\.17/;
    try {
      checkLinuxAddon(hostGnu, sourceBuild);
      t.skip('the build from source needs no glibc newer than the floor on this host');
    } catch (err) {
      assert.match(err.message, message);
    }
  },
);

for (const target of LINUX_TARGETS) {
  const built = fs.existsSync(packagedAddon(target.platform));
  test(
    `the ${target.platform} addon in npm/ is for its CPU and needs nothing newer than its C library's floor`,
    { skip: built ? false : `npm/${target.platform}/ holds no build (npm run build:all)` },
    () => {
      const { glibc, needed } = checkLinuxAddon(target, packagedAddon(target.platform));
      if (target.libc === 'glibc') assert.ok(glibc, 'a glibc build names glibc symbol versions');
      else assert.equal(glibc, null);
      assert.ok(needed.length > 0);
    },
  );
}

// The checks read binaries with tools from Debian (MinGW's objdump, LLVM).
const foreignSkip = (platform) => {
  if (process.platform !== 'linux') return 'the Windows check runs on a Linux host';
  return fs.existsSync(packagedAddon(platform)) ? false : `npm/${platform}/ holds no build (npm run build:all)`;
};
const windows = TARGETS.find((t) => t.os === 'win32');
test(
  'the win32 addon in npm/ is an x86-64 DLL that exports the module entry and imports only system DLLs',
  { skip: foreignSkip(windows.platform) },
  () => {
    const { dlls } = checkWindowsAddon(packagedAddon(windows.platform));
    assert.ok(dlls.some((dll) => dll.toLowerCase() === 'kernel32.dll'), dlls.join(', '));
  },
);

test(
  'the Windows and macOS checks refuse a binary of another format',
  { skip: hostGnu ? false : 'the host is not a glibc Linux target' },
  () => {
    assert.throws(() => checkWindowsAddon(sourceBuild), /is not an x86-64 PE file/);
    assert.throws(() => checkMacAddon(sourceBuild, 'arm64'), /: not a 64-bit Mach-O file/);
  },
);
