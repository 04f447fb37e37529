//! What a read snapshot (`db.read()`) refuses, and the error each refusal
//! gives, whichever connection serves the snapshot: a reader, or the writer
//! when there are no readers (`readers: 0`, in-memory databases). A snapshot
//! only reads, and its BEGIN and its end belong to offloop: a statement that
//! could write, or that would end or nest its transaction, is refused before
//! it steps. The same rules make a reader's own odd statements (a
//! checkpoint, a journal-mode change) fail at once instead of failing deep
//! in SQLite or waiting out the busy timeout.
//!
//! This module only judges statements; it never routes, prepares or steps
//! one, and never changes a connection's state.

use rusqlite::ffi;

use crate::error::Error;
use crate::sql::first_keyword;
use crate::statement::RawStatement;

/// Statements that begin, end or nest a transaction. `sqlite3_stmt_readonly`
/// is true for all of them, so they need naming.
const TRANSACTION_CONTROL: [&str; 6] =
    ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"];

/// Statements that change what the connection sees without writing a file
/// (`sqlite3_stmt_readonly` is true for them too): a reader's authorizer
/// refuses them, and so must the writer while it serves a snapshot.
const CONNECTION_CHANGES: [&str; 2] = ["ATTACH", "DETACH"];

/// Why `sql` (prepared as `stmt`) may not run in a read snapshot, if it
/// may not. `sqlite3_stmt_readonly` is false for anything that writes,
/// including `PRAGMA wal_checkpoint`, `PRAGMA journal_mode` and `VACUUM`.
pub fn refusal(sql: &str, stmt: &RawStatement) -> Option<Error> {
    let keyword = first_keyword(sql);
    let is = |list: &[&str]| list.iter().any(|k| keyword.eq_ignore_ascii_case(k));
    if is(&TRANSACTION_CONTROL) {
        return Some(Error::invalid_state(
            "BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT and RELEASE cannot run inside db.read(): \
             the read snapshot begins and ends with its callback",
        ));
    }
    if is(&CONNECTION_CHANGES) || !stmt.readonly() {
        return Some(write_refused());
    }
    None
}

/// The error of a statement that could write, run in a read snapshot or on
/// a reader: SQLite's SQLITE_READONLY, with a message that says where the
/// statement belongs instead.
pub fn write_refused() -> Error {
    Error::sqlite(
        ffi::SQLITE_READONLY,
        "attempt to write a readonly database: db.read() and the reader threads are \
         read-only, and this statement can write (write with db.transaction(), db.batch() \
         or a statement of the database; checkpoint with db.checkpoint())",
    )
}

/// A reader's authorizer refuses, at prepare time, every statement that
/// could write or change the connection; SQLite reports that as
/// SQLITE_AUTH "not authorized". Said as `write_refused`, so a write through
/// a snapshot fails the same way on a reader as on the writer.
pub fn explain_reader_error(error: Error) -> Error {
    match error {
        Error::Sqlite { code, .. } if code == ffi::SQLITE_AUTH => write_refused(),
        other => other,
    }
}
