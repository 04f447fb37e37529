//! A replicated database at rest: when its writer has been idle long
//! enough to close its connection (the engine's idle close, `doze.rs`
//! there), and everything it committed is in the replica, the replicator
//! lets go of what it holds for it too: its two read-only connections, the
//! WAL and `-shm` (checkpointed and removed, as at a close), and the
//! capture log. It leaves the clean-close record a close leaves, so the
//! writer's next open carries the chain on without a full image. An idle
//! tenant then holds no file and no connection; its lease is the
//! process's, renewed for every database at once.
//!
//! The engine asks (`may_rest`) and then tells (`rest`) on the writer's
//! lane, with the writer's connection closed in between, so no commit can
//! land meanwhile. The replication's steps do nothing while at rest, until
//! the writer's next open (`Worker::wake_from_rest`).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::settings::{PagedGate, ReplicaSettings};
use crate::shared::{Local, Shared};
use crate::stager::{state_dir, Chain};

/// A database larger than this keeps its replicator's files while idle:
/// resting reads the whole file twice (the clean-close record's checksum,
/// then its check at the next open), which a tenant's database pays in
/// microseconds and a large one in seconds.
pub(crate) const REST_MAX_BYTES: u64 = 256 << 20;

impl Shared {
    /// Whether the database may rest now: everything committed is
    /// captured, staged and shipped, the replication is healthy, and the
    /// file is small enough (`REST_MAX_BYTES`). The engine asks on the
    /// writer's lane, idle.
    pub(crate) fn may_rest(&self) -> bool {
        if self.rest.is_rested() || self.fenced().is_some() || !self.database_whole() {
            return false;
        }
        if self.counters.oldest_uncaptured_ms.load(Ordering::Acquire) != 0 {
            return false;
        }
        let small = self
            .rest
            .path()
            .and_then(|db| std::fs::metadata(db).ok())
            .is_some_and(|m| m.len() <= REST_MAX_BYTES);
        if !small {
            return false;
        }
        let local = self.local.lock().unwrap_or_else(|e| e.into_inner());
        let Local::Ready(stager) = &*local else {
            return false;
        };
        let captured_all = matches!(stager.chain(), Chain::Intact(log) if log.is_empty());
        captured_all && stager.outbox().staged().is_empty()
    }

    /// The writer closed its connection after `may_rest`: closes the read
    /// connections, checkpoints and removes the WAL, records the clean
    /// state and closes the capture log. Whether the database is at rest;
    /// if not (something was staged meanwhile, or another connection to
    /// the file holds frames in the WAL), the read connections open again
    /// and the replication goes on as before.
    pub(crate) fn rest(&self) -> bool {
        let Some(db) = self.rest.path() else {
            return false;
        };
        let _between_steps = self.rest.steps.lock().unwrap_or_else(|e| e.into_inner());
        // The read connections first, each under its own lock and never
        // with the local state's (a full image takes its connection's lock,
        // then the local state's).
        drop(self.pin.lock().unwrap_or_else(|e| e.into_inner()).take());
        drop(self.image.lock().unwrap_or_else(|e| e.into_inner()).take());
        close_last(&self.settings, &db);
        let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
        let clean = match &mut *local {
            Local::Ready(stager) => stager.mark_clean(&state_dir(&db)).unwrap_or(false),
            _ => false,
        };
        if clean {
            // The stager goes, and with it the capture log's file; a
            // checkpoint permit asked for before the next open waits.
            *local = Local::Waiting;
            self.rest.begin();
            // A step of the replication waiting for the stager (it began
            // just before the rest) gives up rather than wait for a wake
            // only the replication itself can process.
            self.local_changed.notify_all();
        }
        drop(local);
        if !clean {
            self.open_read_connections(&db);
        }
        clean
    }

    /// Opens the two read-only connections (see `pin` and `image`): the
    /// paged VFS for a database a paged restore put in place, the default
    /// one otherwise. Without them, checkpoints beside the writer are
    /// refused and full images fail (with the error recorded here) rather
    /// than risk a frame.
    pub(crate) fn open_read_connections(&self, db: &Path) {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let paged = self.settings.paged.as_ref().is_some_and(PagedGate::is_set);
        let read_only = || {
            let opened = if paged {
                Connection::open_with_flags_and_vfs(db, flags, offloop_vfs::VFS_NAME)
            } else {
                Connection::open_with_flags(db, flags)
            };
            opened
                .map_err(|e| self.set_error(format!("could not open a read connection: {e}")))
                .ok()
        };
        *self.pin.lock().unwrap_or_else(|e| e.into_inner()) = read_only();
        *self.image.lock().unwrap_or_else(|e| e.into_inner()) = read_only();
    }
}

/// Everything the WAL held is captured and shipped, and the writer's
/// connection closed before the replicator's read-only ones, which cannot
/// checkpoint: the WAL and the `-shm` are still there. The last connection
/// to a file that can write checkpoints and deletes both as it closes, so
/// one is opened and closed here, as SQLite's own last close would have
/// done. Another connection of the process to the file (the database's
/// checkpointer, opened for a nudge that waited at the connection cap
/// while the writer closed) keeps SQLite's close from doing either: so the
/// WAL is copied and truncated first, without waiting for a lock, and the
/// rest finds it empty. A file a paged restore is still filling is left as
/// it is, and so is one whose WAL a reader is reading now.
pub(crate) fn close_last(settings: &ReplicaSettings, db: &Path) {
    let filling = settings
        .paged
        .as_ref()
        .is_some_and(|gate| !gate.is_filled());
    if filling {
        return;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if let Ok(conn) = Connection::open_with_flags(db, flags) {
        // A connection opens the WAL with its first read; only then does
        // its close checkpoint and delete it.
        let _ = conn.busy_timeout(Duration::ZERO);
        let _ = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()));
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
}
