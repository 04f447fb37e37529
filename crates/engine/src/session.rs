//! `Session`: one connection, its statement cache and its open cursors, and
//! the code that runs a `Request` against them. A session lives and dies on
//! its own thread; writer and readers differ only in what they feed it.

use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::sync::Arc;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{ffi, Connection};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cache::{StatementCache, STATEMENT_CACHE_CAPACITY};
use crate::checkpoint::checkpoint;
use crate::error::{Error, Result};
use crate::job::{Call, ColumnInfo, CursorRef, Outcome, Request, Role};
use crate::observer::{CheckpointWrites, ObserverSlot};
use crate::pragmas::{self, ConnectionRole, SettingsReport};
use crate::sql::Sql;
use crate::statement::RawStatement;
use crate::value::{RowSet, Value};

enum Cursor {
    /// Still stepping its statement, which holds a read snapshot open.
    Live {
        sql: Arc<Sql>,
        stmt: RawStatement,
        columns: Arc<[String]>,
    },
    /// Stepped to the end ahead of the consumer so the connection could do
    /// other work (see `Session::park_cursors`).
    Buffered {
        columns: Arc<[String]>,
        values: VecDeque<Value>,
        error: Option<Error>,
    },
}

pub struct Session {
    // Field order is drop order: statements are finalized before the
    // connection closes.
    cursors: HashMap<u64, Cursor>,
    cache: StatementCache,
    next_cursor: u64,
    role: Role,
    /// Writer only: set while preparing a statement that reads state of
    /// this connection alone (see `reads_connection_state`).
    state_reads: Option<Arc<AtomicBool>>,
    /// Writer only: asked before a requested checkpoint.
    observer: Option<Arc<ObserverSlot>>,
    conn: Connection,
}

impl Session {
    pub fn new(mut conn: Connection, role: Role) -> Self {
        // The writer prepares every SQL text first and so decides its route;
        // an authorizer that allows everything tells it which texts depend
        // on its own connection.
        let state_reads = (role == Role::Writer).then(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let seen = flag.clone();
            let installed = conn.authorizer(Some(move |ctx: AuthContext<'_>| {
                if reads_connection_state(&ctx) {
                    seen.store(true, Ordering::Relaxed);
                }
                Authorization::Allow
            }));
            // Without the observer every query stays on the writer.
            if installed.is_err() {
                flag.store(true, Ordering::Relaxed);
            }
            flag
        });
        Session {
            cursors: HashMap::new(),
            cache: StatementCache::new(STATEMENT_CACHE_CAPACITY),
            next_cursor: 1,
            role,
            state_reads,
            observer: None,
            conn,
        }
    }

    /// The writer's session asks `observer` before checkpoints it runs.
    pub fn with_observer(mut self, observer: Arc<ObserverSlot>) -> Self {
        self.observer = Some(observer);
        self
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    fn handle(&self) -> *mut ffi::sqlite3 {
        // SAFETY: the handle is only used on this thread while `self.conn`
        // lives; rusqlite keeps ownership.
        unsafe { self.conn.handle() }
    }

    pub fn has_live_cursors(&self) -> bool {
        self.cursors
            .values()
            .any(|c| matches!(c, Cursor::Live { .. }))
    }

    pub fn execute(&mut self, request: Request) -> Result<Outcome> {
        match request {
            Request::Exec(sql) => self.exec(&sql).map(|()| Outcome::Done),
            Request::Run(call) => self.with_statement(&call, run_to_end),
            Request::Get(call) => self.with_statement(&call, |stmt| {
                let mut rows = RowSet::new(stmt.column_names().into());
                if stmt.step()? {
                    read_row(stmt, &mut rows);
                }
                Ok(Outcome::Rows(rows))
            }),
            Request::All(call) => self.with_statement(&call, all_rows),
            Request::Iterate { call, chunk_rows } => self.iterate(call, chunk_rows),
            Request::NextChunk { cursor, chunk_rows } => self.next_chunk(cursor, chunk_rows),
            Request::CloseCursor(cursor) => {
                self.close_cursor(cursor.id);
                Ok(Outcome::Done)
            }
            Request::Columns(sql) => {
                let call = Call {
                    sql,
                    params: Default::default(),
                    bind: Default::default(),
                };
                self.with_prepared(&call.sql, |stmt| {
                    let names = stmt.column_names();
                    let columns = names
                        .into_iter()
                        .enumerate()
                        .map(|(i, name)| {
                            let [database, table, column, decl_type] = stmt.column_origin(i);
                            ColumnInfo {
                                name,
                                column,
                                database,
                                table,
                                decl_type,
                            }
                        })
                        .collect();
                    Ok(Outcome::Columns(columns))
                })
            }
            Request::Expand(call) => {
                self.with_statement(&call, |stmt| Ok(Outcome::Text(stmt.expanded_sql())))
            }
            // Reaches a session only when no checkpointer runs.
            Request::StopCheckpointer => Ok(Outcome::Done),
            Request::Batch(calls) => self.batch(&calls),
            // The thread loops dispatch these; here they are a misuse.
            Request::Pinned(_) | Request::Commit | Request::Rollback => {
                Err(Error::invalid_state("no transaction is open"))
            }
            Request::Checkpoint(mode) => {
                // Only the writer runs checkpoint requests: nothing commits
                // while this one runs.
                let _permit = self
                    .observer
                    .as_ref()
                    .map(|o| o.before_checkpoint(CheckpointWrites::Excluded));
                let counts = checkpoint(&self.conn, Some(mode))?;
                Ok(Outcome::Checkpoint {
                    log_frames: counts.log_frames,
                    checkpointed_frames: counts.checkpointed_frames,
                })
            }
            Request::ReadSettings(settings) => {
                let role = match self.role {
                    Role::Writer => ConnectionRole::Writer,
                    Role::Reader(i) => ConnectionRole::Reader(i),
                };
                let mut report = SettingsReport::default();
                report.insert(pragmas::read_back(&self.conn, role, &settings)?);
                Ok(Outcome::Settings(Box::new(report)))
            }
        }
    }

    fn exec(&mut self, sql: &str) -> Result<()> {
        let sql = CString::new(sql)
            .map_err(|_| Error::sqlite(ffi::SQLITE_ERROR, "SQL text contains a NUL character"))?;
        let db = self.handle();
        // SAFETY: `db` is this session's live connection; no callback and no
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
        // session (cache, cursors, locals), all dropped before `conn`.
        match unsafe { RawStatement::prepare(self.handle(), sql.text()) }? {
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
        self.with_prepared(&call.sql, |stmt| {
            stmt.bind(&call.params, call.bind)?;
            f(stmt)
        })
    }

    fn iterate(&mut self, call: Call, chunk_rows: usize) -> Result<Outcome> {
        let mut stmt = self.obtain(&call.sql)?;
        if let Err(e) = stmt.bind(&call.params, call.bind) {
            self.cache.put(call.sql.text(), stmt);
            return Err(e);
        }
        let columns: Arc<[String]> = stmt.column_names().into();
        let mut rows = RowSet::new(columns.clone());
        match step_rows(&mut stmt, &mut rows, chunk_rows) {
            Err(e) if rows.values.is_empty() => {
                self.cache.put(call.sql.text(), stmt);
                Err(e)
            }
            // The rows before the error come first; the error is the
            // cursor's next chunk (node:sqlite throws it from the `next()`
            // that reaches it).
            Err(e) => {
                self.cache.put(call.sql.text(), stmt);
                let id = self.defer_error(columns, e);
                Ok(Outcome::Chunk {
                    rows,
                    cursor: Some(CursorRef {
                        role: self.role,
                        id,
                    }),
                })
            }
            Ok(true) => {
                self.cache.put(call.sql.text(), stmt);
                Ok(Outcome::Chunk { rows, cursor: None })
            }
            Ok(false) => {
                let id = self.next_cursor;
                self.next_cursor += 1;
                self.cursors.insert(
                    id,
                    Cursor::Live {
                        sql: call.sql,
                        stmt,
                        columns,
                    },
                );
                Ok(Outcome::Chunk {
                    rows,
                    cursor: Some(CursorRef {
                        role: self.role,
                        id,
                    }),
                })
            }
        }
    }

    fn next_chunk(&mut self, cursor: CursorRef, chunk_rows: usize) -> Result<Outcome> {
        let Some(state) = self.cursors.get_mut(&cursor.id) else {
            return Err(Error::invalid_state("the iterator is already finished"));
        };
        let mut deferred = None;
        let (rows, finished) = match state {
            Cursor::Live { stmt, columns, .. } => {
                let mut rows = RowSet::new(columns.clone());
                match step_rows(stmt, &mut rows, chunk_rows) {
                    Ok(done) => (Ok(rows), done),
                    Err(e) if rows.values.is_empty() => (Err(e), true),
                    // As in `iterate`: these rows now, the error next.
                    Err(e) => {
                        deferred = Some((columns.clone(), e));
                        (Ok(rows), true)
                    }
                }
            }
            Cursor::Buffered {
                columns,
                values,
                error,
            } => {
                let take = (chunk_rows.saturating_mul(columns.len())).min(values.len());
                let rows = RowSet {
                    columns: columns.clone(),
                    values: values.drain(..take).collect(),
                };
                if values.is_empty() {
                    match error.take() {
                        Some(e) if rows.values.is_empty() => (Err(e), true),
                        Some(e) => {
                            *error = Some(e);
                            (Ok(rows), false)
                        }
                        None => (Ok(rows), true),
                    }
                } else {
                    (Ok(rows), false)
                }
            }
        };
        if finished {
            self.close_cursor(cursor.id);
        }
        if let Some((columns, e)) = deferred {
            let id = self.defer_error(columns, e);
            return rows.map(|rows| Outcome::Chunk {
                rows,
                cursor: Some(CursorRef {
                    role: cursor.role,
                    id,
                }),
            });
        }
        rows.map(|rows| Outcome::Chunk {
            rows,
            cursor: (!finished).then_some(cursor),
        })
    }

    /// A cursor whose next chunk is `error`.
    fn defer_error(&mut self, columns: Arc<[String]>, error: Error) -> u64 {
        let id = self.next_cursor;
        self.next_cursor += 1;
        self.cursors.insert(
            id,
            Cursor::Buffered {
                columns,
                values: VecDeque::new(),
                error: Some(error),
            },
        );
        id
    }

    fn close_cursor(&mut self, id: u64) {
        if let Some(Cursor::Live { sql, stmt, .. }) = self.cursors.remove(&id) {
            self.cache.put(sql.text(), stmt);
        }
    }

    /// Steps every live cursor to its end and keeps the rows in memory, so
    /// the connection holds no read snapshot. Needed before the writer runs
    /// another job (an open statement would defer its autocommit) and when a
    /// pinned reader must serve a starving queue.
    pub fn park_cursors(&mut self) {
        let ids: Vec<u64> = self
            .cursors
            .iter()
            .filter(|(_, c)| matches!(c, Cursor::Live { .. }))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let Some(Cursor::Live {
                sql,
                mut stmt,
                columns,
            }) = self.cursors.remove(&id)
            else {
                continue;
            };
            let mut rows = RowSet::new(columns.clone());
            let error = step_rows(&mut stmt, &mut rows, usize::MAX).err();
            self.cache.put(sql.text(), stmt);
            self.cursors.insert(
                id,
                Cursor::Buffered {
                    columns,
                    values: rows.values.into(),
                    error,
                },
            );
        }
    }

    /// Runs each call in one transaction (a SAVEPOINT when one is open
    /// already). A statement with result columns returns its rows, others
    /// their run result; the first failure rolls everything back.
    fn batch(&mut self, calls: &[Call]) -> Result<Outcome> {
        let nested = !self.conn.is_autocommit();
        let (begin, commit, rollback) = if nested {
            (
                "SAVEPOINT offloop_batch",
                "RELEASE offloop_batch",
                "ROLLBACK TO offloop_batch; RELEASE offloop_batch",
            )
        } else {
            ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
        };
        self.exec(begin)?;
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
                    let _ = self.exec(rollback);
                    return Ok(Outcome::Batch {
                        results,
                        failed: Some((index, error)),
                    });
                }
            }
        }
        if let Err(error) = self.exec(commit) {
            let _ = self.exec(rollback);
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
        self.next_cursor
    }

    /// Ends the cursors opened since `mark` (a pinned session's end with it).
    pub fn close_cursors_from(&mut self, mark: u64) {
        let ids: Vec<u64> = self
            .cursors
            .keys()
            .copied()
            .filter(|id| *id >= mark)
            .collect();
        for id in ids {
            self.close_cursor(id);
        }
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

/// Whether a statement being prepared reads something only this connection
/// has: its TEMP or attached schemas, or the results of its own last write
/// (`last_insert_rowid()`, `changes()`, `total_changes()`). Such a query is
/// read-only yet must run on the writer.
fn reads_connection_state(ctx: &AuthContext<'_>) -> bool {
    match ctx.action {
        AuthAction::Function { function_name } => ["last_insert_rowid", "changes", "total_changes"]
            .iter()
            .any(|f| function_name.eq_ignore_ascii_case(f)),
        // TEMP and ATTACHed schemas exist on this connection only.
        AuthAction::Read { .. } => ctx.database_name.is_some_and(|db| db != "main"),
        _ => false,
    }
}

/// Steps to the end: `run()`'s change count and last rowid.
fn run_to_end(stmt: &mut RawStatement) -> Result<Outcome> {
    while stmt.step()? {}
    let (changes, last_insert_rowid) = stmt.changes();
    Ok(Outcome::Run {
        changes,
        last_insert_rowid,
    })
}

/// Every row: `all()`.
fn all_rows(stmt: &mut RawStatement) -> Result<Outcome> {
    let mut rows = RowSet::new(stmt.column_names().into());
    while stmt.step()? {
        read_row(stmt, &mut rows);
    }
    Ok(Outcome::Rows(rows))
}

fn read_row(stmt: &RawStatement, rows: &mut RowSet) {
    for i in 0..rows.columns.len() {
        rows.values.push(stmt.column_value(i));
    }
}

/// Steps up to `limit` rows into `rows`; `Ok(true)` when the statement ended.
fn step_rows(stmt: &mut RawStatement, rows: &mut RowSet, limit: usize) -> Result<bool> {
    let mut count = 0;
    while count < limit {
        if !stmt.step()? {
            return Ok(true);
        }
        read_row(stmt, rows);
        count += 1;
    }
    Ok(false)
}
