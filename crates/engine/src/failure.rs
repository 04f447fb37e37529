//! `Failure`: the fail-closed state of one database. When its writer dies
//! (a panic that escaped the per-job `catch_unwind`), nothing can write or
//! commit any more, so the database refuses everything from then on with
//! one clear error, rather than half working: every queued and later call
//! rejects with it, and `close()` still resolves.
//!
//! It only records and reports; the threads decide when to fail.

use std::sync::OnceLock;

use crate::error::Error;

#[derive(Default)]
pub struct Failure(OnceLock<Error>);

impl Failure {
    /// Fails the database with `error` (the first failure stands).
    pub fn fail(&self, error: Error) {
        let _ = self.0.set(error);
    }

    /// The error every call gets, once the database has failed.
    pub fn error(&self) -> Option<Error> {
        self.0.get().cloned()
    }
}

/// The error of a database whose writer died.
pub fn writer_died(detail: &str) -> Error {
    Error::Panic {
        message: format!(
            "offloop internal error: the writer thread died ({detail}); the database is \
             closed to every call: close() it and open it again"
        ),
    }
}
