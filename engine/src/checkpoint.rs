//! The checkpointer: WAL checkpoints on a thread and connection of their
//! own, so neither the event loop nor the writer's callers wait for pages to
//! be copied into the database file and synced.
//!
//! How the WAL stays bounded. The writer nudges the checkpointer after every
//! commit (a bounded(1) channel, so at most one nudge waits). The
//! checkpointer counts WAL frames with a NOOP checkpoint and copies them with
//! a PASSIVE one once `threshold` frames wait, and again when writes pause
//! for `idle`. SQLite restarts the WAL from its start only when a write
//! begins with every frame copied; under constant writes new frames always
//! arrive during a pass, so the WAL would grow without end. So after a pass
//! that leaves the WAL longer than `threshold`, the checkpointer asks the
//! writer to copy the few frames that arrived during the pass itself,
//! between two jobs (`WalControl::take_catch_up_request`); the writer's next
//! commit then restarts the WAL, and `journal_size_limit` trims the file.
//!
//! If the checkpointer cannot open, fails, or its thread dies, it marks
//! itself inactive and the writer hands automatic checkpoints back to
//! SQLite (`wal_autocheckpoint` = 1000) between two jobs.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender, TrySendError};
use rusqlite::{ffi, Connection};

use crate::connection::open_checkpointer;
use crate::error::{Error, Result};
use crate::job::{Job, Outcome, Request};
use crate::latch::{OpenLatch, WriterGate};
use crate::settings::Settings;

/// SQLite's checkpoint modes, as `db.checkpoint(mode)` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointMode {
    Passive,
    Full,
    Restart,
    Truncate,
}

impl CheckpointMode {
    fn raw(self) -> c_int {
        match self {
            CheckpointMode::Passive => ffi::SQLITE_CHECKPOINT_PASSIVE,
            CheckpointMode::Full => ffi::SQLITE_CHECKPOINT_FULL,
            CheckpointMode::Restart => ffi::SQLITE_CHECKPOINT_RESTART,
            CheckpointMode::Truncate => ffi::SQLITE_CHECKPOINT_TRUNCATE,
        }
    }
}

/// What SQLite reports of a checkpoint: frames in the WAL, and how many of
/// them are now in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalCounts {
    pub log_frames: u64,
    pub checkpointed_frames: u64,
}

/// Runs `sqlite3_wal_checkpoint_v2` on `conn` (NOOP when `mode` is None).
pub fn checkpoint(conn: &Connection, mode: Option<CheckpointMode>) -> Result<WalCounts> {
    let mut log: c_int = 0;
    let mut done: c_int = 0;
    let raw = mode.map_or(ffi::SQLITE_CHECKPOINT_NOOP, CheckpointMode::raw);
    // SAFETY: the handle belongs to `conn`, used on its own thread; the
    // schema name NULL means every attached database; the out-pointers are
    // valid locals.
    let rc = unsafe {
        let db = conn.handle();
        ffi::sqlite3_wal_checkpoint_v2(db, std::ptr::null(), raw, &mut log, &mut done)
    };
    if rc != ffi::SQLITE_OK {
        // SAFETY: same live handle; the error belongs to the call above.
        return Err(unsafe { Error::from_handle(conn.handle()) });
    }
    // SQLite reports -1 for both when the database is not in WAL mode.
    Ok(WalCounts {
        log_frames: log.max(0) as u64,
        checkpointed_frames: done.max(0) as u64,
    })
}

/// Shared by the writer, the checkpointer and `stats()`.
/// `WalControl::state` values besides 0 (the default), which means the
/// checkpointer is still opening.
const ACTIVE: u8 = 1;
const STOPPED: u8 = 2;

#[derive(Default)]
pub struct WalControl {
    state: AtomicU8,
    catch_up: AtomicBool,
    runs: AtomicU64,
    frames_copied: AtomicU64,
    last_ns: AtomicU64,
    max_ns: AtomicU64,
    wal_frames: AtomicU64,
    wal_bytes: AtomicU64,
    writer_catch_ups: AtomicU64,
    error: Mutex<Option<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointStats {
    /// The checkpointer thread runs and owns automatic checkpoints.
    pub active: bool,
    /// Checkpoints run by the checkpointer (automatic and requested).
    pub runs: u64,
    /// Frames copied into the database file by those checkpoints.
    pub frames_copied: u64,
    pub last_duration: Duration,
    pub max_duration: Duration,
    /// WAL length in frames at the last count, and the file's size.
    pub wal_frames: u64,
    pub wal_bytes: u64,
    /// Short catch-ups the writer ran between jobs to let the WAL restart.
    pub writer_catch_ups: u64,
    /// Why the checkpointer stopped, if it did.
    pub error: Option<String>,
}

impl WalControl {
    pub fn is_active(&self) -> bool {
        self.state.load(Ordering::Acquire) == ACTIVE
    }

    /// The checkpointer ran and stopped (or never could start): automatic
    /// checkpoints are the writer's again.
    pub fn is_stopped(&self) -> bool {
        self.state.load(Ordering::Acquire) == STOPPED
    }

    /// True once per request from the checkpointer.
    pub fn take_catch_up_request(&self) -> bool {
        self.catch_up.load(Ordering::Relaxed) && self.catch_up.swap(false, Ordering::AcqRel)
    }

    pub fn record_writer_catch_up(&self) {
        self.writer_catch_ups.fetch_add(1, Ordering::Relaxed);
    }

    fn fail(&self, error: String) {
        *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        self.state.store(STOPPED, Ordering::Release);
    }

    fn record_run(&self, took: Duration, before: u64, after: WalCounts) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.frames_copied.fetch_add(
            after.checkpointed_frames.saturating_sub(before),
            Ordering::Relaxed,
        );
        self.last_ns.store(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
        self.wal_frames.store(after.log_frames, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CheckpointStats {
        CheckpointStats {
            active: self.is_active(),
            runs: self.runs.load(Ordering::Relaxed),
            frames_copied: self.frames_copied.load(Ordering::Relaxed),
            last_duration: Duration::from_nanos(self.last_ns.load(Ordering::Relaxed)),
            max_duration: Duration::from_nanos(self.max_ns.load(Ordering::Relaxed)),
            wal_frames: self.wal_frames.load(Ordering::Relaxed),
            wal_bytes: self.wal_bytes.load(Ordering::Relaxed),
            writer_catch_ups: self.writer_catch_ups.load(Ordering::Relaxed),
            error: self.error.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}

/// The writer's side: tells the checkpointer a commit happened.
#[derive(Clone)]
pub struct Nudge(Sender<()>);

impl Nudge {
    pub fn send(&self) {
        // Full means a nudge already waits; that one covers this commit.
        match self.0.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
        }
    }
}

pub struct CheckpointerThread {
    pub settings: Arc<Settings>,
    pub control: Arc<WalControl>,
    pub nudges: Receiver<()>,
    /// `Request::Checkpoint` jobs from `db.checkpoint(mode)`.
    pub requests: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub latch: Arc<OpenLatch>,
}

pub fn nudge_channel() -> (Nudge, Receiver<()>) {
    let (tx, rx) = crossbeam_channel::bounded(1);
    (Nudge(tx), rx)
}

/// Marks the checkpointer inactive however its thread ends, panics included.
struct ActiveGuard<'a>(&'a WalControl);

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        if self.0.is_active() {
            self.0.fail("the checkpointer thread stopped".into());
        }
    }
}

impl CheckpointerThread {
    pub fn run(self) {
        if !self.gate.wait() {
            return;
        }
        let conn = match open_checkpointer(&self.settings) {
            Ok(conn) => conn,
            Err(error) => {
                // Not fatal for the database: the writer takes over.
                self.control
                    .fail(format!("the checkpointer could not open: {error}"));
                self.latch.arrive(Ok(()));
                self.fail_requests();
                return;
            }
        };
        self.control.state.store(ACTIVE, Ordering::Release);
        self.latch.arrive(Ok(()));
        let guard = ActiveGuard(&self.control);
        let wal_path = wal_path(&conn);
        let result = catch_unwind(AssertUnwindSafe(|| self.serve(&conn, wal_path.as_deref())));
        match result {
            Ok(Ok(())) => {}
            Ok(Err(error)) => self.control.fail(format!("checkpoint failed: {error}")),
            Err(_) => self.control.fail("the checkpointer thread panicked".into()),
        }
        drop(guard);
        self.fail_requests();
    }

    /// Requests that arrive after the thread stopped serving.
    fn fail_requests(&self) {
        for job in self.requests.try_iter() {
            job.fail(Error::invalid_state("the checkpointer is not running"));
        }
    }

    fn serve(&self, conn: &Connection, wal_path: Option<&str>) -> Result<()> {
        let threshold = self.settings.checkpoint.threshold_frames;
        let idle = self.settings.checkpoint.idle;
        // Frames arrived since the last pass that copied everything.
        let mut pending = false;
        loop {
            // Nothing to do until the next nudge or request.
            let timeout = if pending {
                idle
            } else {
                Duration::from_secs(3600)
            };
            select! {
                recv(self.nudges) -> msg => {
                    if msg.is_err() {
                        break;
                    }
                    pending = true;
                    let counts = checkpoint(conn, None)?;
                    self.control.wal_frames.store(counts.log_frames, Ordering::Relaxed);
                    if counts.log_frames.saturating_sub(counts.checkpointed_frames) >= threshold {
                        self.automatic(conn, wal_path, counts)?;
                    }
                }
                recv(self.requests) -> msg => {
                    let Ok(job) = msg else { break };
                    let (request, done) = job.take();
                    let Request::Checkpoint(mode) = request else {
                        done(Err(Error::invalid_state("not a checkpoint request")));
                        continue;
                    };
                    let result = checkpoint(conn, None)
                        .and_then(|before| self.pass(conn, wal_path, mode, before));
                    done(result.map(|c| Outcome::Checkpoint {
                        log_frames: c.log_frames,
                        checkpointed_frames: c.checkpointed_frames,
                    }));
                }
                default(timeout) => {
                    let before = checkpoint(conn, None)?;
                    if before.checkpointed_frames < before.log_frames {
                        self.automatic(conn, wal_path, before)?;
                    }
                    pending = false;
                }
            }
        }
        // The database is closing and the writer is gone: leave an empty WAL.
        let before = checkpoint(conn, None)?;
        self.pass(conn, wal_path, CheckpointMode::Truncate, before)
            .map(|_| ())
            .or_else(|e| if is_busy(&e) { Ok(()) } else { Err(e) })
    }

    /// A PASSIVE pass nobody asked for: busy means another checkpoint is
    /// running, which is fine; anything else stops the thread.
    fn automatic(
        &self,
        conn: &Connection,
        wal_path: Option<&str>,
        before: WalCounts,
    ) -> Result<()> {
        match self.pass(conn, wal_path, CheckpointMode::Passive, before) {
            Err(e) if !is_busy(&e) => Err(e),
            _ => Ok(()),
        }
    }

    /// One checkpoint, recorded in the stats.
    fn pass(
        &self,
        conn: &Connection,
        wal_path: Option<&str>,
        mode: CheckpointMode,
        before: WalCounts,
    ) -> Result<WalCounts> {
        let started = Instant::now();
        let counts = checkpoint(conn, Some(mode))?;
        self.control
            .record_run(started.elapsed(), before.checkpointed_frames, counts);
        if let Some(path) = wal_path {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            self.control.wal_bytes.store(bytes, Ordering::Relaxed);
        }
        if mode == CheckpointMode::Passive
            && counts.log_frames >= self.settings.checkpoint.threshold_frames
        {
            self.control.catch_up.store(true, Ordering::Release);
        }
        Ok(counts)
    }
}

fn is_busy(error: &Error) -> bool {
    matches!(error, Error::Sqlite { code, .. } if code & 0xff == ffi::SQLITE_BUSY)
}

fn wal_path(conn: &Connection) -> Option<String> {
    conn.path()
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}-wal"))
}
