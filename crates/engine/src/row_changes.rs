//! Row changes for a caller that asked to hear them (the `change` event of
//! `offloop/sqlite3`, which is SQLite's update hook): which rows the
//! writer's statements inserted, updated or deleted, in order.
//!
//! It owns the wish (on or off, settable at any time) and the log the
//! writer appends to and the caller takes from. The writer installs the
//! hook before its next job once the wish changes (`sync_hook`); while it
//! is off nothing is recorded and the writer pays nothing. It never
//! delivers anything itself: the caller takes the log when it likes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::hooks::Action;
use rusqlite::Connection;

/// What a statement did to one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOp {
    Insert,
    Update,
    Delete,
}

/// One row changed by the writer, as SQLite's update hook reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowChange {
    pub op: RowOp,
    /// The schema: `main`, `temp` or an attached database's name.
    pub database: String,
    pub table: String,
    pub rowid: i64,
}

#[derive(Debug, Default)]
pub struct RowChanges {
    wanted: AtomicBool,
    log: Mutex<Vec<RowChange>>,
}

impl RowChanges {
    /// Turns recording on or off, from the writer's next job. Turning it
    /// off drops what was not taken.
    pub fn set_wanted(&self, on: bool) {
        self.wanted.store(on, Ordering::Release);
        if !on {
            self.lock().clear();
        }
    }

    pub fn is_wanted(&self) -> bool {
        self.wanted.load(Ordering::Acquire)
    }

    /// Everything recorded since the last call, oldest first.
    pub fn take(&self) -> Vec<RowChange> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RowChange>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// On the writer's thread before each job: installs or removes the
    /// update hook on `conn` when the wish changed since `hooked` says.
    pub(crate) fn sync_hook(self: &Arc<Self>, conn: &mut Connection, hooked: &mut bool) {
        let want = self.is_wanted();
        if want == *hooked {
            return;
        }
        if !want {
            *hooked = conn
                .update_hook(None::<fn(Action, &str, &str, i64)>)
                .is_err();
            return;
        }
        let changes = self.clone();
        // Installed, or tried again before the next job.
        *hooked = conn
            .update_hook(Some(
                move |action: Action, database: &str, table: &str, rowid: i64| {
                    let op = match action {
                        Action::SQLITE_INSERT => RowOp::Insert,
                        Action::SQLITE_UPDATE => RowOp::Update,
                        Action::SQLITE_DELETE => RowOp::Delete,
                        _ => return,
                    };
                    if changes.is_wanted() {
                        changes.lock().push(RowChange {
                            op,
                            database: database.to_string(),
                            table: table.to_string(),
                            rowid,
                        });
                    }
                },
            ))
            .is_ok();
    }
}
