//! After a restore into a new file: the replicator's state says the
//! database is the replica at the restored TXID, so replication carries
//! on from the next TXID instead of shipping a full image of what the
//! replica already holds.
//!
//! It writes only the replicator's folder beside the database, and only
//! for a database that has no WAL yet (a fresh restore).

use std::fs;
use std::io;
use std::path::Path;

use offloop_ltx::Txid;

use crate::capture::{CaptureLog, CaptureStart};
use crate::rejoin::URL_FILE;
use crate::renewer::HOLDER_FILE;
use crate::stager::BEFORE_WAL;
use crate::worker::state_dir;

/// What a restore does with the lease holder's id (and the URL it holds
/// the lease of) in the replicator folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseHolder {
    /// Dropped with the rest: the restored database is a new holder.
    Drop,
    /// Kept: the lease was taken under that id for this very restore.
    Keep,
}

/// Records that the database at `db` is the replica's state at `txid`
/// (`page_size`, `commit` pages): the next file replication ships is
/// `txid + 1`. Any state a previous database at that path left is
/// dropped, but for the lease holder's id when `holder` keeps it. Call
/// before the database is opened.
pub fn continue_after_restore(
    db: &Path,
    txid: Txid,
    page_size: u32,
    commit: u32,
    holder: LeaseHolder,
) -> io::Result<()> {
    let dir = state_dir(db);
    let kept: &[&str] = match holder {
        LeaseHolder::Drop => &[],
        LeaseHolder::Keep => &[HOLDER_FILE, URL_FILE],
    };
    match fs::read_dir(&dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry?;
                if kept.iter().any(|k| entry.file_name() == *k) {
                    continue;
                }
                if entry.file_type()?.is_dir() {
                    fs::remove_dir_all(entry.path())?;
                } else {
                    fs::remove_file(entry.path())?;
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(&dir)?;
    let mut log = CaptureLog::create(
        &dir.join("capture"),
        CaptureStart {
            page_size,
            base_commit: commit,
            next_txid: txid.next(),
            // Before any WAL: the first WAL the database makes starts the
            // chain.
            from: BEFORE_WAL,
        },
    )?;
    log.make_durable()
}
