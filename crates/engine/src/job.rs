//! Jobs: what a caller asks of the engine, and what it gets back. Plain Rust
//! data in both directions; the caller supplies the completion callback.

use std::sync::Arc;
use std::time::Instant;

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::role::Role;
use crate::scope::ScopeStart;
use crate::session::{ChangesetHandlers, SessionRequest};
use crate::settings::Settings;
use crate::settings::SettingsReport;
use crate::sql::Sql;
use crate::value::{BindOptions, Params, RowSet};
use crate::wal::CheckpointMode;

/// One statement execution: the SQL, its parameters and how to bind them.
#[derive(Debug, Clone)]
pub struct Call {
    pub sql: Arc<Sql>,
    pub params: Params,
    pub bind: BindOptions,
}

/// A cursor left open by `Iterate`, to be continued by `NextChunk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CursorRef {
    pub role: Role,
    pub id: u64,
}

#[derive(Debug)]
pub enum Request {
    /// Runs every statement of the text (`sqlite3_exec`), results discarded.
    Exec(String),
    /// Steps to the end; returns the change count and last rowid.
    Run(Call),
    /// The first row, or none.
    Get(Call),
    /// Every row.
    All(Call),
    /// Every row, the result columns' metadata and what the statement
    /// changed, in one job (`query()`, for SQL whose kind the caller does
    /// not know).
    Query(Call),
    /// Up to `chunk_rows` rows, and a cursor if more remain.
    Iterate { call: Call, chunk_rows: usize },
    /// The next rows of an open cursor.
    NextChunk {
        cursor: CursorRef,
        chunk_rows: usize,
    },
    /// Finishes a cursor early.
    CloseCursor(CursorRef),
    /// Column metadata of the statement (`columns()`).
    Columns(Arc<Sql>),
    /// The SQL with the parameters substituted (`expandedSQL`).
    Expand(Call),
    /// A WAL checkpoint (`db.checkpoint(mode)`), on the checkpointer when it
    /// runs, else on the writer.
    Checkpoint(CheckpointMode),
    /// Ends the checkpointer thread; automatic checkpoints go back to the
    /// writer's connection.
    StopCheckpointer,
    /// Several statements in one transaction (a SAVEPOINT inside an open
    /// one): each returns its rows, or its run result when it has no
    /// columns. The first failure rolls the whole batch back.
    Batch(Vec<Call>),
    /// Holds the thread that takes it for a transaction or a read snapshot,
    /// serving only the scope's own queue until it ends.
    Scope(ScopeStart),
    /// Ends a scope: COMMIT (or, for a read snapshot, its end).
    Commit,
    /// Ends a scope with ROLLBACK.
    Rollback,
    /// Inside a write scope: opens a nested transaction, a SAVEPOINT the
    /// engine names after the nesting depth.
    Nest,
    /// Ends the innermost nested transaction: RELEASE (`true`), or ROLLBACK
    /// TO and RELEASE (`false`).
    Unnest(bool),
    /// Loads a SQLite extension on the writer; once it loaded, every other
    /// connection loads it before its next job (`db.loadExtension()`).
    LoadExtension {
        path: String,
        entry_point: Option<String>,
    },
    /// A session's call, on the writer (`db.createSession()`).
    Session(SessionRequest),
    /// Applies a changeset on the writer (`db.applyChangeset()`).
    ApplyChangeset {
        changeset: Vec<u8>,
        handlers: ChangesetHandlers,
    },
    /// Schema `.0`'s image as bytes (`db.serialize()`), on the writer.
    Serialize(String),
    /// Replaces a schema with an in-memory database holding `image`
    /// (`db.deserialize()`), on the writer.
    Deserialize { schema: String, image: Vec<u8> },
    /// Reads the connection's settings back and compares them with these
    /// (`db.settings()` sends one to every connection).
    ReadSettings(Arc<Settings>),
    /// Work of offloop's own on the writer's connection with writes
    /// allowed, the one way a follower's writer writes (see `Privileged`).
    Privileged(Privileged),
    /// A follower's writer becomes an ordinary one, for good: `query_only`
    /// lifted and its guard gone (the database was promoted to its
    /// replica's writer, which from then on refuses commits it may not
    /// make through the WAL observer instead).
    Promote,
}

/// Work that runs on the writer's connection with `query_only` lifted,
/// the defensive flag off and only offloop's authorizer asked: a
/// follower applying a replica's pages. The engine runs it and knows
/// nothing of what it does.
pub struct Privileged(pub PrivilegedWork);

/// What `Privileged` runs: given the writer's connection, its outcome.
pub type PrivilegedWork = Box<dyn FnOnce(&rusqlite::Connection) -> Result<Outcome> + Send>;

impl std::fmt::Debug for Privileged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Privileged")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnInfo {
    pub name: String,
    pub column: Option<String>,
    pub database: Option<String>,
    pub table: Option<String>,
    pub decl_type: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum Outcome {
    Done,
    Run {
        changes: i64,
        last_insert_rowid: i64,
    },
    Rows(RowSet),
    /// `query()`: `changes` and `last_insert_rowid` are 0 when the
    /// statement changed no row.
    Query {
        columns: Vec<ColumnInfo>,
        rows: RowSet,
        changes: i64,
        last_insert_rowid: i64,
    },
    Chunk {
        rows: RowSet,
        cursor: Option<CursorRef>,
    },
    Columns(Vec<ColumnInfo>),
    Text(Option<String>),
    Checkpoint {
        log_frames: u64,
        checkpointed_frames: u64,
    },
    /// Connection settings as read back: every connection's for an open
    /// (with what differs from the request) and `db.settings()`; a single
    /// thread answers `ReadSettings` with its own connection's.
    Settings(Box<SettingsReport>),
    /// A changeset or patchset.
    Bytes(Vec<u8>),
    /// Whether a changeset applied (false: a conflict aborted it).
    Applied(bool),
    /// A backup finished: the source's page count.
    Pages(u64),
    /// A number the caller names: a replica call's TXID (0 while the
    /// replica holds nothing of the database).
    Number(u64),
    /// A backup copied a step and has pages left: not the end of its job
    /// (its completion may be called with these before its outcome).
    Progress {
        total_pages: u64,
        remaining_pages: u64,
    },
    /// Each statement's outcome, up to the one that failed (if any), whose
    /// index and error are given; a failed batch was rolled back.
    Batch {
        results: Vec<Outcome>,
        failed: Option<(usize, Error)>,
    },
}

/// Called exactly once, on a SQLite thread, with the job's result.
pub type Done = Box<dyn FnOnce(Result<Outcome>) + Send>;

/// A request on its way to a thread. A job dropped without running (its
/// database closed under it) reports `ERR_INVALID_STATE`, so no caller is
/// left waiting.
///
/// Boxed: a queue keeps a block of 31 slots from its first job on, for as
/// long as the database is open, and a slot holds a pointer rather than
/// the job's 112 bytes (3.7 KiB a queue, a tenant at rest's largest part).
pub struct Job(Box<Parts>);

/// What a `Job` carries.
pub struct Parts {
    pub request: Request,
    done: Option<Done>,
    pub enqueued: Instant,
    /// Set for calls that can be aborted or time out.
    pub cancel: Option<Arc<CancelToken>>,
}

impl std::ops::Deref for Job {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl std::ops::DerefMut for Job {
    fn deref_mut(&mut self) -> &mut Parts {
        &mut self.0
    }
}

impl Job {
    pub fn new(request: Request, done: Done) -> Self {
        Job(Box::new(Parts {
            request,
            done: Some(done),
            enqueued: Instant::now(),
            cancel: None,
        }))
    }

    pub fn with_cancel(mut self, token: Option<Arc<CancelToken>>) -> Self {
        self.cancel = token;
        self
    }

    /// Splits the job into its request and its completion.
    pub fn take(mut self) -> (Request, Done) {
        let done = self.done.take().expect("a job completes once");
        let request = std::mem::replace(&mut self.request, Request::Exec(String::new()));
        (request, done)
    }

    /// Completes the job with `error` without running it. A pinning job
    /// ends its scope with the same error, so the scope's statements
    /// report it too.
    pub fn fail(self, error: Error) {
        let (request, done) = self.take();
        if let Request::Scope(pinned) = request {
            pinned.end(error.clone());
        }
        complete(done, Err(error));
    }

    /// The cursor this job continues, if any: it must go to that cursor's
    /// thread, and does not make the thread give its cursors up.
    pub fn cursor(&self) -> Option<CursorRef> {
        match self.request {
            Request::NextChunk { cursor, .. } | Request::CloseCursor(cursor) => Some(cursor),
            _ => None,
        }
    }
}

impl Drop for Parts {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            // Dropped by a thread unwinding from a panic that escaped the
            // jobs' own catch_unwind: the thread died with this job in hand.
            let error = if std::thread::panicking() {
                Error::Panic {
                    message: "offloop internal error: the database thread running this call \
                              died (a panic); the call did not complete"
                        .into(),
                }
            } else {
                Error::closed()
            };
            complete(done, Err(error));
        }
    }
}

/// Calls a completion. One that panics must not take the calling thread,
/// and with it the connection every later job needs, down with it.
pub fn complete(done: Done, result: Result<Outcome>) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(result)));
}
