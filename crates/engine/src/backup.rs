//! Online backup (`db.backup(path)`): copies a database file into another
//! with SQLite's backup API, on a thread of its own with a connection of
//! its own to the source file. It owns that thread and both of its
//! connections; it never touches the writer's or a reader's connection, so
//! writes and reads go on while it copies. It never runs on the caller's
//! thread: `start` only spawns.
//!
//! In WAL mode the source connection holds one read transaction for the
//! whole copy, so the copy is the snapshot of its first step and writes
//! committed meanwhile neither restart it nor block. In other journal modes
//! each step takes its own read lock, and SQLite restarts the copy when
//! another connection wrote in between.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use crate::connection::{base_flags, open, read_only_uri};
use crate::error::{Error, Result};
use crate::job::{complete, Done, Outcome};
use crate::settings::Settings;

/// How long to wait before stepping again when a step found the source or
/// the target locked (a checkpoint's brief lock, another process).
const LOCKED_PAUSE: Duration = Duration::from_millis(5);

/// What to copy, where, and how many pages per step.
#[derive(Debug, Clone)]
pub struct BackupRequest {
    /// The target file (a path or a `file:` URI), created if missing.
    pub target_path: String,
    /// The schema copied from (`main`).
    pub source: String,
    /// The schema copied into (`main`).
    pub target: String,
    /// Pages per step; `progress` is called between steps.
    pub rate: i32,
}

/// Called after each step that left pages to copy, with the source's page
/// count and the pages still to copy.
pub type Progress = Box<dyn FnMut(u64, u64) + Send>;

/// Starts a backup of `settings`' database on a new thread. `done` hears
/// `Outcome::Pages` (the source's page count) or the first error; setting
/// `stop` ends the copy before its next step with an abort error.
pub fn start(
    settings: &Settings,
    request: BackupRequest,
    progress: Progress,
    stop: Arc<AtomicBool>,
    done: Done,
) {
    if settings.is_private() {
        complete(
            done,
            Err(Error::invalid_state(
                "an in-memory or temporary database cannot be backed up: \
                 no other connection can read it",
            )),
        );
        return;
    }
    let source_path = read_only_uri(&settings.path);
    let source_vfs = settings.vfs.clone();
    let busy_timeout = settings.busy_timeout;
    // The thread takes `done` from this slot; if the thread cannot start,
    // the caller's thread takes it back and reports that.
    let slot = Arc::new(Mutex::new(Some(done)));
    let thread_slot = slot.clone();
    // The writer closes after this copy's connection (see `close_order`).
    let place = settings.close_order.hold();
    let spawned = thread::Builder::new()
        .name("offloop-backup".into())
        .spawn(move || {
            let _place = place;
            let run = std::panic::AssertUnwindSafe(|| {
                copy(
                    &source_path,
                    source_vfs.as_deref(),
                    &request,
                    busy_timeout,
                    progress,
                    &stop,
                )
            });
            let result = std::panic::catch_unwind(run).unwrap_or_else(|_| {
                Err(Error::Panic {
                    message: "offloop internal error: the backup panicked".into(),
                })
            });
            if let Some(done) = take(&thread_slot) {
                complete(done, result.map(Outcome::Pages));
            }
        });
    if let Err(e) = spawned {
        if let Some(done) = take(&slot) {
            let message = format!("could not start the backup thread: {e}");
            complete(done, Err(Error::invalid_state(message)));
        }
    }
}

fn take(slot: &Mutex<Option<Done>>) -> Option<Done> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

fn copy(
    source_path: &str,
    source_vfs: Option<&str>,
    request: &BackupRequest,
    busy_timeout: Duration,
    mut progress: Progress,
    stop: &AtomicBool,
) -> Result<u64> {
    let source = open(
        source_path,
        base_flags() | OpenFlags::SQLITE_OPEN_READ_ONLY,
        source_vfs,
    )?;
    source.busy_timeout(busy_timeout)?;
    let snapshot = holds_snapshot(&source)?;
    let mut target = open(
        &request.target_path,
        base_flags() | OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        None,
    )?;
    let pages = {
        let backup = Backup::new_with_names(
            &source,
            request.source.as_str(),
            &mut target,
            request.target.as_str(),
        )?;
        let mut locked_since: Option<Instant> = None;
        loop {
            if stop.load(Ordering::Acquire) {
                return Err(Error::Aborted {
                    message: "The backup was stopped".into(),
                });
            }
            match backup.step(request.rate)? {
                StepResult::Done => break,
                StepResult::More => {
                    locked_since = None;
                    let p = backup.progress();
                    progress(p.pagecount as u64, p.remaining as u64);
                }
                // Busy and Locked (the enum is open to more): wait a little
                // and step again, up to the busy timeout.
                _ => {
                    let since = *locked_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= busy_timeout {
                        return Err(Error::sqlite(
                            rusqlite::ffi::SQLITE_BUSY,
                            "database is locked",
                        ));
                    }
                    thread::sleep(LOCKED_PAUSE);
                }
            }
        }
        backup.progress().pagecount as u64
    };
    if snapshot {
        source.execute_batch("COMMIT")?;
    }
    Ok(pages)
}

/// In WAL mode, opens the read transaction the whole copy reads from (see
/// the module doc); says whether it did.
fn holds_snapshot(source: &Connection) -> Result<bool> {
    let mode: String = source.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Ok(false);
    }
    source.execute_batch("BEGIN")?;
    source.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A WAL database of a few hundred pages, and a connection writing to it.
    fn source(dir: &tempfile::TempDir) -> (String, Connection) {
        let path = dir.path().join("source.db").to_string_lossy().into_owned();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t(v); \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) \
             INSERT INTO t SELECT printf('%.1000c', 'x') FROM n;",
        )
        .unwrap();
        (path, conn)
    }

    fn request(dir: &tempfile::TempDir, rate: i32) -> BackupRequest {
        BackupRequest {
            target_path: dir.path().join("copy.db").to_string_lossy().into_owned(),
            source: "main".into(),
            target: "main".into(),
            rate,
        }
    }

    #[test]
    fn writes_between_steps_neither_restart_the_copy_nor_enter_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, writer) = source(&dir);
        let writer = Mutex::new(writer);
        let remaining = Arc::new(Mutex::new(Vec::new()));
        let seen = remaining.clone();
        // Each step's report commits a write from another connection.
        let progress: Progress = Box::new(move |_, left| {
            seen.lock().unwrap().push(left);
            let writer = writer.lock().unwrap();
            writer
                .execute("INSERT INTO t VALUES ('during')", [])
                .unwrap();
        });
        let stop = AtomicBool::new(false);
        let request = request(&dir, 5);
        let pages = copy(
            &path,
            None,
            &request,
            Duration::from_secs(5),
            progress,
            &stop,
        )
        .unwrap();
        let remaining = remaining.lock().unwrap();
        assert!(remaining.len() > 10);
        assert!(remaining.windows(2).all(|w| w[1] < w[0]), "never restarted");
        let copy = Connection::open(&request.target_path).unwrap();
        let rows: i64 = copy
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 300, "the copy is the snapshot of its first step");
        assert!(pages > 50);
    }

    #[test]
    fn a_stop_ends_the_copy_before_its_next_step() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _writer) = source(&dir);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let steps = Arc::new(Mutex::new(0));
        let counted = steps.clone();
        let progress: Progress = Box::new(move |_, _| {
            *counted.lock().unwrap() += 1;
            flag.store(true, Ordering::Release);
        });
        let result = copy(
            &path,
            None,
            &request(&dir, 10),
            Duration::from_secs(5),
            progress,
            &stop,
        );
        assert!(matches!(result, Err(Error::Aborted { .. })));
        assert_eq!(*steps.lock().unwrap(), 1);
    }
}
