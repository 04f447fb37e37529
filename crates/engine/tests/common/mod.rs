//! Helpers shared by the engine's integration tests: open a database in a
//! temporary directory, submit requests and block on their completion with a
//! generous deadline (a test that hangs fails instead).

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use offloop_engine::{
    BindOptions, Call, CancelToken, Database, Done, Error, Job, Outcome, Params, Request, Result,
    Scope, ScopeKind, Settings, TransactionMode, Value,
};
use tempfile::TempDir;

/// How long any single wait may take before the test fails. Generous: the
/// tests assert what happens and in which order, never how fast.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// An idle timeout no test reaches.
pub const NEVER_IDLE: Duration = Duration::from_secs(600);

/// A query that never ends on its own: counts to 10^12.
pub const ENDLESS: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                           WHERE x < 1000000000000) SELECT count(*) FROM c";

/// The completion of one job, as the test thread waits for it.
pub struct Pending(Receiver<Result<Outcome>>);

impl Pending {
    /// Blocks until the job completes; fails the test after `DEADLINE`.
    #[track_caller]
    pub fn wait(self) -> Result<Outcome> {
        self.0
            .recv_timeout(DEADLINE)
            .expect("the job did not complete within the deadline")
    }

    /// The result if the job has completed already, without waiting.
    pub fn poll(&self) -> Option<Result<Outcome>> {
        match self.0.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => panic!("the completion was dropped uncalled"),
        }
    }

    /// The result, which must already be there.
    #[track_caller]
    pub fn now(&self) -> Result<Outcome> {
        self.poll()
            .expect("the job should have completed before the call returned")
    }
}

/// A completion callback and the receiving end the test waits on.
pub fn callback() -> (Done, Pending) {
    let (tx, rx) = mpsc::channel();
    let done: Done = Box::new(move |result| {
        let _ = tx.send(result);
    });
    (done, Pending(rx))
}

/// A database in a temporary directory that lives as long as it does.
pub struct TempDb {
    // Declared first so the database drops before its directory.
    pub db: Database,
    pub dir: TempDir,
    pub path: PathBuf,
}

impl Deref for TempDb {
    type Target = Database;
    fn deref(&self) -> &Database {
        &self.db
    }
}

pub fn temp_dir() -> TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// Settings for `app.db` in `dir` with `readers` reader threads.
pub fn file_settings(dir: &TempDir, readers: usize) -> Settings {
    let path = dir.path().join("app.db");
    Settings {
        readers,
        ..Settings::new(path.to_str().expect("a UTF-8 temporary path"))
    }
}

/// Opens and waits for `opened`, returning its result too.
pub fn try_open(settings: Settings) -> (Database, Result<Outcome>) {
    let (done, opened) = callback();
    let db = Database::open(settings, done).expect("the threads start");
    let result = opened.wait();
    (db, result)
}

/// Opens and waits until every connection is open; fails the test if not.
#[track_caller]
pub fn open(settings: Settings) -> Database {
    let (db, opened) = try_open(settings);
    match opened {
        Ok(Outcome::Settings(_)) => db,
        other => panic!("the database did not open: {other:?}"),
    }
}

/// A file database with `readers` readers, in a fresh temporary directory.
pub fn open_file(readers: usize) -> TempDb {
    open_file_with(readers, |_| {})
}

/// `open_file`, with the settings adjusted first.
pub fn open_file_with(readers: usize, adjust: impl FnOnce(&mut Settings)) -> TempDb {
    let dir = temp_dir();
    let mut settings = file_settings(&dir, readers);
    adjust(&mut settings);
    let path = PathBuf::from(&settings.path);
    TempDb {
        db: open(settings),
        dir,
        path,
    }
}

/// Opens another database on an existing file, e.g. to check what a closed
/// one left behind.
pub fn reopen(path: &std::path::Path, readers: usize) -> Database {
    open(Settings {
        readers,
        ..Settings::new(path.to_str().expect("a UTF-8 path"))
    })
}

pub fn submit(db: &Database, request: Request) -> Pending {
    let (done, pending) = callback();
    db.submit(request, done);
    pending
}

/// Submits a job that `token` can cancel.
pub fn submit_cancellable(db: &Database, request: Request, token: &Arc<CancelToken>) -> Pending {
    let (done, pending) = callback();
    db.submit_job(Job::new(request, done).with_cancel(Some(token.clone())));
    pending
}

#[track_caller]
pub fn call(db: &Database, request: Request) -> Result<Outcome> {
    submit(db, request).wait()
}

/// Queues a request on a scope.
pub fn submit_in(db: &Database, scope: &mut Scope, request: Request) -> Pending {
    let (done, pending) = callback();
    db.submit_to(scope, Job::new(request, done));
    pending
}

#[track_caller]
pub fn call_in(db: &Database, scope: &mut Scope, request: Request) -> Result<Outcome> {
    submit_in(db, scope, request).wait()
}

/// Opens a write transaction and waits until its BEGIN has run.
#[track_caller]
pub fn begin_write(db: &Database, idle: Duration) -> Scope {
    let (begun, pending) = callback();
    let scope = db.begin_scope(ScopeKind::Write(TransactionMode::Immediate), idle, begun);
    match pending.wait() {
        Ok(Outcome::Done) => scope,
        other => panic!("BEGIN failed: {other:?}"),
    }
}

/// One statement execution with positional parameters and default binding.
pub fn stmt(db: &Database, sql: &str, params: Vec<Value>) -> Call {
    Call {
        sql: db.sql(sql),
        params: Params::positional(params),
        bind: BindOptions::default(),
    }
}

pub fn exec_request(sql: &str) -> Request {
    Request::Exec(sql.to_string())
}

#[track_caller]
pub fn exec(db: &Database, sql: &str) {
    if let Err(e) = call(db, exec_request(sql)) {
        panic!("exec {sql:?} failed: {e:?}");
    }
}

/// Runs a statement; returns (changes, last insert rowid).
#[track_caller]
pub fn run(db: &Database, sql: &str, params: Vec<Value>) -> (i64, i64) {
    match call(db, Request::Run(stmt(db, sql, params))) {
        Ok(outcome) => run_result(outcome),
        Err(e) => panic!("run {sql:?} failed: {e:?}"),
    }
}

#[track_caller]
pub fn run_result(outcome: Outcome) -> (i64, i64) {
    match outcome {
        Outcome::Run {
            changes,
            last_insert_rowid,
        } => (changes, last_insert_rowid),
        other => panic!("expected a run result, got {other:?}"),
    }
}

/// Every row of a query.
#[track_caller]
pub fn all(db: &Database, sql: &str, params: Vec<Value>) -> Vec<Vec<Value>> {
    match call(db, Request::All(stmt(db, sql, params))) {
        Ok(outcome) => rows(outcome),
        Err(e) => panic!("query {sql:?} failed: {e:?}"),
    }
}

/// The single integer a query like `SELECT count(*) ...` returns.
#[track_caller]
pub fn scalar(db: &Database, sql: &str) -> i64 {
    int_of(&all(db, sql, vec![]))
}

#[track_caller]
pub fn int_of(rows: &[Vec<Value>]) -> i64 {
    match rows {
        [row] => match row.as_slice() {
            [Value::Integer(i)] => *i,
            other => panic!("expected one integer, got {other:?}"),
        },
        other => panic!("expected one row, got {other:?}"),
    }
}

/// The rows of an `Outcome::Rows` or `Outcome::Chunk`.
#[track_caller]
pub fn rows(outcome: Outcome) -> Vec<Vec<Value>> {
    match outcome {
        Outcome::Rows(set) | Outcome::Chunk { rows: set, .. } => {
            (0..set.row_count()).map(|i| set.row(i).to_vec()).collect()
        }
        other => panic!("expected rows, got {other:?}"),
    }
}

pub fn int(v: i64) -> Value {
    Value::Integer(v)
}

pub fn text(v: &str) -> Value {
    Value::Text(v.to_string())
}

/// Rows of single integers `from..=to`, as queries return them.
pub fn int_rows(range: std::ops::RangeInclusive<i64>) -> Vec<Vec<Value>> {
    range.map(|i| vec![int(i)]).collect()
}

/// Closes and waits for the close to complete.
#[track_caller]
pub fn close(db: &Database) -> Result<Outcome> {
    let (done, pending) = callback();
    db.close(done);
    pending.wait()
}

/// Jobs run so far: (writer, all readers together).
pub fn executed(db: &Database) -> (u64, u64) {
    let stats = db.stats();
    (
        stats.writer.executed,
        stats.readers.iter().map(|r| r.executed).sum(),
    )
}

/// Polls `condition` until it holds; fails the test after `DEADLINE`.
#[track_caller]
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < DEADLINE,
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Fails the test unless `result` is the engine's `ERR_INVALID_STATE`.
#[track_caller]
pub fn assert_invalid_state(result: Result<Outcome>) -> String {
    match result {
        Err(Error::Misuse {
            code: "ERR_INVALID_STATE",
            message,
        }) => message,
        other => panic!("expected ERR_INVALID_STATE, got {other:?}"),
    }
}

/// The extended SQLite result code of a failed job.
#[track_caller]
pub fn sqlite_code(result: Result<Outcome>) -> i32 {
    match result {
        Err(Error::Sqlite { code, .. }) => code,
        other => panic!("expected a SQLite error, got {other:?}"),
    }
}

/// A table `t(id INTEGER PRIMARY KEY, v)` holding ids `1..=n` (v = id).
pub fn create_numbers(db: &Database, n: i64) {
    exec(
        db,
        &format!(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v); \
             WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) \
             INSERT INTO t(id, v) SELECT i, i FROM s WHERE {n} > 0"
        ),
    );
}

/// Runs `sql` once so the next call of the same text is routed by what the
/// writer learned.
pub fn learn_route(db: &Database, sql: &str) {
    let _ = all(db, sql, vec![]);
}

/// Another connection's checkpoint holding SQLite's checkpoint lock until
/// `release`: a RESTART that waits in its busy handler for a reader of its
/// own to end. While it holds the lock, any other checkpoint (even a frame
/// count) is answered BUSY at once, without the busy handler.
pub struct HeldCheckpoint {
    reader: rusqlite::Connection,
    release: mpsc::Sender<()>,
    restart: std::thread::JoinHandle<()>,
}

/// Holds the checkpoint lock of the database at `path`, whose WAL must
/// have frames not yet copied (so the reader takes a WAL read lock that a
/// RESTART waits for). Returns once the lock is held.
pub fn hold_checkpoint_lock(path: &std::path::Path) -> HeldCheckpoint {
    let reader = rusqlite::Connection::open(path).expect("a reader");
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM sqlite_schema;")
        .expect("a read transaction");
    let mut other = rusqlite::Connection::open(path).expect("a second connection");
    let (held, holding) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let in_handler = entered.clone();
    other
        .busy_handler(Some(move |_| {
            // Called only once the RESTART holds the checkpoint lock; it
            // gives up (and lets go) when released.
            if !in_handler.swap(true, std::sync::atomic::Ordering::AcqRel) {
                let _ = held.send(());
                let _ = released.recv();
            }
            false
        }))
        .expect("a busy handler");
    let restart = std::thread::spawn(move || {
        // A checkpoint of the database's own (a frame count) can hold the
        // lock for a moment, which fails this RESTART at once: try again
        // until it waits in the handler.
        while !entered.load(std::sync::atomic::Ordering::Acquire) {
            other
                .query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
                .expect("a RESTART checkpoint");
            std::thread::yield_now();
        }
    });
    holding
        .recv_timeout(DEADLINE)
        .expect("the RESTART holds the checkpoint lock");
    HeldCheckpoint {
        reader,
        release,
        restart,
    }
}

impl HeldCheckpoint {
    /// Ends the read and the RESTART, which lets the lock go.
    pub fn release(self) {
        self.reader.execute_batch("COMMIT").expect("the read ends");
        let _ = self.release.send(());
        self.restart.join().expect("the RESTART thread");
    }
}
