//! The WAL's data on the ground floor: checkpoint modes and counts, the
//! one function that runs `sqlite3_wal_checkpoint_v2`, and `WalControl`,
//! the state the writer, the checkpointer and `stats()` share about the
//! WAL (who owns automatic checkpoints, the restart handshake, counters).
//! It starts no thread and knows nothing of jobs; `checkpointer.rs` is the
//! thread that drives it.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{ffi, Connection};

use crate::error::{Error, Result};
use crate::pool::Lane;

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

/// Between retries of a checkpoint that found another one running.
const CHECKPOINT_RETRY: Duration = Duration::from_millis(1);

/// A checkpoint in `mode` (a NOOP count when None), retried while another
/// connection's checkpoint (a checkpointer pass, the writer's backstop or
/// catch-up, or just a frame count) holds the checkpoint lock: SQLite
/// answers BUSY at once then, without calling the busy handler. Gives up
/// once `patience` has passed, counting the busy handler's own wait for
/// readers; a zero `patience` tries once. Each call that had to wait is
/// counted in `control`'s `lock_waits`.
pub fn checkpoint_waiting(
    conn: &Connection,
    mode: Option<CheckpointMode>,
    patience: Duration,
    control: Option<&WalControl>,
) -> Result<WalCounts> {
    let started = Instant::now();
    let mut waited = false;
    loop {
        match checkpoint(conn, mode) {
            Err(Error::Sqlite { code, .. })
                if code & 0xff == ffi::SQLITE_BUSY && started.elapsed() < patience =>
            {
                if !waited {
                    waited = true;
                    if let Some(control) = control {
                        control.lock_waits.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(CHECKPOINT_RETRY);
            }
            other => return other,
        }
    }
}

/// `WalControl::catch_up` values. The checkpointer asks (IDLE → REQUESTED);
/// the writer copies the tail (→ COPIED) and, at its next commit, which
/// restarts the WAL, hands the WAL back (→ IDLE). The checkpointer stays out
/// of the way until then: its passes take locks the restart needs.
const CATCH_UP_IDLE: u8 = 0;
const CATCH_UP_REQUESTED: u8 = 1;
const CATCH_UP_COPIED: u8 = 2;

/// `WalControl::state` values besides 0 (the default), which means the
/// checkpointer is still opening.
const ACTIVE: u8 = 1;
const STOPPED: u8 = 2;

/// Shared by the writer, the checkpointer and `stats()`.
#[derive(Default)]
pub struct WalControl {
    state: AtomicU8,
    /// The WAL-restart handshake between checkpointer and writer; one of
    /// the `CATCH_UP_*` values.
    catch_up: AtomicU8,
    runs: AtomicU64,
    frames_copied: AtomicU64,
    last_ns: AtomicU64,
    max_ns: AtomicU64,
    wal_frames: AtomicU64,
    wal_bytes: AtomicU64,
    writer_catch_ups: AtomicU64,
    writer_catch_up_max_ns: AtomicU64,
    backstops: AtomicU64,
    backstop_max_ns: AtomicU64,
    lock_waits: AtomicU64,
    nudges: AtomicU64,
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
    /// Short catch-ups the writer ran between jobs to let the WAL restart,
    /// and the longest one (the job after it waited that long).
    pub writer_catch_ups: u64,
    pub writer_catch_up_max: Duration,
    /// Checkpoints the writer had to wait for because the WAL outgrew the
    /// backstop (the checkpointer could not keep up), and the longest wait.
    pub backstops: u64,
    pub backstop_max: Duration,
    /// Times a requested checkpoint or the writer's backstop (or the frame
    /// count before one) found another connection's checkpoint running and
    /// waited for it to end.
    pub lock_waits: u64,
    /// Nudges the checkpointer woke for: one per commit at most, and below
    /// the threshold one per `idle / 4` at most.
    pub nudges: u64,
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

    /// The checkpointer asked the writer to copy the WAL's last frames.
    pub fn catch_up_requested(&self) -> bool {
        self.catch_up.load(Ordering::Acquire) == CATCH_UP_REQUESTED
    }

    /// The writer committed after its catch-up: the WAL has restarted (or
    /// could not, and is the checkpointer's again either way).
    pub fn writer_committed(&self) {
        let _ = self.catch_up.compare_exchange(
            CATCH_UP_COPIED,
            CATCH_UP_IDLE,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    pub fn record_nudge(&self) {
        self.nudges.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_backstop(&self, took: Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.backstops.fetch_add(1, Ordering::Relaxed);
        self.backstop_max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The writer copied them: the request is met.
    pub fn record_writer_catch_up(&self, took: Duration) {
        self.catch_up.store(CATCH_UP_COPIED, Ordering::Release);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.writer_catch_ups.fetch_add(1, Ordering::Relaxed);
        self.writer_catch_up_max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The checkpointer opened and owns automatic checkpoints from now on.
    pub(crate) fn mark_active(&self) {
        self.state.store(ACTIVE, Ordering::Release);
    }

    /// A catch-up is requested or copied and not yet ended by a commit: the
    /// WAL is the writer's until then.
    pub(crate) fn writer_owns_wal(&self) -> bool {
        self.catch_up.load(Ordering::Acquire) != CATCH_UP_IDLE
    }

    /// The checkpointer left a short tail for the writer to copy.
    pub(crate) fn request_catch_up(&self) {
        self.catch_up.store(CATCH_UP_REQUESTED, Ordering::Release);
    }

    pub(crate) fn record_wal_frames(&self, frames: u64) {
        self.wal_frames.store(frames, Ordering::Relaxed);
    }

    pub(crate) fn record_wal_bytes(&self, bytes: u64) {
        self.wal_bytes.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn fail(&self, error: String) {
        *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        self.state.store(STOPPED, Ordering::Release);
    }

    pub(crate) fn record_run(&self, took: Duration, before: u64, after: WalCounts) {
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
            writer_catch_up_max: Duration::from_nanos(
                self.writer_catch_up_max_ns.load(Ordering::Relaxed),
            ),
            backstops: self.backstops.load(Ordering::Relaxed),
            backstop_max: Duration::from_nanos(self.backstop_max_ns.load(Ordering::Relaxed)),
            lock_waits: self.lock_waits.load(Ordering::Relaxed),
            nudges: self.nudges.load(Ordering::Relaxed),
            error: self.error.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}

/// The writer's side: tells the checkpointer a commit happened. At most
/// one nudge waits (a flag, set until the checkpointer takes it): that one
/// covers every commit since.
#[derive(Clone)]
pub struct Nudge(Arc<AtomicBool>, Lane);

impl Nudge {
    pub fn send(&self) {
        if !self.0.swap(true, Ordering::AcqRel) {
            self.1.notify();
        }
    }
}

/// The checkpointer's side of its nudges.
pub struct Nudges(Arc<AtomicBool>);

impl Nudges {
    /// Whether a nudge waited; it is taken.
    pub fn take(&self) -> bool {
        self.0.swap(false, Ordering::AcqRel)
    }

    /// Whether no nudge waits.
    pub fn is_empty(&self) -> bool {
        !self.0.load(Ordering::Acquire)
    }
}

/// The nudges for the checkpointer running on `lane`.
pub fn nudge_channel(lane: Lane) -> (Nudge, Nudges) {
    let waiting = Arc::new(AtomicBool::new(false));
    (Nudge(waiting.clone(), lane), Nudges(waiting))
}
