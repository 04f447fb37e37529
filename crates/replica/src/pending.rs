//! The outbox: LTX files staged on local disk, waiting for upload, in the
//! replicator's folder next to the database. A staged file is complete and
//! synced before it gets its final name, so after a kill the outbox holds
//! only whole files, uploaded again on the next open (an upload is a put of
//! the same name and bytes, so a second one duplicates nothing).
//!
//! It owns the folder's naming and keeps its listing in memory (read once
//! at open), so the replicator can report what waits on every capture
//! without touching the disk; it never uploads or decides what to stage.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use offloop_file::PositionedIo;
use offloop_ltx::Txid;

use crate::store::LtxFile;

/// A staged file: what it will be in the replica, and where it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    pub file: LtxFile,
    pub path: PathBuf,
    /// When its oldest commit happened (ms since the epoch): the lag while
    /// it waits.
    pub oldest_commit_ms: i64,
}

pub struct Outbox {
    dir: PathBuf,
    /// The staged files, in upload order (by max TXID, then level).
    staged: Vec<Staged>,
}

impl Outbox {
    /// Opens the outbox folder, removing temp files a kill left behind,
    /// and lists what waits.
    pub fn open(dir: &Path) -> io::Result<Outbox> {
        fs::create_dir_all(dir)?;
        let mut staged = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".tmp") {
                fs::remove_file(entry.path())?;
                continue;
            }
            let Some((level, min_txid, max_txid)) = parse(name) else {
                continue;
            };
            let timestamp_ms = ltx_timestamp(&entry.path()).unwrap_or(0);
            staged.push(Staged {
                file: LtxFile {
                    level,
                    min_txid,
                    max_txid,
                    size: entry.metadata()?.len(),
                    timestamp_ms,
                },
                path: entry.path(),
                oldest_commit_ms: timestamp_ms,
            });
        }
        staged.sort_by_key(|s| (s.file.max_txid, s.file.level));
        Ok(Outbox {
            dir: dir.to_path_buf(),
            staged,
        })
    }

    /// Where a file being staged is written before `commit`.
    pub fn temp_path(&self, level: u8, min: Txid, max: Txid) -> PathBuf {
        self.dir.join(format!("{}.tmp", name(level, min, max)))
    }

    /// Gives a fully written and synced temp file its final name.
    pub fn commit(&mut self, file: LtxFile, oldest_commit_ms: i64) -> io::Result<Staged> {
        let temp = self.temp_path(file.level, file.min_txid, file.max_txid);
        let path = self
            .dir
            .join(name(file.level, file.min_txid, file.max_txid));
        fs::rename(&temp, &path)?;
        offloop_file::sync_dir(&self.dir)?;
        let staged = Staged {
            file,
            path,
            oldest_commit_ms,
        };
        self.staged.retain(|s| s.path != staged.path);
        self.staged.push(staged.clone());
        self.staged.sort_by_key(|s| (s.file.max_txid, s.file.level));
        Ok(staged)
    }

    /// Staged files in upload order.
    pub fn staged(&self) -> &[Staged] {
        &self.staged
    }

    /// Removes every staged file (the replica's chain starts again).
    pub fn clear(&mut self) -> io::Result<()> {
        for staged in self.staged.clone() {
            self.remove(&staged)?;
        }
        Ok(())
    }

    pub fn remove(&mut self, staged: &Staged) -> io::Result<()> {
        self.staged.retain(|s| s.path != staged.path);
        match fs::remove_file(&staged.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn name(level: u8, min: Txid, max: Txid) -> String {
    format!("{level}-{min}-{max}.ltx")
}

fn parse(name: &str) -> Option<(u8, Txid, Txid)> {
    let stem = name.strip_suffix(".ltx")?;
    let mut parts = stem.split('-');
    let level = parts.next()?.parse().ok()?;
    let min = Txid::from_hex(parts.next()?)?;
    let max = Txid::from_hex(parts.next()?)?;
    parts.next().is_none().then_some((level, min, max))
}

/// The timestamp in a staged file's LTX header.
fn ltx_timestamp(path: &Path) -> Option<i64> {
    let file = fs::File::open(path).ok()?;
    let mut h = [0u8; offloop_ltx::HEADER_SIZE];
    file.read_exact_at(&mut h, 0).ok()?;
    offloop_ltx::Header::decode(&h).ok().map(|h| h.timestamp)
}
