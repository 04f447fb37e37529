//! Nested transactions on one connection: SAVEPOINTs the engine names
//! after their depth (batches inside a transaction, `tx.transaction()`).

use crate::error::{Error, Result};

use super::{savepoint_name, Executor};

impl Executor {
    /// Opens a nested transaction: a SAVEPOINT named after its depth. The
    /// engine alone names these (batches inside a transaction, and
    /// `tx.transaction()`), so the depth it counts is the truth.
    pub(super) fn nest(&mut self) -> Result<()> {
        let name = savepoint_name(self.savepoints + 1);
        self.exec(&format!("SAVEPOINT {name}"))?;
        self.savepoints += 1;
        Ok(())
    }

    /// Ends the innermost nested transaction, keeping (`commit`) or undoing
    /// its changes.
    pub(super) fn unnest(&mut self, commit: bool) -> Result<()> {
        if self.savepoints == 0 || self.conn.is_autocommit() {
            self.savepoints = 0;
            return Err(Error::invalid_state("no nested transaction is open"));
        }
        let name = savepoint_name(self.savepoints);
        self.savepoints -= 1;
        if commit {
            self.exec(&format!("RELEASE {name}"))
        } else {
            self.exec(&format!("ROLLBACK TO {name}; RELEASE {name}"))
        }
    }

    /// Forgets the nesting depth: the transaction around it ended.
    pub fn reset_savepoints(&mut self) {
        self.savepoints = 0;
    }
}
