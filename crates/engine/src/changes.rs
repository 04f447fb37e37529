//! Connection changes: what a caller changes once on a database and every
//! connection that runs statements carries from then on (the writer, each
//! reader, readers started later): SQLite limits, the defensive flag, the
//! extensions loaded, the caller's authorizer. This file owns the
//! append-only log of those changes and how far each connection has
//! applied it; the executor applies them (it owns the connection). It never
//! decides a change's value, and the checkpointer, which runs no
//! statements, never applies them.
//!
//! A change made before a job was queued is applied by the connection that
//! runs the job before it runs it, as for user functions (`functions.rs`).

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::authorizer::UserAuthorizer;

/// One change to every connection.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// `sqlite3_limit(id, value)`: `id` is one of SQLite's `SQLITE_LIMIT_*`
    /// numbers.
    Limit { id: i32, value: i32 },
    /// The caller's authorizer, after offloop's own (`None`: offloop's
    /// alone).
    Authorizer(Option<UserAuthorizer>),
    /// `SQLITE_DBCONFIG_DEFENSIVE` on or off.
    Defensive(bool),
    /// An extension the writer loaded (`Request::LoadExtension`); the other
    /// connections load it before their next job.
    Extension {
        path: String,
        entry_point: Option<String>,
    },
}

/// The changes made on one database, in the order they were made.
#[derive(Default)]
pub struct Changes {
    log: Mutex<Vec<Change>>,
    /// `log.len()`, readable without the lock: the check every job makes.
    len: AtomicUsize,
}

impl fmt::Debug for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Changes({})", self.len.load(Ordering::Acquire))
    }
}

impl Changes {
    /// Adds a change; every connection applies it before its next job.
    pub fn push(&self, change: Change) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.push(change);
        self.len.store(log.len(), Ordering::Release);
    }

    fn since(&self, from: usize) -> Vec<Change> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }
}

/// How far one connection has applied a database's changes.
pub struct Applied {
    changes: Arc<Changes>,
    applied: usize,
}

impl Applied {
    pub fn new(changes: Arc<Changes>) -> Self {
        Applied {
            changes,
            applied: 0,
        }
    }

    /// The changes made since the last call, in order; the caller applies
    /// them all (a change that fails on one connection is not retried).
    pub fn pending(&mut self) -> Vec<Change> {
        if self.changes.len.load(Ordering::Acquire) == self.applied {
            return Vec::new();
        }
        let pending = self.changes.since(self.applied);
        self.applied += pending.len();
        pending
    }

    /// Records `change`, already applied on this connection, for the others.
    pub fn push_applied(&mut self, change: Change) {
        // Anything pushed meanwhile is still pending here: only skip the
        // new change itself when it is the next one.
        let mut log = self.changes.log.lock().unwrap_or_else(|e| e.into_inner());
        let next = log.len() == self.applied;
        log.push(change);
        self.changes.len.store(log.len(), Ordering::Release);
        if next {
            self.applied += 1;
        }
    }
}

/// The value each of SQLite's limits `0..count` has on a new connection,
/// which is also the highest it can be set to (SQLite starts every limit
/// at its hard limit). Read from a fresh in-memory connection, which opens
/// no file.
pub fn limit_defaults(count: i32) -> crate::error::Result<Vec<i32>> {
    let conn = rusqlite::Connection::open_in_memory()?;
    // SAFETY: a live handle used on this thread only; a negative value
    // reads a limit without changing it.
    let handle = unsafe { conn.handle() };
    Ok((0..count)
        // SAFETY: as above.
        .map(|id| unsafe { rusqlite::ffi::sqlite3_limit(handle, id, -1) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_sees_each_change_once_in_order() {
        let changes = Arc::new(Changes::default());
        let mut a = Applied::new(changes.clone());
        changes.push(Change::Defensive(false));
        changes.push(Change::Limit { id: 0, value: 5 });
        assert_eq!(
            a.pending(),
            vec![Change::Defensive(false), Change::Limit { id: 0, value: 5 }]
        );
        assert!(a.pending().is_empty());
        let mut late = Applied::new(changes.clone());
        assert_eq!(
            late.pending().len(),
            2,
            "a connection opened later gets them all"
        );
    }

    #[test]
    fn a_change_applied_by_its_maker_is_pending_only_for_the_others() {
        let changes = Arc::new(Changes::default());
        let mut writer = Applied::new(changes.clone());
        let mut reader = Applied::new(changes.clone());
        let ext = Change::Extension {
            path: "x".into(),
            entry_point: None,
        };
        writer.push_applied(ext.clone());
        assert!(writer.pending().is_empty());
        assert_eq!(reader.pending(), vec![ext]);
    }
}
