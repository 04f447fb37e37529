//! `Remote`: the handful of replica operations the replicator needs — list
//! a level, upload, download and delete LTX files — as one trait, and its
//! implementation on `ReplicaStore`, so the replicator's logic does not
//! depend on how the store speaks to a folder or to S3. It owns no state and
//! starts no thread; the store behind it blocks the calling thread (the
//! replicator's) for each operation. Here too a store error is sorted into
//! permanent (retrying cannot help) or transient.

use std::fmt;
use std::path::Path;

use crate::error::Error;
use crate::store::{LtxFileInfo, ReplicaStore};

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
    /// The LTX timestamp in a file's header (one small ranged read).
    fn header_timestamp(&self, file: &RemoteFile) -> RemoteResult<i64>;
    fn delete(&self, files: &[RemoteFile]) -> RemoteResult<()>;
}

impl From<Error> for RemoteError {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        let permanent = match &e {
            Error::Config(_) => true,
            Error::Store { message, .. } => {
                message.starts_with("the bucket does not exist")
                    || message.starts_with("access denied")
            }
            _ => false,
        };
        RemoteError { permanent, message }
    }
}

fn info(file: &RemoteFile) -> LtxFileInfo {
    LtxFileInfo {
        level: file.level,
        min_txid: file.min_txid,
        max_txid: file.max_txid,
        size: file.size,
        timestamp: file.timestamp_ms,
    }
}

fn remote_file(info: LtxFileInfo) -> RemoteFile {
    RemoteFile {
        level: info.level,
        min_txid: info.min_txid,
        max_txid: info.max_txid,
        size: info.size,
        timestamp_ms: info.timestamp,
    }
}

/// Listings skip S3's per-object metadata reads: a listing's write times
/// are close enough to the LTX timestamps for retention, and the one
/// timestamp that must be exact is read with `header_timestamp`.
impl Remote for ReplicaStore {
    fn list_all(&self) -> RemoteResult<Vec<RemoteFile>> {
        let levels = ReplicaStore::list_all(self, false)?;
        Ok(levels.into_iter().flatten().map(remote_file).collect())
    }

    fn list(&self, level: u8) -> RemoteResult<Vec<RemoteFile>> {
        let files = self.list_level(level, false)?;
        Ok(files.into_iter().map(remote_file).collect())
    }

    fn put(&self, file: &RemoteFile, path: &Path) -> RemoteResult<()> {
        let bytes = std::fs::read(path)
            .map_err(|e| RemoteError::transient(format!("cannot read {}: {e}", path.display())))?;
        ReplicaStore::put(
            self,
            file.level,
            file.min_txid,
            file.max_txid,
            bytes.into(),
            file.timestamp_ms,
        )?;
        Ok(())
    }

    fn get(&self, file: &RemoteFile) -> RemoteResult<Vec<u8>> {
        Ok(ReplicaStore::get(self, &info(file))?.to_vec())
    }

    fn header_timestamp(&self, file: &RemoteFile) -> RemoteResult<i64> {
        let bytes = self.get_range(&info(file), 0..offloop_ltx::HEADER_SIZE as u64)?;
        let header = offloop_ltx::Header::decode(&bytes).map_err(|e| {
            RemoteError::transient(format!("replica file {}: {e}", info(file).name()))
        })?;
        Ok(header.timestamp)
    }

    fn delete(&self, files: &[RemoteFile]) -> RemoteResult<()> {
        let files: Vec<LtxFileInfo> = files.iter().map(info).collect();
        ReplicaStore::delete(self, &files)?;
        Ok(())
    }
}
