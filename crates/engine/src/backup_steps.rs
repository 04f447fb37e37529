//! A backup its caller steps, `n` pages at a time (offloop/sqlite3's
//! `Backup.step(n)`, which is `sqlite3_backup_step(n)`). It owns a thread of
//! its own holding two connections, one to the database and one to the
//! other file, and the `sqlite3_backup` between them; each step or finish
//! is a command to that thread, answered through the caller's callback. It
//! never touches the writer's or a reader's connection and never runs on
//! the caller's thread.
//!
//! Its connection to the database is not the writer's: a write the
//! database commits between two steps restarts the copy at the next one,
//! as SQLite restarts a backup whose source another connection wrote. No
//! read transaction is held across steps (unlike `backup.rs`), so each
//! step sees the database as it is then.

use std::thread;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{ffi, Connection, OpenFlags};

use crate::connection::{base_flags, open, read_only_uri};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::job::{complete, Done, Outcome};
use crate::settings::Settings;

/// The two ends of a stepped backup.
#[derive(Debug, Clone)]
pub struct SteppedRequest {
    /// The other file (a path or a `file:` URI), created if missing.
    pub other_path: String,
    /// The schema copied from (`main`).
    pub source: String,
    /// The schema copied into (`main`).
    pub target: String,
    /// True: the database is copied into the other file; false: the other
    /// file into the database.
    pub other_is_target: bool,
}

/// What one `sqlite3_backup_step` returned, and the backup's progress
/// after it (`sqlite3_backup_remaining` and `_pagecount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepReport {
    /// `SQLITE_OK`, `SQLITE_DONE` or the error code the step returned.
    pub status: i32,
    pub remaining: i32,
    pub page_count: i32,
}

impl StepReport {
    /// The step as a job's result: `Outcome::Done` for `SQLITE_OK` (pages
    /// remain), `Outcome::Pages` (the page count) for `SQLITE_DONE`, else
    /// the step's error with SQLite's text for its code, as sqlite3 reports
    /// it (`sqlite3_errstr`).
    pub fn outcome(&self) -> Result<Outcome> {
        match self.status {
            ffi::SQLITE_OK => Ok(Outcome::Done),
            ffi::SQLITE_DONE => Ok(Outcome::Pages(self.page_count.max(0) as u64)),
            code => Err(Error::sqlite(code, Error::errstr(code))),
        }
    }
}

/// Hears one step's report, or why the step could not run.
pub type Stepped = Box<dyn FnOnce(Result<StepReport>) + Send>;

enum Command {
    Step { pages: i32, reply: Stepped },
    Finish(Done),
}

/// The caller's end of a stepped backup. Dropping it finishes the backup
/// and closes its connections (on its thread).
pub struct SteppedBackup {
    commands: Sender<Command>,
}

impl SteppedBackup {
    /// Runs `sqlite3_backup_step(pages)` on the backup's thread.
    pub fn step(&self, pages: i32, reply: Stepped) {
        if let Err(unsent) = self.commands.send(Command::Step { pages, reply }) {
            unsent.0.refuse();
        }
    }

    /// Finishes the backup (`sqlite3_backup_finish`) and closes both
    /// connections; `done` hears `Outcome::Done` once they are closed.
    pub fn finish(&self, done: Done) {
        if let Err(unsent) = self.commands.send(Command::Finish(done)) {
            unsent.0.refuse();
        }
    }
}

impl Command {
    /// Answers a command the thread will never run (it ended).
    fn refuse(self) {
        match self {
            Command::Step { reply, .. } => reply(Err(finished())),
            Command::Finish(done) => complete(done, Ok(Outcome::Done)),
        }
    }
}

fn finished() -> Error {
    Error::invalid_state("the backup is finished")
}

/// Opens both connections and the backup between them on a new thread.
/// `opened` hears `Outcome::Applied(true)`, or `Applied(false)` when both
/// connections opened but `sqlite3_backup_init` refused (an unknown schema,
/// a target in use): its steps then have no backup to step, as in sqlite3.
/// A connection that cannot open is an error, and so is a closed database.
pub fn open_stepped(db: &Database, request: SteppedRequest, opened: Done) -> SteppedBackup {
    if !db.is_open() {
        let (commands, _) = unbounded();
        complete(opened, Err(Error::closed()));
        return SteppedBackup { commands };
    }
    open_with(db.settings(), request, opened)
}

fn open_with(settings: &Settings, request: SteppedRequest, opened: Done) -> SteppedBackup {
    let (commands, receiver) = unbounded();
    let backup = SteppedBackup { commands };
    if settings.is_private() {
        complete(
            opened,
            Err(Error::invalid_state(
                "an in-memory or temporary database cannot be backed up: \
                 no other connection can read it",
            )),
        );
        return backup;
    }
    let ends = Ends {
        path: settings.path.clone(),
        vfs: settings.vfs.clone(),
        read_only: settings.read_only,
        busy_timeout: settings.busy_timeout,
        request,
    };
    // The thread owns `opened` once it starts; if it cannot start, the
    // closure (and `opened` in it) comes back in the error, and is lost: a
    // slot lets this thread report instead.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(opened)));
    let thread_slot = slot.clone();
    // The writer closes after this backup's connections (see `close_order`).
    let place = settings.close_order.hold();
    let spawned = thread::Builder::new()
        .name("offloop-backup".into())
        .spawn(move || {
            let _place = place;
            let opened = take(&thread_slot);
            let run = std::panic::AssertUnwindSafe(|| serve(ends, opened, &receiver));
            if std::panic::catch_unwind(run).is_err() {
                // The thread survives to answer what is left, and then ends.
                for command in receiver.try_iter() {
                    command.refuse();
                }
            }
        });
    if let Err(e) = spawned {
        if let Some(opened) = take(&slot) {
            let message = format!("could not start the backup thread: {e}");
            complete(opened, Err(Error::invalid_state(message)));
        }
    }
    backup
}

fn take(slot: &std::sync::Mutex<Option<Done>>) -> Option<Done> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// What the backup's thread opens.
struct Ends {
    path: String,
    vfs: Option<String>,
    read_only: bool,
    busy_timeout: Duration,
    request: SteppedRequest,
}

fn serve(ends: Ends, opened: Option<Done>, commands: &Receiver<Command>) {
    let Some(opened) = opened else { return };
    let (mut database, mut other) = match connect(&ends) {
        Ok(both) => both,
        Err(error) => {
            complete(opened, Err(error));
            return answer_until_finish(None, commands);
        }
    };
    let request = &ends.request;
    let backup = if request.other_is_target {
        Backup::new_with_names(
            &database,
            request.source.as_str(),
            &mut other,
            request.target.as_str(),
        )
    } else {
        Backup::new_with_names(
            &other,
            request.source.as_str(),
            &mut database,
            request.target.as_str(),
        )
    };
    let backup = backup.ok();
    complete(opened, Ok(Outcome::Applied(backup.is_some())));
    answer_until_finish(backup.as_ref(), commands);
    // The backup is finished (dropped) before the connections close.
    drop(backup);
}

/// The database's connection (read-only when it is the source) and the
/// other file's. The database's waits for locks as its writer does; the
/// other file's does not wait, as a connection sqlite3 opens with
/// `sqlite3_open` has no busy handler.
fn connect(ends: &Ends) -> Result<(Connection, Connection)> {
    let source_side = ends.request.other_is_target;
    let (path, flags) = if source_side || ends.read_only {
        (read_only_uri(&ends.path), OpenFlags::SQLITE_OPEN_READ_ONLY)
    } else {
        (ends.path.clone(), OpenFlags::SQLITE_OPEN_READ_WRITE)
    };
    let database = open(&path, base_flags() | flags, ends.vfs.as_deref())?;
    database.busy_timeout(ends.busy_timeout)?;
    let other = open(
        &ends.request.other_path,
        base_flags() | OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        None,
    )?;
    other.busy_timeout(Duration::ZERO)?;
    Ok((database, other))
}

/// Runs the commands until a finish (or the caller's end is dropped).
fn answer_until_finish(backup: Option<&Backup<'_, '_>>, commands: &Receiver<Command>) {
    for command in commands.iter() {
        match command {
            Command::Step { pages, reply } => {
                let result = match backup {
                    // A step that panics is an error; the thread goes on.
                    Some(backup) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        step(backup, pages)
                    }))
                    .map_err(|_| Error::Panic {
                        message: "offloop internal error: a backup step panicked".into(),
                    }),
                    None => Err(finished()),
                };
                reply(result);
            }
            Command::Finish(done) => {
                // Whatever was sent after the finish is refused, then the
                // caller hears that it is done (the backup and its
                // connections go when the caller's frame returns, right
                // after: nothing here waits for a lock).
                for late in commands.try_iter() {
                    late.refuse();
                }
                complete(done, Ok(Outcome::Done));
                return;
            }
        }
    }
}

fn step(backup: &Backup<'_, '_>, pages: i32) -> StepReport {
    let status = match backup.step(pages) {
        Ok(StepResult::Done) => ffi::SQLITE_DONE,
        Ok(StepResult::More) => ffi::SQLITE_OK,
        Ok(StepResult::Busy) => ffi::SQLITE_BUSY,
        Ok(StepResult::Locked) => ffi::SQLITE_LOCKED,
        // The enum is open to more; rusqlite names none today.
        Ok(_) => ffi::SQLITE_ERROR,
        Err(rusqlite::Error::SqliteFailure(e, _)) => e.extended_code,
        Err(_) => ffi::SQLITE_ERROR,
    };
    let progress = backup.progress();
    StepReport {
        status,
        remaining: progress.remaining,
        page_count: progress.pagecount,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn source(dir: &tempfile::TempDir) -> (Settings, Connection) {
        let path = dir.path().join("source.db").to_string_lossy().into_owned();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t(v); \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) \
             INSERT INTO t SELECT printf('%.1000c', 'x') FROM n;",
        )
        .unwrap();
        (Settings::new(path), conn)
    }

    fn request(dir: &tempfile::TempDir) -> SteppedRequest {
        SteppedRequest {
            other_path: dir.path().join("copy.db").to_string_lossy().into_owned(),
            source: "main".into(),
            target: "main".into(),
            other_is_target: true,
        }
    }

    fn opened(settings: &Settings, request: SteppedRequest) -> (SteppedBackup, Result<Outcome>) {
        let (tx, rx) = mpsc::channel();
        let backup = open_with(settings, request, Box::new(move |r| tx.send(r).unwrap()));
        (backup, rx.recv().unwrap())
    }

    fn step(backup: &SteppedBackup, pages: i32) -> StepReport {
        let (tx, rx) = mpsc::channel();
        backup.step(pages, Box::new(move |r| tx.send(r).unwrap()));
        rx.recv().unwrap().unwrap()
    }

    #[test]
    fn each_step_copies_its_pages_and_a_write_between_steps_restarts_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let (settings, writer) = source(&dir);
        let (backup, result) = opened(&settings, request(&dir));
        assert_eq!(result.unwrap(), Outcome::Applied(true));
        let first = step(&backup, 10);
        assert_eq!(first.status, ffi::SQLITE_OK);
        assert_eq!(first.remaining, first.page_count - 10);
        let second = step(&backup, 10);
        assert_eq!(second.remaining, first.page_count - 20);
        writer
            .execute("INSERT INTO t VALUES ('after')", [])
            .unwrap();
        let restarted = step(&backup, 10);
        assert_eq!(restarted.remaining, restarted.page_count - 10, "restarted");
        let done = step(&backup, -1);
        assert_eq!((done.status, done.remaining), (ffi::SQLITE_DONE, 0));
        let (tx, rx) = mpsc::channel();
        backup.finish(Box::new(move |r| tx.send(r).unwrap()));
        assert_eq!(rx.recv().unwrap().unwrap(), Outcome::Done);
        let copy = Connection::open(&request(&dir).other_path).unwrap();
        let rows: i64 = copy
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 101, "the write is in the copy");
    }

    #[test]
    fn a_target_locked_by_another_connection_is_busy_and_the_backup_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let (settings, _writer) = source(&dir);
        let locker = Connection::open(request(&dir).other_path).unwrap();
        locker
            .execute_batch("BEGIN EXCLUSIVE; CREATE TABLE x(y);")
            .unwrap();
        let (backup, _) = opened(&settings, request(&dir));
        assert_eq!(step(&backup, 5).status, ffi::SQLITE_BUSY);
        locker.execute_batch("ROLLBACK").unwrap();
        assert_eq!(step(&backup, 5).status, ffi::SQLITE_OK);
    }

    #[test]
    fn an_unknown_schema_opens_without_a_backup_whose_steps_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (settings, _writer) = source(&dir);
        let mut req = request(&dir);
        req.source = "nowhere".into();
        let (backup, result) = opened(&settings, req);
        assert_eq!(result.unwrap(), Outcome::Applied(false));
        let (tx, rx) = mpsc::channel();
        backup.step(1, Box::new(move |r| tx.send(r).unwrap()));
        assert!(rx.recv().unwrap().is_err());
    }
}
