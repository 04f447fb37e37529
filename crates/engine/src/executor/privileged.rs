//! The writer's side of a database that follows a replica: its
//! connection refuses the application's writes (`query_only`, with an
//! authorizer that keeps it on), and `Request::Privileged` work (a
//! follower's apply) runs with writes allowed, until `Request::Promote`
//! makes it an ordinary writer. It never decides what that work does.

use rusqlite::ffi;

use super::Executor;
use crate::authorizer;
use crate::error::{Error, Result};
use crate::job::{Outcome, Privileged};

impl Executor {
    /// The writer of a database that follows a replica: its connection is
    /// already `query_only` (see `open_writer`) and its authorizer refuses
    /// to change that, so only `Request::Privileged` writes.
    pub fn following(mut self, follower: bool) -> Self {
        if follower {
            self.follower = true;
            if self.reinstall_authorizer().is_err() {
                // Without the guard the connection must not serve at all.
                self.follower_unguarded();
            }
        }
        self
    }

    /// The authorizer for this role and the caller's, again.
    pub(super) fn reinstall_authorizer(&mut self) -> Result<()> {
        authorizer::install(
            &mut self.conn,
            self.role,
            self.state_reads.clone(),
            self.set_pragma.clone(),
            self.user_authorizer.clone(),
            self.auth_failure.clone(),
            self.follower,
        )
    }

    /// A follower whose authorizer could not be put in place refuses
    /// every statement, so `query_only` cannot be lifted by one.
    fn follower_unguarded(&mut self) {
        let _ = self
            .conn
            .authorizer(Some(|_: rusqlite::hooks::AuthContext<'_>| {
                rusqlite::hooks::Authorization::Deny
            }));
    }

    /// Runs `work` with writes allowed: `query_only` lifted, the defensive
    /// flag off (it forbids writing `sqlite_dbpage`) and only offloop's
    /// own authorizer asked; all three are put back whatever `work` did.
    pub(super) fn privileged(&mut self, work: Privileged) -> Result<Outcome> {
        let defensive = rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE;
        let was_defensive = self.conn.db_config(defensive)?;
        let (user, follower) = (self.user_authorizer.take(), self.follower);
        // Unguarded for the length of the work: the guard refuses the very
        // pragma that lifts `query_only`.
        self.follower = false;
        let lifted = self
            .reinstall_authorizer()
            .and_then(|()| Ok(self.conn.pragma_update(None, "query_only", false)?))
            .and_then(|()| Ok(self.conn.set_db_config(defensive, false).map(|_| ())?));
        let result = lifted.and_then(|()| (work.0)(&self.conn));
        let restored = self
            .conn
            .set_db_config(defensive, was_defensive)
            .map(|_| ())
            .map_err(Error::from)
            .and_then(|()| Ok(self.conn.pragma_update(None, "query_only", follower)?));
        (self.user_authorizer, self.follower) = (user, follower);
        let guarded = restored.and_then(|()| self.reinstall_authorizer());
        if guarded.is_err() && follower {
            self.follower_unguarded();
        }
        result
    }

    /// The follower's writer becomes an ordinary one: writes allowed from
    /// now on (`Request::Promote`). A writer that never followed is left
    /// as it is.
    pub(super) fn promote(&mut self) -> Result<Outcome> {
        if !self.follower {
            return Ok(Outcome::Done);
        }
        self.follower = false;
        self.reinstall_authorizer()?;
        self.conn.pragma_update(None, "query_only", false)?;
        Ok(Outcome::Done)
    }
}

/// What a follower's writer answers where the application asks it to
/// write by a route SQLite's `query_only` does not see.
pub(super) fn read_only_follower() -> Error {
    Error::sqlite(
        ffi::SQLITE_READONLY,
        "attempt to write a readonly database: the database follows a replica",
    )
}
