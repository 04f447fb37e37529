//! The writer's side of checkpointing, while a checkpointer thread runs.
//!
//! SQLite's automatic checkpoint is replaced by a WAL hook that records the
//! WAL length after each commit. Between two jobs the writer then:
//! - nudges the checkpointer when something was committed: at once when
//!   the WAL is long enough for a pass, else at most every `idle / 4` (see
//!   `nudge_due`);
//! - copies the WAL's last few frames when the checkpointer asks (so the
//!   next commit restarts the WAL under constant writes);
//! - when the WAL has outgrown the backstop anyway (the disk cannot keep up
//!   with the writes), waits for a checkpoint of its own: backpressure on
//!   the writer thread, never on the event loop;
//! - hands automatic checkpoints back to SQLite if the checkpointer stops,
//!   and takes them back before the next job once an observer is installed
//!   (SQLite's would checkpoint inside a commit, where no observer is
//!   asked, and its hook replaces the one that hears commits).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::observer::{CheckpointWrites, ObserverSlot};
use crate::settings::CheckpointSettings;
use crate::wal::{checkpoint, checkpoint_waiting, CheckpointMode, Nudge, WalControl, WalCounts};

/// SQLite's default `wal_autocheckpoint`, restored when the checkpointer
/// stops so the WAL stays bounded without it.
const SQLITE_DEFAULT_AUTOCHECKPOINT: i64 = 1000;

pub struct WriterWal {
    nudge: Nudge,
    control: Arc<WalControl>,
    /// WAL frames after the last commit, written by the WAL hook; 0 when
    /// nothing was committed since the writer last looked.
    committed_frames: Arc<AtomicU64>,
    backstop_frames: u64,
    /// The WAL length from which the checkpointer may run a pass.
    threshold_frames: u64,
    /// How long commits below that length go without a nudge.
    nudge_every: Duration,
    last_nudge: Option<Instant>,
    busy_timeout: Duration,
    handed_back: bool,
    /// Hears every commit; asked before each checkpoint run here.
    observer: Arc<ObserverSlot>,
}

impl WriterWal {
    /// Installs the WAL hook on the writer's connection.
    pub fn install(
        conn: &mut Connection,
        nudge: Nudge,
        control: Arc<WalControl>,
        checkpoint: &CheckpointSettings,
        busy_timeout: Duration,
        observer: Arc<ObserverSlot>,
    ) -> crate::error::Result<Self> {
        let committed_frames = Arc::new(AtomicU64::new(0));
        record_commits(conn, &committed_frames, &observer)?;
        Ok(WriterWal {
            nudge,
            control,
            committed_frames,
            backstop_frames: checkpoint.backstop_frames,
            threshold_frames: checkpoint.threshold_frames,
            nudge_every: checkpoint.idle / 4,
            last_nudge: None,
            busy_timeout,
            handed_back: false,
            observer,
        })
    }

    /// Runs before every job: an observer installed since automatic
    /// checkpoints went back to SQLite hears this job's commit and is asked
    /// before its checkpoints.
    pub fn before_job(&mut self, conn: &mut Connection) {
        if self.handed_back
            && self.observer.is_set()
            && record_commits(conn, &self.committed_frames, &self.observer).is_ok()
        {
            self.handed_back = false;
        }
    }

    /// Runs after every job. `idle_connection` is false while a cursor holds
    /// the connection inside a read, when no checkpoint can run on it.
    pub fn after_job(&mut self, conn: &Connection, idle_connection: bool) {
        if self.handed_back {
            return;
        }
        if self.control.is_stopped() && self.observer.is_set() {
            // SQLite's automatic checkpoint would run inside a commit, where
            // no observer is asked: keep the hook and checkpoint here at
            // SQLite's own threshold instead.
            self.backstop_frames = self
                .backstop_frames
                .min(SQLITE_DEFAULT_AUTOCHECKPOINT as u64);
        } else if self.control.is_stopped() {
            self.handed_back = true;
            // Replaces our WAL hook with SQLite's own automatic checkpoint.
            let _ = conn.pragma_update(None, "wal_autocheckpoint", SQLITE_DEFAULT_AUTOCHECKPOINT);
            return;
        }
        let frames = self.committed_frames.swap(0, Ordering::Relaxed);
        if frames > 0 {
            self.control.writer_committed();
            if self.nudge_due(frames) {
                self.nudge.send();
                self.last_nudge = Some(Instant::now());
            }
        }
        if !idle_connection {
            return;
        }
        if frames >= self.backstop_frames {
            self.backstop(conn);
        } else if self.control.catch_up_requested() {
            // Busy (a lock another connection holds for a moment) leaves the
            // request standing for after the next job; a failed PASSIVE
            // returns at once.
            let started = Instant::now();
            let permit = self.observer.before_checkpoint(CheckpointWrites::Excluded);
            let copied = checkpoint(conn, Some(CheckpointMode::Passive)).is_ok();
            drop(permit);
            if copied {
                self.control.record_writer_catch_up(started.elapsed());
            }
        }
    }

    /// Whether a commit that left `frames` in the WAL nudges the
    /// checkpointer. A nudge wakes its thread, and on a small VM that wake
    /// costs the writer its CPU: with a nudge per commit, most of the
    /// writer's switches were there (`perf` on sched_switch, one-row
    /// inserts), and the checkpointer spent them counting frames. Below the
    /// threshold a nudge can only start its idle timer, so one every
    /// `idle / 4` does that job: the timer then fires `idle` after a nudge
    /// at most `idle / 4` older than the last commit, after that commit.
    fn nudge_due(&self, frames: u64) -> bool {
        frames >= self.threshold_frames
            || self
                .last_nudge
                .is_none_or(|at| at.elapsed() >= self.nudge_every)
    }

    /// The WAL passed the backstop: copy it here, waiting out a checkpoint
    /// in progress, up to the busy timeout.
    fn backstop(&self, conn: &Connection) {
        let started = Instant::now();
        let _permit = self.observer.before_checkpoint(CheckpointWrites::Excluded);
        let waited = checkpoint_waiting(
            conn,
            Some(CheckpointMode::Passive),
            self.busy_timeout,
            Some(&self.control),
        );
        if waited.is_ok() {
            self.control.record_backstop(started.elapsed());
        }
    }
}

/// How the writer runs a requested checkpoint (`db.checkpoint(mode)` routed
/// to it): it asks the observer with writes excluded, since nothing commits
/// while it runs, and waits up to `busy_timeout` for another connection's
/// checkpoint (the checkpointer's pass or frame count) to end, counting such
/// waits in `wal` when a checkpointer runs.
pub struct RequestedCheckpoints {
    pub observer: Arc<ObserverSlot>,
    pub busy_timeout: Duration,
    pub wal: Option<Arc<WalControl>>,
}

impl RequestedCheckpoints {
    pub fn run(&self, conn: &Connection, mode: CheckpointMode) -> crate::error::Result<WalCounts> {
        let _permit = self.observer.before_checkpoint(CheckpointWrites::Excluded);
        checkpoint_waiting(conn, Some(mode), self.busy_timeout, self.wal.as_deref())
    }
}

/// Installs the WAL hook that records the WAL length after each commit in
/// `frames`. It replaces SQLite's automatic checkpoint, which is a WAL hook
/// too.
/// The observer hears each commit from the hook itself, as the commit
/// reaches the WAL: before the job's caller hears back, so a caller that
/// then reads the replica's lag sees the commit counted.
fn record_commits(
    conn: &mut Connection,
    frames: &Arc<AtomicU64>,
    observer: &Arc<ObserverSlot>,
) -> crate::error::Result<()> {
    let frames = frames.clone();
    let observer = observer.clone();
    conn.wal_hook(Some(
        move |_: &mut rusqlite::hooks::Wal, committed: std::os::raw::c_int| {
            frames.store(committed.max(1) as u64, Ordering::Relaxed);
            observer.committed();
            Ok(())
        },
    ))?;
    Ok(())
}
