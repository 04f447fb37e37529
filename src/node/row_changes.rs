//! SQLite's update hook on the writer, for `offloop/sqlite3`'s `change`
//! event: JS turns the recording on or off and takes what the writer
//! recorded (`offloop_engine::RowChanges`). Taking copies a few strings out
//! of a list under a lock; it never touches SQLite on the JS thread.

use napi_derive::napi;
use offloop_engine::RowOp;

use super::database::NativeDatabase;

/// One changed row, as sqlite3's `change` event hands it on.
#[napi(object)]
pub struct RowChangeRecord {
    /// `insert`, `update` or `delete`.
    pub op: String,
    pub database: String,
    pub table: String,
    pub rowid: f64,
}

/// Records the rows the writer changes from its next job on (`true`), or
/// stops and forgets what was not taken (`false`).
#[napi(catch_unwind)]
pub fn want_row_changes(db: &NativeDatabase, on: bool) {
    db.engine().settings().row_changes.set_wanted(on);
}

/// The rows changed since the last call, oldest first.
#[napi(catch_unwind)]
pub fn take_row_changes(db: &NativeDatabase) -> Vec<RowChangeRecord> {
    let op = |op: RowOp| match op {
        RowOp::Insert => "insert",
        RowOp::Update => "update",
        RowOp::Delete => "delete",
    };
    db.engine()
        .settings()
        .row_changes
        .take()
        .into_iter()
        .map(|c| RowChangeRecord {
            op: op(c.op).to_string(),
            database: c.database,
            table: c.table,
            // sqlite3 hands rowids on as JS numbers too.
            rowid: c.rowid as f64,
        })
        .collect()
}
