//! The replica store: the one interface through which offloop reads and
//! writes a replica, and the one type for a file in it.
//!
//! A replica is a set of LTX files laid out exactly as Litestream 0.5 lays
//! them out, in a folder or an S3 bucket (see [`object`]). Everything that
//! touches a replica (the replicator, compaction, retention, restore, the
//! paged restore) goes through [`Store`]; its shape follows Litestream's
//! `ReplicaClient`: list a level from a TXID on, read a byte range of a
//! file as a stream, write a file from a stream, delete files, and create a
//! file only if no file of that name exists (the conditional write a fenced
//! writer is built on); and, for the one small object beside the LTX files
//! (the lease, `lock.json`), a read that returns the object's version and a
//! replace that succeeds only if the version is still the one read.
//!
//! The store knows LTX only by file name: it never decodes a file. Its
//! failures are [`StoreError`]s whose [`Fault`] says whether retrying can
//! help; no caller decides that from message text.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use bytes::Bytes;
use offloop_ltx::{file_name, parse_file_name, Txid};

use crate::error::Result;

mod folder_cas;
mod io_runtime;
pub mod object;
mod object_io;
mod s3_upload;

pub use crate::fault::{Fault, StoreError};
pub use object::{go_rfc3339_nano, ReplicaStore};

pub use crate::replica_url::S3Options;

/// The level Litestream keeps snapshots in.
pub const SNAPSHOT_LEVEL: u8 = 9;
/// Every level a replica may hold: L0 (one file per sync) to L9 (snapshots).
pub const LEVELS: std::ops::RangeInclusive<u8> = 0..=SNAPSHOT_LEVEL;

/// One LTX file in a replica: where it sits and what it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LtxFile {
    pub level: u8,
    pub min_txid: Txid,
    pub max_txid: Txid,
    /// Bytes.
    pub size: u64,
    /// Milliseconds since the Unix epoch: the file's LTX timestamp where the
    /// store keeps it (a folder's modification times, S3 metadata when a
    /// listing asks for [`Timestamps::Ltx`]), else when the object was
    /// last written.
    pub timestamp_ms: i64,
}

impl LtxFile {
    /// Litestream's name for the file: `<min:016x>-<max:016x>.ltx`.
    pub fn name(&self) -> String {
        file_name(self.min_txid, self.max_txid)
    }

    /// The level and TXID range a file name stands for, or `None` for a
    /// name that is not an LTX file's (or that names TXID 0).
    pub fn from_name(level: u8, name: &str, size: u64, timestamp_ms: i64) -> Option<LtxFile> {
        let (min_txid, max_txid) = parse_file_name(name)?;
        Some(LtxFile {
            level,
            min_txid,
            max_txid,
            size,
            timestamp_ms,
        })
    }

    /// Whether the file starts at TXID 1: a snapshot or a full image.
    pub fn is_full(&self) -> bool {
        self.min_txid == Txid::FIRST
    }

    /// `L<level>/<name>`, as messages name it.
    pub fn label(&self) -> String {
        format!("L{}/{}", self.level, self.name())
    }
}

/// Which timestamps a listing carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timestamps {
    /// What the listing itself says: exact for a folder (its modification
    /// times are the LTX timestamps), the object's write time for S3.
    Listed,
    /// The LTX timestamp of every file, exact: on S3 one metadata read per
    /// object, several at once. A point-in-time restore needs these.
    Ltx,
}

/// How a write treats a file of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Replace it.
    Overwrite,
    /// Create the file only if none of that name exists; otherwise fail
    /// with [`Fault::Conflict`] and leave the existing one as it was (S3
    /// `If-None-Match: *`; a folder links the written file into place,
    /// which fails if the name is taken).
    CreateNew,
}

/// A small object read whole, with the version a conditional replace
/// names: S3's ETag, or for a folder the file's identity and checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    pub bytes: Bytes,
    pub version: String,
}

/// What a conditional replace expects to find.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No object of that name (S3 `If-None-Match: *`).
    Absent,
    /// The object at this version, unchanged since it was read (S3
    /// `If-Match: <etag>`).
    Version(String),
}

/// Where the process leases of a replica live (see
/// `process_lease.rs`): a store whose `read_object` and
/// `replace_object` address `<parent>/.offloop/leases/<name>`, the parent
/// being the folder or S3 prefix that holds the replica, on the same S3
/// client. `key` names that place and client: equal for every replica
/// beside this one on the same client.
#[derive(Clone, Debug)]
pub struct LeaseRoot {
    pub key: String,
    pub store: std::sync::Arc<dyn Store>,
}

/// A replica's file compared with a local one ([`Store::compare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// No file of that name.
    Absent,
    /// The local file's bytes, all of them and nothing else.
    Same,
    /// Anything else: another length, other bytes.
    Different,
}

/// The replica as offloop sees it. Every method blocks the calling thread
/// (a plain thread of the replicator or a restore, never the JS thread)
/// until the store answers.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The replica's URL, as given.
    fn url(&self) -> &str;

    /// The files of one level whose range starts at `from` or later, sorted
    /// by TXID range. On S3 the listing starts at `from`'s name, so the
    /// files before it cost nothing.
    fn list(&self, level: u8, from: Txid, timestamps: Timestamps) -> Result<Vec<LtxFile>>;

    /// The files of every level (index = level), all levels listed at once.
    fn list_all(&self, timestamps: Timestamps) -> Result<Vec<Vec<LtxFile>>>;

    /// Bytes `range` of a file, whole in memory: for small reads (a header,
    /// a page index, a page's frame).
    fn read_range(&self, file: &LtxFile, range: Range<u64>) -> Result<Bytes>;

    /// Bytes `range` of a file as a stream that arrives as it is read:
    /// memory stays bounded however large the range.
    fn open(&self, file: &LtxFile, range: Range<u64>) -> Result<Box<dyn Read + Send>>;

    /// Reads byte ranges of files, up to `concurrency` at once, and hands
    /// each to `on_range` (with its index in `ranges`) on the calling thread
    /// as it arrives, in any order. The first error, the store's or
    /// `on_range`'s, stops it.
    fn read_ranges(
        &self,
        ranges: &[(LtxFile, Range<u64>)],
        concurrency: usize,
        on_range: &mut dyn FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()>;

    /// Writes the local file at `source` as `file` (whose `size` must be the
    /// source's), streaming it from disk, and records the file's LTX
    /// timestamp. Readers never see half a file.
    fn write(&self, file: &LtxFile, source: &Path, mode: WriteMode) -> Result<()>;

    /// Deletes files; one already gone is not an error.
    fn delete(&self, files: &[LtxFile]) -> Result<()>;

    /// The object `name` at the replica's root (beside `ltx/` in a folder,
    /// beside the level prefixes in S3), whole, with its version; `None`
    /// when there is none.
    fn read_object(&self, name: &str) -> Result<Option<Versioned>>;

    /// Writes the object `name` at the replica's root only if it is as
    /// `expect` says; returns its new version. Anything else fails with
    /// [`Fault::Conflict`] and leaves the object as it was. Readers see the
    /// old object or the new one, never part of either.
    fn replace_object(&self, name: &str, bytes: Bytes, expect: &Expect) -> Result<String>;

    /// Where this replica's process lease lives, shared with every replica
    /// beside it on the same client ([`LeaseRoot`]). Makes no request.
    fn lease_root(&self) -> Result<LeaseRoot>;

    /// What the replica's `file` holds, compared with the local file
    /// `source`. This is how a writer tells its own earlier create of a
    /// name (a request whose answer was lost, then retried) from another
    /// party's object there: only a byte-for-byte copy is its own. The
    /// object is read whole, streamed and compared as it arrives, and never
    /// decoded, so whatever another party put there (not an LTX file, an
    /// empty object) is only [`Comparison::Different`].
    fn compare(&self, file: &LtxFile, source: &Path) -> Result<Comparison>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_as_litestream_names_it_and_read_back_from_its_name() {
        let f = LtxFile::from_name(3, "000000000000000a-00000000000000ff.ltx", 9, 7).unwrap();
        assert_eq!((f.min_txid.get(), f.max_txid.get()), (10, 255));
        assert_eq!(f.name(), "000000000000000a-00000000000000ff.ltx");
        assert_eq!(f.label(), "L3/000000000000000a-00000000000000ff.ltx");
        assert!(!f.is_full());
        assert!(LtxFile::from_name(0, "0000000000000000-0000000000000001.ltx", 0, 0).is_none());
        assert!(LtxFile::from_name(0, "notes.txt", 0, 0).is_none());
    }
}
