//! `Remote`: the handful of replica operations the replicator needs — list
//! a level, upload, download and delete LTX files — as one trait, so the
//! replicator's logic does not depend on how the store speaks to a folder
//! or to S3. It owns no state and starts no thread; the store behind it
//! blocks the calling thread (the replicator's) for each operation.

use std::fmt;
use std::path::Path;

/// Levels Litestream uses: 0 for each sync, 1–8 for compactions, 9 for
/// snapshots.
pub const SNAPSHOT_LEVEL: u8 = 9;

/// One LTX file in the replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteFile {
    pub level: u8,
    pub min_txid: u64,
    pub max_txid: u64,
    pub size: u64,
    /// The file's LTX timestamp (ms since the epoch), as the store records
    /// it (S3 metadata, a file's modification time).
    pub timestamp_ms: i64,
}

/// A failed replica operation. `permanent` errors (a bad URL, a missing
/// bucket, refused credentials, a path that is a file) will not go away by
/// retrying; the others (the replica is down or slow) are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    pub permanent: bool,
    pub message: String,
}

impl RemoteError {
    pub fn transient(message: impl Into<String>) -> Self {
        RemoteError {
            permanent: false,
            message: message.into(),
        }
    }

    pub fn permanent(message: impl Into<String>) -> Self {
        RemoteError {
            permanent: true,
            message: message.into(),
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

pub type RemoteResult<T> = Result<T, RemoteError>;

pub trait Remote: Send + Sync {
    /// Every file of every level, the levels listed concurrently.
    fn list_all(&self) -> RemoteResult<Vec<RemoteFile>>;
    /// The files of one level, by min TXID.
    fn list(&self, level: u8) -> RemoteResult<Vec<RemoteFile>>;
    /// Uploads the local LTX file at `path` as `file`, with its timestamp.
    fn put(&self, file: &RemoteFile, path: &Path) -> RemoteResult<()>;
    /// Downloads a whole file.
    fn get(&self, file: &RemoteFile) -> RemoteResult<Vec<u8>>;
    fn delete(&self, files: &[RemoteFile]) -> RemoteResult<()>;
}
