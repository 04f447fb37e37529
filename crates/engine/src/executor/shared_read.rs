//! A reader's batch (see `reader.rs`): the read transaction several jobs
//! share, opened and ended with statements kept prepared in the executor's
//! cache. It runs no job itself.

use crate::error::{Error, Result};
use crate::statement::RawStatement;

use super::Executor;

impl Executor {
    /// Opens a read transaction that the next jobs share (a reader's batch,
    /// see `reader.rs`). It is deferred: the snapshot starts with the first
    /// statement that reads, after the batch was taken from the queue.
    pub fn begin_shared_read(&mut self) -> Result<()> {
        self.step_cached("BEGIN")
    }

    /// Ends the read transaction `begin_shared_read` opened, if a job did
    /// not end it already (an error SQLite answers with a rollback).
    pub fn end_shared_read(&mut self) {
        if !self.conn.is_autocommit() && self.step_cached("COMMIT").is_err() {
            let _ = self.exec("ROLLBACK");
        }
    }

    /// Runs a statement of the engine's own from the cache: a reader's
    /// BEGIN and COMMIT around every batch are not prepared each time.
    fn step_cached(&mut self, text: &'static str) -> Result<()> {
        let mut stmt = match self.cache.take(text) {
            Some(stmt) => stmt,
            // SAFETY: the handle is live; the statement is kept only in
            // this executor's cache, dropped before `conn`.
            None => match unsafe { RawStatement::prepare(self.handle(), text) }? {
                Some(stmt) => stmt,
                None => return Err(Error::invalid_state("an empty engine statement")),
            },
        };
        let stepped = stmt.step().map(|_| ());
        self.cache.put(text, stmt);
        stepped
    }
}
