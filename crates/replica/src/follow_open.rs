//! What a follower does before its database's first connection opens, on
//! the writer's thread: a missing file is put in place from the replica
//! (restored whole, or created paged by the `restore: 'paged'` work of
//! `restore_at_open`, whose fill then runs while the follower applies), an
//! existing file is checked to be this replica's follower, and a paged
//! follower's unfinished fill is carried on. It says where the file
//! stands in the replica.
//!
//! It writes the follower's record and, through a restore, the database
//! file. It never applies a TXID and never runs once the database is open.

use std::path::Path;

use offloop_vfs::map_path;

use offloop_ltx::Txid;

use crate::follow_record::{FollowRecord, Position};
use crate::restore::{restore, RestoreOptions};
use crate::restore_at_open::paged_txid;
use crate::store::ReplicaStore;

/// The paged restore's work at open (`restore_at_open`): creates a missing
/// file paged, or carries on the fill a previous open left unfinished.
pub(crate) type PagedOpen = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Where the file stands once in place (as its record says, see
/// `follow_record`); `restored` when it was just restored at the
/// replica's newest TXID.
pub(crate) struct Placed {
    pub position: Position,
    pub restored: bool,
}

/// Puts the follower's file `db` in place from the replica at `url`
/// (`store` opens it when a restore needs it); `paged` does it page by
/// page instead of whole.
pub(crate) fn put_in_place(
    db: &Path,
    url: &str,
    store: &dyn Fn() -> Result<ReplicaStore, String>,
    paged: Option<&PagedOpen>,
) -> Result<Placed, String> {
    let record = FollowRecord::read(db).map_err(|e| e.to_string())?;
    if db.exists() {
        let record = record.ok_or_else(|| {
            format!(
                "{} was not made by a follower of {url}: it is left as it is (open \
                 another path to follow the replica)",
                db.display()
            )
        })?;
        if record.url != url {
            return Err(format!(
                "{} follows {}, not {url}: it is left as it is",
                db.display(),
                record.url
            ));
        }
        if map_path(db).exists() {
            // A paged follower's fill that did not finish: the missing
            // pages are still the replica's at the TXID the fill began
            // from (every page an apply changed since is in the WAL or
            // was written by a checkpoint, so is local).
            let paged = paged.ok_or_else(|| {
                format!(
                    "{} is a paged follower whose pages are not all local yet: open it \
                     with `restore: 'paged'` to carry on",
                    db.display()
                )
            })?;
            paged()?;
        }
        return Ok(Placed {
            position: record.position,
            restored: false,
        });
    }
    // Written first: a crash during the restore leaves a file whose state
    // is not known, which only a full image puts right.
    let write = |at: Option<Txid>| {
        FollowRecord {
            url: url.to_string(),
            position: Position::settled(at),
        }
        .write(db)
        .map_err(|e| format!("cannot write {}-follow: {e}", db.display()))
    };
    write(None)?;
    let txid = match paged {
        Some(paged) => {
            paged()?;
            paged_txid(db)
                .ok_or_else(|| format!("the paged restore of {} left no map", db.display()))?
        }
        None => {
            let options = RestoreOptions {
                // Only a stale -wal or -shm of a file that is gone is replaced.
                overwrite: true,
                ..RestoreOptions::default()
            };
            restore(&store()?, db, &options)
                .map_err(|e| format!("cannot restore {} from {url}: {e}", db.display()))?
                .txid
        }
    };
    write(Some(txid))?;
    Ok(Placed {
        position: Position::settled(Some(txid)),
        restored: true,
    })
}
