//! The outbox: LTX files staged on local disk, waiting for upload, in the
//! replicator's folder next to the database. A staged file is complete and
//! synced before it gets its final name, so after a kill the outbox holds
//! only whole files, uploaded again on the next open (an upload is a put of
//! the same name and bytes, so a second one duplicates nothing).
//!
//! It owns the folder's naming and listing; it never uploads or decides
//! what to stage.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::remote::RemoteFile;

/// A staged file: what it will be in the replica, and where it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    pub file: RemoteFile,
    pub path: PathBuf,
    /// When its oldest commit happened (ms since the epoch): the lag while
    /// it waits.
    pub oldest_commit_ms: i64,
}

pub struct Outbox {
    dir: PathBuf,
}

impl Outbox {
    /// Opens the outbox folder, removing temp files a kill left behind.
    pub fn open(dir: &Path) -> io::Result<Outbox> {
        fs::create_dir_all(dir)?;
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                fs::remove_file(entry.path())?;
            }
        }
        Ok(Outbox {
            dir: dir.to_path_buf(),
        })
    }

    /// Where a file being staged is written before `commit`.
    pub fn temp_path(&self, level: u8, min: u64, max: u64) -> PathBuf {
        self.dir.join(format!("{}.tmp", name(level, min, max)))
    }

    /// Gives a fully written and synced temp file its final name.
    pub fn commit(&self, file: RemoteFile, oldest_commit_ms: i64) -> io::Result<Staged> {
        let temp = self.temp_path(file.level, file.min_txid, file.max_txid);
        let path = self
            .dir
            .join(name(file.level, file.min_txid, file.max_txid));
        fs::rename(&temp, &path)?;
        fs::File::open(&self.dir)?.sync_all()?;
        Ok(Staged {
            file,
            path,
            oldest_commit_ms,
        })
    }

    /// Staged files in upload order (by max TXID, then level).
    pub fn list(&self) -> io::Result<Vec<Staged>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some((level, min, max)) = parse(name) else {
                continue;
            };
            let meta = entry.metadata()?;
            let timestamp_ms = ltx_timestamp(&entry.path()).unwrap_or(0);
            out.push(Staged {
                file: RemoteFile {
                    level,
                    min_txid: min,
                    max_txid: max,
                    size: meta.len(),
                    timestamp_ms,
                },
                path: entry.path(),
                oldest_commit_ms: timestamp_ms,
            });
        }
        out.sort_by_key(|s| (s.file.max_txid, s.file.level));
        Ok(out)
    }

    /// Removes every staged file (the replica's chain starts again).
    pub fn clear(&self) -> io::Result<()> {
        for staged in self.list()? {
            self.remove(&staged)?;
        }
        Ok(())
    }

    pub fn remove(&self, staged: &Staged) -> io::Result<()> {
        match fs::remove_file(&staged.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn name(level: u8, min: u64, max: u64) -> String {
    format!("{level}-{min:016x}-{max:016x}.ltx")
}

fn parse(name: &str) -> Option<(u8, u64, u64)> {
    let stem = name.strip_suffix(".ltx")?;
    let mut parts = stem.split('-');
    let level = parts.next()?.parse().ok()?;
    let min = u64::from_str_radix(parts.next()?, 16).ok()?;
    let max = u64::from_str_radix(parts.next()?, 16).ok()?;
    parts.next().is_none().then_some((level, min, max))
}

/// The timestamp in a staged file's LTX header.
fn ltx_timestamp(path: &Path) -> Option<i64> {
    use std::os::unix::fs::FileExt;
    let file = fs::File::open(path).ok()?;
    let mut h = [0u8; offloop_ltx::HEADER_SIZE];
    file.read_exact_at(&mut h, 0).ok()?;
    offloop_ltx::Header::decode(&h).ok().map(|h| h.timestamp)
}
