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
use crate::stager::BEFORE_WAL;
use crate::worker::state_dir;

/// Records that the database at `db` is the replica's state at `txid`
/// (`page_size`, `commit` pages): the next file replication ships is
/// `txid + 1`. Any state a previous database at that path left is
/// dropped. Call before the database is opened.
pub fn continue_after_restore(
    db: &Path,
    txid: Txid,
    page_size: u32,
    commit: u32,
) -> io::Result<()> {
    let dir = state_dir(db);
    match fs::remove_dir_all(&dir) {
        Ok(()) => {}
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
