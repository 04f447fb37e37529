//! `Executor`: one connection, its statement cache and its open cursors, and
//! the code that runs a `Request` against them. An executor lives and dies on
//! its own thread; writer and readers differ only in what they feed it.

mod privileged;
mod savepoints;
mod shared_read;

use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{ffi, Connection};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::authorizer::{self, Failure, UserAuthorizer};
use crate::cache::{StatementCache, STATEMENT_CACHE_CAPACITY};
use crate::cancel::CancelToken;
use crate::changes::{Applied, Change, Changes};
use crate::cursor::Cursors;
use crate::error::{Error, Result};
use crate::functions::{Registered, Registrations};
use crate::image;
use crate::job::{Call, CursorRef, Outcome, Request};
use crate::role::Role;
use crate::session::{self, Sessions};
use crate::settings::{self, SettingsReport};
use crate::snapshot;
use crate::sql::Sql;
use crate::statement::RawStatement;
use crate::steps::{all_rows, column_info, first_rows, query_rows, run_to_end};
use crate::wal::checkpoint_waiting;
use crate::writer_wal::RequestedCheckpoints;

/// How often (in SQLite VM instructions) a cancellable job's connection
/// checks its token: a few microseconds of work between checks, each far
/// cheaper than the instructions between them.
const CANCEL_CHECK_OPS: std::os::raw::c_int = 1000;

pub struct Executor {
    // Field order is drop order: statements are finalized before the
    // connection closes.
    cursors: Cursors,
    cache: StatementCache,
    /// Nested transactions open inside the current one (`nest`).
    savepoints: u32,
    role: Role,
    /// Writer only: set while preparing a statement that reads state of
    /// this connection alone (see `authorizer.rs`).
    state_reads: Option<Arc<AtomicBool>>,
    /// Writer only: set once a statement set a pragma of the connection's
    /// own, created a TEMP object or attached a database: state an idle
    /// close would lose (see `doze.rs`).
    set_pragma: Option<Arc<AtomicBool>>,
    /// The user functions this connection carries so far.
    registered: Registered,
    /// The limits, flags and extensions this connection carries so far.
    changes: Applied,
    /// Set while a read snapshot holds this session: its statements are
    /// judged by `snapshot::refusal` before they run (always on a reader).
    snapshot: bool,
    /// Writer only: how it runs a requested checkpoint.
    checkpoints: Option<RequestedCheckpoints>,
    /// Writer only: the sessions recording its changes (deleted before
    /// the connection closes, as SQLite requires).
    sessions: Sessions,
    /// What the caller's authorizer failed with while the current job
    /// prepared a statement (`authorizer::explain`).
    auth_failure: Failure,
    /// Writer only: the database follows a replica, so the connection is
    /// `query_only` for every job but `Request::Privileged`.
    follower: bool,
    /// The caller's authorizer, if any, put back after privileged work.
    user_authorizer: Option<UserAuthorizer>,
    conn: Connection,
}

impl Executor {
    pub fn new(
        mut conn: Connection,
        role: Role,
        registrations: Arc<Registrations>,
        changes: Arc<Changes>,
    ) -> Self {
        // The writer prepares every SQL text first and so decides its route;
        // an authorizer that allows everything tells it which texts depend
        // on its own connection.
        let auth_failure = Failure::default();
        let set_pragma = (role == Role::Writer).then(|| Arc::new(AtomicBool::new(false)));
        let state_reads = (role == Role::Writer).then(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let installed = authorizer::install(
                &mut conn,
                role,
                Some(flag.clone()),
                set_pragma.clone(),
                None,
                auth_failure.clone(),
                false,
            );
            // Without the observer every query stays on the writer.
            if installed.is_err() {
                flag.store(true, Ordering::Relaxed);
            }
            flag
        });
        Executor {
            cursors: Cursors::default(),
            savepoints: 0,
            cache: StatementCache::new(STATEMENT_CACHE_CAPACITY),
            role,
            state_reads,
            set_pragma,
            registered: Registered::new(registrations),
            changes: Applied::new(changes),
            snapshot: false,
            checkpoints: None,
            sessions: Sessions::default(),
            auth_failure,
            follower: false,
            user_authorizer: None,
            conn,
        }
    }

    /// Marks the start (`true`) or the end of a read snapshot on this
    /// session.
    pub fn set_snapshot(&mut self, snapshot: bool) {
        self.snapshot = snapshot;
    }

    /// Why `stmt` may not run here: only a read snapshot or a reader
    /// refuses anything.
    fn refusal(&self, sql: &Sql, stmt: &RawStatement) -> Option<Error> {
        let judged = self.snapshot || matches!(self.role, Role::Reader(_));
        judged
            .then(|| snapshot::refusal(sql.text(), stmt))
            .flatten()
    }

    /// The writer's session runs requested checkpoints as `checkpoints`
    /// says.
    pub fn with_checkpoints(mut self, checkpoints: RequestedCheckpoints) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Which of its database's connections this is.
    pub fn role(&self) -> Role {
        self.role
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// While a cancellable job runs (`Some`), its statements check the token
    /// every `CANCEL_CHECK_OPS` instructions and stop once it is cancelled.
    /// The token's interrupt alone is not enough: SQLite clears an interrupt
    /// when a statement starts with none other running, so one that lands
    /// while the job prepares or binds would be dropped. If the handler
    /// cannot be set, the interrupt still stops a running statement.
    pub fn watch(&mut self, token: Option<Arc<CancelToken>>) {
        let _ = match token {
            Some(token) => self
                .conn
                .progress_handler(CANCEL_CHECK_OPS, Some(move || token.is_cancelled())),
            None => self.conn.progress_handler(0, None::<fn() -> bool>),
        };
    }

    fn handle(&self) -> *mut ffi::sqlite3 {
        // SAFETY: the handle is only used on this thread while `self.conn`
        // lives; rusqlite keeps ownership.
        unsafe { self.conn.handle() }
    }

    /// Whether a statement set a pragma of the connection's own, created a
    /// TEMP object or attached a database (writer).
    pub fn holds_connection_state(&self) -> bool {
        self.set_pragma
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// Whether a SQLite session records changes on this connection.
    pub fn has_sessions(&self) -> bool {
        !self.sessions.is_empty()
    }

    pub fn has_live_cursors(&self) -> bool {
        self.cursors.has_live()
    }

    /// Cursors open on this connection (half-read iterators), live or
    /// buffered.
    pub fn open_cursors(&self) -> usize {
        self.cursors.count()
    }

    pub fn execute(&mut self, request: Request) -> Result<Outcome> {
        self.auth_failure.reset();
        match self.run(request) {
            Ok(Outcome::Batch {
                results,
                failed: Some((index, error)),
            }) => Ok(Outcome::Batch {
                results,
                failed: Some((index, authorizer::explain(error, &self.auth_failure))),
            }),
            other => other.map_err(|e| authorizer::explain(e, &self.auth_failure)),
        }
    }

    fn run(&mut self, request: Request) -> Result<Outcome> {
        // A cursor's next chunk continues a statement already running.
        if !matches!(request, Request::NextChunk { .. } | Request::CloseCursor(_)) {
            for change in self.changes.pending() {
                // A change that fails here failed where it was made first
                // (an extension on the writer) or cannot fail (limits and
                // flags SQLite clamps itself).
                let _ = self.apply_change(&change);
            }
            self.registered.apply(&self.conn);
        }
        match request {
            Request::Exec(sql) => self.exec(&sql).map(|()| Outcome::Done),
            Request::Run(call) => self.with_statement(&call, run_to_end),
            Request::Get(call) => self.with_statement(&call, |stmt| {
                let (rows, ended) = first_rows(stmt, 1);
                ended?;
                Ok(Outcome::Rows(rows))
            }),
            Request::All(call) => self.with_statement(&call, all_rows),
            Request::Query(call) => self.with_statement(&call, query_rows),
            Request::Iterate { call, chunk_rows } => self.iterate(call, chunk_rows),
            Request::NextChunk { cursor, chunk_rows } => self.next_chunk(cursor, chunk_rows),
            Request::CloseCursor(cursor) => {
                self.cursors.close(cursor.id, &mut self.cache);
                Ok(Outcome::Done)
            }
            Request::Columns(sql) => {
                let call = Call {
                    sql,
                    params: Default::default(),
                    bind: Default::default(),
                };
                self.with_prepared(&call.sql, |stmt| Ok(Outcome::Columns(column_info(stmt))))
            }
            Request::Expand(call) => {
                self.with_statement(&call, |stmt| Ok(Outcome::Text(stmt.expanded_sql())))
            }
            // Reaches an executor only when no checkpointer runs.
            Request::StopCheckpointer => Ok(Outcome::Done),
            Request::Batch(calls) => self.batch(&calls),
            Request::Nest => self.nest().map(|()| Outcome::Done),
            Request::Unnest(commit) => self.unnest(commit).map(|()| Outcome::Done),
            // The thread loops dispatch these; here they are a misuse.
            Request::Scope(_) | Request::Commit | Request::Rollback => {
                Err(Error::invalid_state("no transaction is open"))
            }
            Request::Checkpoint(mode) => {
                let counts = match &self.checkpoints {
                    Some(checkpoints) => checkpoints.run(&self.conn, mode)?,
                    None => checkpoint_waiting(&self.conn, Some(mode), Duration::ZERO, None)?,
                };
                Ok(Outcome::Checkpoint {
                    log_frames: counts.log_frames,
                    checkpointed_frames: counts.checkpointed_frames,
                })
            }
            Request::LoadExtension { path, entry_point } => {
                let change = Change::Extension { path, entry_point };
                self.apply_change(&change)?;
                self.changes.push_applied(change);
                Ok(Outcome::Done)
            }
            Request::Session(request) => {
                let handle = self.handle();
                Ok(match self.sessions.run(handle, request)? {
                    Some(bytes) => Outcome::Bytes(bytes),
                    None => Outcome::Done,
                })
            }
            Request::ApplyChangeset {
                changeset,
                handlers,
            } => {
                let handle = self.handle();
                session::apply_changeset(handle, &changeset, &handlers, |sql| {
                    self.conn.execute_batch(sql).map_err(Error::from)
                })
                .map(Outcome::Applied)
            }
            Request::Serialize(schema) => {
                image::serialize(self.handle(), &schema).map(Outcome::Bytes)
            }
            Request::Deserialize { .. } if self.follower => Err(privileged::read_only_follower()),
            Request::Privileged(work) => self.privileged(work),
            Request::Promote => self.promote(),
            Request::Deserialize { schema, image } => {
                // Cached statements belong to the schema being replaced.
                self.cache.clear();
                image::deserialize(self.handle(), &schema, &image).map(|()| Outcome::Done)
            }
            Request::ReadSettings(settings) => {
                let role = self.role;
                let mut report = SettingsReport::default();
                report.insert(settings::read_back(&self.conn, role, &settings)?);
                Ok(Outcome::Settings(Box::new(report)))
            }
        }
    }

    fn apply_change(&mut self, change: &Change) -> Result<()> {
        match change {
            Change::Limit { id, value } => {
                // SAFETY: live handle on its own thread; SQLite ignores an
                // unknown id and clamps the value to its hard limit.
                unsafe { ffi::sqlite3_limit(self.handle(), *id, *value) };
                // Some limits (the SQL length, the column count) are
                // checked only when a statement is prepared: a statement
                // prepared after this call must meet them, as in
                // node:sqlite, so none is taken from the cache.
                self.cache.clear();
                Ok(())
            }
            Change::Authorizer(user) => {
                self.user_authorizer = user.clone();
                self.reinstall_authorizer()
            }
            Change::Defensive(on) => {
                let config = rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE;
                self.conn.set_db_config(config, *on)?;
                Ok(())
            }
            Change::Extension { path, entry_point } => {
                // SAFETY: loading runs the extension's own code on this
                // connection, which the caller asked for by name; the guard
                // enables loading only for this call, so no SQL statement
                // can load one meanwhile (nothing else runs on this thread).
                unsafe {
                    let _guard = rusqlite::LoadExtensionGuard::new(&self.conn)?;
                    self.conn.load_extension(path, entry_point.as_deref())?;
                }
                Ok(())
            }
        }
    }

    fn exec(&mut self, sql: &str) -> Result<()> {
        let sql = CString::new(sql)
            .map_err(|_| Error::sqlite(ffi::SQLITE_ERROR, "SQL text contains a NUL character"))?;
        let db = self.handle();
        // SAFETY: `db` is this executor's live connection; no callback and no
        // error-message out-pointer are passed, so SQLite only reads `sql`.
        let rc = unsafe {
            ffi::sqlite3_exec(
                db,
                sql.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            // SAFETY: same live handle, error of the call above.
            Err(unsafe { Error::from_handle(db) })
        }
    }

    /// A prepared statement for `sql`, from the cache or freshly prepared.
    /// A fresh one on the writer teaches `sql` its route; readers (which see
    /// a new text only inside a read snapshot) cannot tell what depends on
    /// the writer's connection, so they leave the route alone.
    fn obtain(&mut self, sql: &Sql) -> Result<RawStatement> {
        if let Some(stmt) = self.cache.take(sql.text()) {
            return Ok(stmt);
        }
        if let Some(flag) = &self.state_reads {
            flag.store(false, Ordering::Relaxed);
        }
        // SAFETY: the handle is live; the statement is kept only in this
        // executor (cache, cursors, locals), all dropped before `conn`.
        let prepared = unsafe { RawStatement::prepare(self.handle(), sql.text()) };
        let prepared = match self.role {
            // Offloop's reader authorizer refused, unless the caller's did.
            Role::Reader(_) if !self.auth_failure.caller_denied() => {
                prepared.map_err(snapshot::explain_reader_error)
            }
            Role::Reader(_) => prepared,
            Role::Writer | Role::Checkpointer => prepared,
        };
        match prepared? {
            Some(stmt) => {
                let query = self.state_reads.as_ref().map(|flag| {
                    let connection_bound = flag.load(Ordering::Relaxed);
                    stmt.readonly() && !connection_bound
                });
                sql.learn(query, || {
                    (1..=stmt.parameter_count())
                        .map(|i| stmt.parameter_name(i))
                        .collect()
                });
                Ok(stmt)
            }
            None => Err(Error::Misuse {
                code: "ERR_INVALID_ARG_VALUE",
                message: "The SQL query contains no statements.".into(),
            }),
        }
    }

    fn with_prepared<T>(
        &mut self,
        sql: &Sql,
        f: impl FnOnce(&mut RawStatement) -> Result<T>,
    ) -> Result<T> {
        let mut stmt = self.obtain(sql)?;
        let result = f(&mut stmt);
        self.cache.put(sql.text(), stmt);
        result
    }

    fn with_statement<T>(
        &mut self,
        call: &Call,
        f: impl FnOnce(&mut RawStatement) -> Result<T>,
    ) -> Result<T> {
        let mut stmt = self.obtain(&call.sql)?;
        let result = match self.refusal(&call.sql, &stmt) {
            Some(error) => Err(error),
            None => stmt
                .bind(&call.params, call.bind)
                .and_then(|()| f(&mut stmt)),
        };
        self.cache.put(call.sql.text(), stmt);
        result
    }

    fn iterate(&mut self, call: Call, chunk_rows: usize) -> Result<Outcome> {
        let mut stmt = self.obtain(&call.sql)?;
        let bound = match self.refusal(&call.sql, &stmt) {
            Some(error) => Err(error),
            None => stmt.bind(&call.params, call.bind),
        };
        if let Err(e) = bound {
            self.cache.put(call.sql.text(), stmt);
            return Err(e);
        }
        let (rows, ended) = first_rows(&mut stmt, chunk_rows);
        let columns = rows.columns.clone();
        let id = match ended {
            Err(e) if rows.values.is_empty() => {
                self.cache.put(call.sql.text(), stmt);
                return Err(e);
            }
            // The rows before the error come first; the error is the
            // cursor's next chunk (node:sqlite throws it from the `next()`
            // that reaches it).
            Err(e) => {
                self.cache.put(call.sql.text(), stmt);
                Some(self.cursors.defer_error(columns, e))
            }
            Ok(true) => {
                self.cache.put(call.sql.text(), stmt);
                None
            }
            Ok(false) => Some(self.cursors.open(call.sql, stmt, columns)),
        };
        let role = self.role;
        Ok(Outcome::Chunk {
            rows,
            cursor: id.map(|id| CursorRef { role, id }),
        })
    }

    fn next_chunk(&mut self, cursor: CursorRef, chunk_rows: usize) -> Result<Outcome> {
        let (rows, next) = self
            .cursors
            .next_chunk(cursor.id, chunk_rows, &mut self.cache)?;
        Ok(Outcome::Chunk {
            rows,
            cursor: next.map(|id| CursorRef {
                role: cursor.role,
                id,
            }),
        })
    }

    /// Steps every live cursor to its end and keeps the rows in memory, so
    /// the connection holds no read snapshot. Needed before the writer runs
    /// another job (an open statement would defer its autocommit) and when a
    /// reader serving a scope must serve a starving queue.
    pub fn park_cursors(&mut self) {
        self.cursors.park(&mut self.cache);
    }

    /// Runs each call in one transaction (a SAVEPOINT when one is open
    /// already). A statement with result columns returns its rows, others
    /// their run result; the first failure rolls everything back.
    fn batch(&mut self, calls: &[Call]) -> Result<Outcome> {
        let nested = !self.conn.is_autocommit();
        if nested {
            self.nest()?;
        } else {
            self.exec("BEGIN IMMEDIATE")?;
        }
        let rollback = |this: &mut Self| {
            let _ = if nested {
                this.unnest(false)
            } else {
                this.exec("ROLLBACK")
            };
        };
        let mut results = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            let outcome = self.with_statement(call, |stmt| {
                if stmt.column_count() == 0 {
                    run_to_end(stmt)
                } else {
                    all_rows(stmt)
                }
            });
            match outcome {
                Ok(outcome) => results.push(outcome),
                Err(error) => {
                    rollback(self);
                    return Ok(Outcome::Batch {
                        results,
                        failed: Some((index, error)),
                    });
                }
            }
        }
        let committed = if nested {
            self.unnest(true)
        } else {
            self.exec("COMMIT")
        };
        if let Err(error) = committed {
            rollback(self);
            return Ok(Outcome::Batch {
                results,
                failed: Some((calls.len(), error)),
            });
        }
        Ok(Outcome::Batch {
            results,
            failed: None,
        })
    }

    /// The id the next cursor will get: cursors opened after this mark can
    /// be told from older ones.
    pub fn cursor_mark(&self) -> u64 {
        self.cursors.mark()
    }

    /// Ends the cursors opened since `mark` (a scope's end with it).
    pub fn close_cursors_from(&mut self, mark: u64) {
        self.cursors.close_from(mark, &mut self.cache);
    }

    /// Stops whatever this connection runs; used by cancellation.
    pub fn interrupt_handle(&self) -> rusqlite::InterruptHandle {
        self.conn.get_interrupt_handle()
    }

    /// Drops every cached statement and cursor (before closing).
    pub fn finish(&mut self) {
        self.cursors.clear();
        self.cache.clear();
    }
}

/// The name of the nested transaction at `depth` (1 for the outermost).
fn savepoint_name(depth: u32) -> String {
    format!("offloop_nested_{depth}")
}
