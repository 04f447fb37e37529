// Reading and mending a 64-bit Mach-O library built on Linux, as a Mac's
// loader would see it: the header and its flags, the load commands
// (libraries, minimum macOS version, the code signature's place), and the
// ad-hoc code signature itself, checked page by page. It also re-hashes an
// ad-hoc signature in place after the header was mended (MH_NOUNDEFS
// cleared). Pure functions of a Buffer; no file is read or written here.
// Formats: <mach-o/loader.h> and the code signature's blobs
// (<kern/cs_blobs.h>); the signature's fields are big-endian, the rest
// little-endian.

import crypto from 'node:crypto';

export const MH_MAGIC_64 = 0xfeedfacf;
export const MH_NOUNDEFS = 0x1;
const LC_REQ_DYLD = 0x80000000;
const LC_LOAD_DYLIB = 0xc;
const LC_ID_DYLIB = 0xd;
const LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD;
const LC_REEXPORT_DYLIB = 0x1f | LC_REQ_DYLD;
const LC_CODE_SIGNATURE = 0x1d;
const LC_VERSION_MIN_MACOSX = 0x24;
const LC_BUILD_VERSION = 0x32;
const PLATFORM_MACOS = 1;

const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CSSLOT_CODEDIRECTORY = 0;
const CS_ADHOC = 0x2;
const CS_HASHTYPE_SHA256 = 2;

/** `x.y.z` from Mach-O's packed version (xxxx.yy.zz in nibbles). */
function version(packed) {
  return `${packed >>> 16}.${(packed >>> 8) & 0xff}.${packed & 0xff}`;
}

/**
 * The header and load commands: `{ cpuType, fileType, flags, dylibs,
 * minMacos, signature: { offset, size } | null }`. Throws on anything that
 * is not a 64-bit little-endian Mach-O file.
 */
export function readMachO(buf) {
  if (buf.length < 32 || buf.readUInt32LE(0) !== MH_MAGIC_64) throw new Error('not a 64-bit Mach-O file');
  const cpuType = buf.readUInt32LE(4);
  const fileType = buf.readUInt32LE(12);
  const count = buf.readUInt32LE(16);
  const flags = buf.readUInt32LE(24);
  const dylibs = [];
  let id = null;
  let minMacos = null;
  let signature = null;
  let at = 32;
  for (let i = 0; i < count; i++) {
    const cmd = buf.readUInt32LE(at);
    const size = buf.readUInt32LE(at + 4);
    if (size < 8 || at + size > buf.length) throw new Error(`load command ${i} runs past the file`);
    if (cmd === LC_LOAD_DYLIB || cmd === LC_LOAD_WEAK_DYLIB || cmd === LC_REEXPORT_DYLIB || cmd === LC_ID_DYLIB) {
      const nameAt = at + buf.readUInt32LE(at + 8);
      const end = buf.indexOf(0, nameAt);
      const name = buf.toString('utf8', nameAt, end < 0 || end > at + size ? at + size : end);
      if (cmd === LC_ID_DYLIB) id = name;
      else dylibs.push(name);
    } else if (cmd === LC_BUILD_VERSION && buf.readUInt32LE(at + 8) === PLATFORM_MACOS) {
      minMacos = version(buf.readUInt32LE(at + 12));
    } else if (cmd === LC_VERSION_MIN_MACOSX && minMacos === null) {
      minMacos = version(buf.readUInt32LE(at + 8));
    } else if (cmd === LC_CODE_SIGNATURE) {
      signature = { offset: buf.readUInt32LE(at + 8), size: buf.readUInt32LE(at + 12) };
    }
    at += size;
  }
  return { cpuType, fileType, flags, id, dylibs, minMacos, signature };
}

/** The code directory of the embedded signature, with where its hashes lie. */
function codeDirectory(buf, signature) {
  const { offset, size } = signature;
  if (offset + size > buf.length) throw new Error('the code signature runs past the file');
  if (buf.readUInt32BE(offset) !== CSMAGIC_EMBEDDED_SIGNATURE) throw new Error('no embedded signature at LC_CODE_SIGNATURE');
  const blobs = buf.readUInt32BE(offset + 8);
  for (let i = 0; i < blobs; i++) {
    const type = buf.readUInt32BE(offset + 12 + i * 8);
    const at = offset + buf.readUInt32BE(offset + 16 + i * 8);
    if (type !== CSSLOT_CODEDIRECTORY) continue;
    if (buf.readUInt32BE(at) !== CSMAGIC_CODEDIRECTORY) throw new Error('the code directory slot holds no code directory');
    return {
      at,
      flags: buf.readUInt32BE(at + 12),
      hashOffset: buf.readUInt32BE(at + 16),
      codeSlots: buf.readUInt32BE(at + 28),
      codeLimit: buf.readUInt32BE(at + 32),
      hashSize: buf[at + 36],
      hashType: buf[at + 37],
      pageSize: 2 ** buf[at + 39],
    };
  }
  throw new Error('the signature has no code directory');
}

/** The hash a code slot must hold: SHA-256 of page `i`, cut at the code limit. */
function pageHash(buf, cd, i) {
  const start = i * cd.pageSize;
  const end = Math.min(start + cd.pageSize, cd.codeLimit);
  return crypto.createHash('sha256').update(buf.subarray(start, end)).digest();
}

/**
 * Checks an ad-hoc signature as the loader does: a code directory hashing
 * with SHA-256 every page of the file up to where the signature starts,
 * each page's hash matching. Returns `{ pages }`; throws on the first
 * mismatch, or when there is no signature.
 */
export function verifyAdhocSignature(buf) {
  const { signature } = readMachO(buf);
  if (!signature) throw new Error('the library carries no code signature');
  const cd = codeDirectory(buf, signature);
  if ((cd.flags & CS_ADHOC) === 0) throw new Error('the signature is not ad-hoc');
  if (cd.hashType !== CS_HASHTYPE_SHA256 || cd.hashSize !== 32) throw new Error(`the signature hashes with type ${cd.hashType}, not SHA-256`);
  if (cd.codeLimit !== signature.offset) throw new Error(`the signature covers ${cd.codeLimit} bytes, the code ends at ${signature.offset}`);
  if (cd.codeSlots !== Math.ceil(cd.codeLimit / cd.pageSize)) throw new Error(`the signature has ${cd.codeSlots} page hashes for ${cd.codeLimit} bytes`);
  for (let i = 0; i < cd.codeSlots; i++) {
    const slot = cd.at + cd.hashOffset + i * cd.hashSize;
    if (!pageHash(buf, cd, i).equals(buf.subarray(slot, slot + cd.hashSize))) {
      throw new Error(`page ${i} does not match its hash in the signature`);
    }
  }
  return { pages: cd.codeSlots };
}

/** Writes every page's hash again into an ad-hoc signature (after the pages changed). */
export function rehashAdhocSignature(buf) {
  const { signature } = readMachO(buf);
  if (!signature) throw new Error('the library carries no code signature');
  const cd = codeDirectory(buf, signature);
  if ((cd.flags & CS_ADHOC) === 0 || cd.hashType !== CS_HASHTYPE_SHA256) throw new Error('only an ad-hoc SHA-256 signature can be re-hashed');
  for (let i = 0; i < cd.codeSlots; i++) pageHash(buf, cd, i).copy(buf, cd.at + cd.hashOffset + i * cd.hashSize);
}

/** Clears MH_NOUNDEFS in the header (in place). */
export function clearNoUndefs(buf) {
  buf.writeUInt32LE(buf.readUInt32LE(24) & ~MH_NOUNDEFS, 24);
}
