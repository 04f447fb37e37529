//! The checkpointer: WAL checkpoints on a lane and connection of their
//! own, so neither the event loop nor the writer's callers wait for pages to
//! be copied into the database file and synced.
//!
//! How the WAL stays bounded. The writer nudges the checkpointer after a
//! commit (a flag, so at most one nudge waits): after every
//! commit once the WAL holds `threshold` frames, and below that at most
//! every `idle / 4`, which is all the idle timer needs. The
//! checkpointer counts WAL frames with a NOOP checkpoint and copies them with
//! a PASSIVE one once `threshold` frames wait, and again when writes pause
//! for `idle` (a timer notifies its lane then). SQLite restarts the WAL from its start only when a write
//! begins with every frame copied; under constant writes new frames always
//! arrive during a pass, so the WAL would grow without end. So after a pass
//! that leaves the WAL longer than `threshold`, the checkpointer asks the
//! writer to copy the few frames that arrived during the pass itself,
//! between two jobs (`WalControl::catch_up_requested`); the writer's next
//! commit then restarts the WAL, and `journal_size_limit` trims the file.
//!
//! If the checkpointer cannot open, fails, or its thread dies, it marks
//! itself inactive and the writer hands automatic checkpoints back to
//! SQLite (`wal_autocheckpoint` = 1000) between two jobs.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::TryRecvError;

use crate::queue;
use rusqlite::{ffi, Connection};

use crate::connection::{open_checkpointer, ran_out_of_descriptors};
use crate::doze::{self, Counted, Doze};
use crate::error::{Error, Result};
use crate::faults::{self, Site};
use crate::job::{complete, Job, Outcome, Request};
use crate::lanes::Departure;
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::CheckpointWrites;
use crate::pool::{Ran, WeakLane, Work};
use crate::role::Role;
use crate::settings::{self, Settings};
use crate::timers::notify_at;
use crate::wal::{checkpoint, checkpoint_waiting, CheckpointMode, Nudges, WalControl, WalCounts};
use crate::writer::RUN_BUDGET;

/// Passes one round may run before giving up on a short tail (writes
/// outrun the copy); the next nudge starts a new round.
const MAX_PASSES_PER_ROUND: usize = 4;
/// A tail this short (about 400 KiB at 4 KiB pages) the writer copies in
/// well under a millisecond of page-cache I/O plus one small sync.
const CATCH_UP_FRAMES: u64 = 100;

pub struct Checkpointer {
    pub settings: Arc<Settings>,
    pub control: Arc<WalControl>,
    pub nudges: Nudges,
    /// `Request::Checkpoint` jobs from `db.checkpoint(mode)`.
    pub requests: queue::Receiver<Job>,
    pub gate: Arc<WriterGate>,
    /// Until the connection opened.
    pub latch: Option<Arc<OpenLatch>>,
    /// This lane, for the idle timer.
    pub lane: WeakLane,
    pub state: CheckpointerState,
    /// Its idle close (see `doze.rs`), and whether it opens only for work:
    /// after its first open, or from the start when the database opens its
    /// connections on demand (see `Database::open`).
    pub doze: Arc<Doze>,
    pub on_demand: bool,
    /// Its place among the database's lanes (see `Lanes`).
    pub departure: Departure,
}

pub enum CheckpointerState {
    Unopened,
    Serving(Box<Open>),
    /// Stopped (on request, after an error or a panic): the connection
    /// still answers requests routed here before the stop became visible.
    Answering(Box<Open>),
    /// Could not open, or the writer could not: requests fail with this.
    Refusing(Error),
}

pub struct Open {
    conn: Connection,
    _counted: Counted,
    wal_path: Option<String>,
    /// Frames arrived since the last pass that copied everything.
    pending: bool,
    /// When writes will have paused for `idle`, as of the last nudge.
    due: Instant,
    /// The deadline a timer will notify the lane at, if one is pending.
    armed: Option<Instant>,
}

/// What one run of a serving checkpointer ended with.
enum Served {
    Ran(Ran),
    /// Stopped on request.
    Stopped,
    /// The database is closing.
    Closing,
}

impl Work for Checkpointer {
    fn run(&mut self) -> Ran {
        loop {
            match std::mem::replace(&mut self.state, CheckpointerState::Unopened) {
                CheckpointerState::Unopened => match self.open() {
                    Some(state) => self.state = state,
                    // Closed when idle, and the database is closing
                    // (nothing can be queued any more): done.
                    None if self.on_demand && self.departure.0.is_stopping() => {
                        return match self.requests.try_recv() {
                            Ok(job) => {
                                job.fail(Error::closed());
                                Ran::More
                            }
                            Err(_) => Ran::Finished,
                        };
                    }
                    None => return Ran::Idle,
                },
                CheckpointerState::Serving(mut open) => {
                    let result = catch_unwind(AssertUnwindSafe(|| self.serve(&mut open)));
                    // However serving ended (the database closing, an
                    // error, a panic, or a stop on request, which marked it
                    // already), the lane is inactive from then on.
                    let why = match result {
                        Ok(Ok(Served::Ran(Ran::Idle))) if !open.pending => {
                            if self.doze.settle(&self.lane) {
                                // Closed before the writer hears: its close
                                // must find no other connection open.
                                drop(open);
                                self.doze.closed();
                                self.departure.0.other_closed();
                            } else {
                                self.state = CheckpointerState::Serving(open);
                            }
                            return Ran::Idle;
                        }
                        Ok(Ok(Served::Ran(ran))) => {
                            self.state = CheckpointerState::Serving(open);
                            return ran;
                        }
                        Ok(Ok(Served::Closing)) => {
                            self.close(&open);
                            self.doze.closed();
                            "the checkpointer thread stopped".to_string()
                        }
                        Ok(Ok(Served::Stopped)) => "stopped by request".to_string(),
                        Ok(Err(error)) => format!("checkpoint failed: {error}"),
                        Err(_) => "the checkpointer thread panicked".to_string(),
                    };
                    if self.control.is_active() {
                        self.control.fail(why);
                    }
                    self.state = CheckpointerState::Answering(open);
                }
                CheckpointerState::Answering(open) => loop {
                    match self.requests.try_recv() {
                        Ok(job) => {
                            self.answer(&open.conn, open.wal_path.as_deref(), job);
                        }
                        Err(TryRecvError::Empty) => {
                            self.state = CheckpointerState::Answering(open);
                            return Ran::Idle;
                        }
                        Err(TryRecvError::Disconnected) => return Ran::Finished,
                    }
                },
                CheckpointerState::Refusing(error) => loop {
                    match self.requests.try_recv() {
                        Ok(job) => job.fail(error.clone()),
                        Err(TryRecvError::Empty) => {
                            self.state = CheckpointerState::Refusing(error);
                            return Ran::Idle;
                        }
                        Err(TryRecvError::Disconnected) => return Ran::Finished,
                    }
                },
            }
        }
    }
}

impl Checkpointer {
    /// After an idle close, whether no work waits that needs a connection.
    /// A nudge that waited (at the connection cap) until the writer closed
    /// its idle connection is stale: that close copied the WAL, or a later
    /// last close will. Opening for it would hold the file while a
    /// replicated database rests; it is dropped.
    fn nothing_to_open_for(&mut self) -> bool {
        if !self.on_demand || !self.requests.is_empty() {
            return false;
        }
        if self.departure.0.writer_dozing() {
            self.nudges.take();
        }
        self.nudges.is_empty()
    }

    /// Opens the connection once the writer has (and, after an idle close,
    /// once there is work); `None` before.
    fn open(&mut self) -> Option<CheckpointerState> {
        if let Err(error) = self.gate.get()? {
            return Some(CheckpointerState::Refusing(error));
        }
        if self.nothing_to_open_for() {
            return None;
        }
        // At the cap, `admit` may ask the writer itself to close, and
        // admit this lane the moment it has: look again.
        if !doze::admit(&self.lane, &self.doze) || self.nothing_to_open_for() {
            return None;
        }
        if self.on_demand {
            return match open_checkpointer(&self.settings) {
                Ok((conn, _)) => Some(self.serving(conn)),
                // Out of descriptors while connections idle elsewhere can
                // close: it waits for one, its nudge and requests kept.
                Err(error)
                    if ran_out_of_descriptors(&error)
                        && doze::make_room(&self.lane, &self.doze) =>
                {
                    None
                }
                Err(error) => {
                    // Too many open files, say: a request hears why, the
                    // writer's backstop keeps the WAL bounded meanwhile,
                    // and the next nudge tries again.
                    self.nudges.take();
                    if let Ok(job) = self.requests.try_recv() {
                        job.fail(error);
                    }
                    None
                }
            };
        }
        let latch = self.latch.take();
        let not_running = || Error::invalid_state("the checkpointer is not running");
        let (conn, counted) = match open_checkpointer(&self.settings) {
            Ok((conn, settings)) => {
                if let Some(latch) = &latch {
                    latch.record(settings);
                }
                // Counted from the open, before anyone hears of it.
                (conn, Counted::new())
            }
            // As above; the database's open waits meanwhile.
            Err(error)
                if ran_out_of_descriptors(&error) && doze::make_room(&self.lane, &self.doze) =>
            {
                self.latch = latch;
                return None;
            }
            // A setting that is not what was asked, under strictSettings:
            // the open fails as it would for any other connection.
            Err(error) if settings::is_strict_error(&error) => {
                self.control
                    .fail(format!("the checkpointer could not open: {error}"));
                if let Some(latch) = latch {
                    latch.arrive(Err(error));
                }
                return Some(CheckpointerState::Refusing(not_running()));
            }
            Err(error) => {
                // Not fatal for the database: the writer takes over.
                self.control
                    .fail(format!("the checkpointer could not open: {error}"));
                if let Some(latch) = latch {
                    latch.arrive(Ok(()));
                }
                return Some(CheckpointerState::Refusing(not_running()));
            }
        };
        self.control.mark_active();
        let serving = self.serving_counted(conn, counted);
        if let Some(latch) = latch {
            latch.arrive(Ok(()));
        }
        Some(serving)
    }

    fn serving(&mut self, conn: Connection) -> CheckpointerState {
        self.serving_counted(conn, Counted::new())
    }

    /// Serving with `conn`, counted (by `counted`, from its open) before
    /// anyone hears it opened.
    fn serving_counted(&mut self, conn: Connection, counted: Counted) -> CheckpointerState {
        self.on_demand = true;
        self.doze.opened(&self.lane);
        let wal_path = wal_path(&conn);
        CheckpointerState::Serving(Box::new(Open {
            conn,
            _counted: counted,
            wal_path,
            pending: false,
            due: Instant::now(),
            armed: None,
        }))
    }

    /// Runs what is queued (nudges, requests, the idle pass when due), up
    /// to the budget.
    fn serve(&self, open: &mut Open) -> Result<Served> {
        let threshold = self.settings.checkpoint.threshold_frames;
        let idle = self.settings.checkpoint.idle;
        let (conn, wal_path) = (&open.conn, open.wal_path.as_deref());
        for _ in 0..RUN_BUDGET {
            if self.nudges.take() {
                self.doze.worked();
                faults::panic_point(Site::Checkpointer);
                self.control.record_nudge();
                open.pending = true;
                open.due = Instant::now() + idle;
                // Enough new frames to copy, or a long WAL that only a
                // copy down to a short tail lets restart.
                self.automatic(conn, wal_path, |c| {
                    let waiting = c.log_frames.saturating_sub(c.checkpointed_frames);
                    waiting >= threshold || (c.log_frames >= threshold && waiting > 0)
                })?;
                continue;
            }
            match self.requests.try_recv() {
                Ok(job) => {
                    self.doze.worked();
                    if !self.answer(conn, wal_path, job) {
                        return Ok(Served::Stopped);
                    }
                    continue;
                }
                Err(TryRecvError::Disconnected) => return Ok(Served::Closing),
                Err(TryRecvError::Empty) => {}
            }
            if !open.pending {
                return Ok(Served::Ran(Ran::Idle));
            }
            let now = Instant::now();
            if now >= open.due {
                self.automatic(conn, wal_path, |c| c.checkpointed_frames < c.log_frames)?;
                self.shrink(conn, wal_path)?;
                open.pending = false;
                return Ok(Served::Ran(Ran::Idle));
            }
            if open.armed.is_none_or(|at| at <= now) {
                open.armed = Some(open.due);
                notify_at(open.due, self.lane.clone());
            }
            return Ok(Served::Ran(Ran::Idle));
        }
        Ok(Served::Ran(Ran::More))
    }

    /// The database is closing and the writer runs no more jobs: leave an
    /// empty WAL.
    fn close(&self, open: &Open) {
        let _ = tolerate_busy(
            self.pass(
                &open.conn,
                open.wal_path.as_deref(),
                CheckpointMode::Truncate,
                CheckpointWrites::Excluded,
                Duration::ZERO,
            )
            .map(|_| ()),
        );
    }

    /// Answers one request from the database. False for StopCheckpointer,
    /// after marking the thread stopped (so routing and `stats()` say so by
    /// the time the caller hears back).
    fn answer(&self, conn: &Connection, wal_path: Option<&str>, job: Job) -> bool {
        let (request, done) = job.take();
        let result = match request {
            // A requested checkpoint that meets another connection's (the
            // writer's backstop or catch-up, or another process) waits for
            // it to end, as long as a lock would: the one it met may have
            // been weaker, or have left frames behind.
            Request::Checkpoint(mode) => self
                .pass(
                    conn,
                    wal_path,
                    mode,
                    CheckpointWrites::Concurrent,
                    self.settings.busy_timeout,
                )
                .map(|c| Outcome::Checkpoint {
                    log_frames: c.log_frames,
                    checkpointed_frames: c.checkpointed_frames,
                }),
            Request::StopCheckpointer => {
                self.control.fail("stopped by request".into());
                complete(done, Ok(Outcome::Done));
                return false;
            }
            Request::ReadSettings(settings) => {
                let role = Role::Checkpointer;
                settings::read_back(conn, role, &settings).map(|c| {
                    let mut report = settings::SettingsReport::default();
                    report.insert(c);
                    Outcome::Settings(Box::new(report))
                })
            }
            _ => Err(Error::invalid_state("not a checkpoint request")),
        };
        complete(done, result);
        true
    }

    /// Counts the WAL and, when `due` says so, copies it with PASSIVE passes.
    /// While the writer has a catch-up to do, the checkpointer leaves the WAL
    /// to it. Busy (a lock another connection holds for a moment) skips this
    /// round; any other error stops the thread.
    fn automatic(
        &self,
        conn: &Connection,
        wal_path: Option<&str>,
        due: impl FnOnce(WalCounts) -> bool,
    ) -> Result<()> {
        if self.control.writer_owns_wal() {
            return Ok(());
        }
        let threshold = self.settings.checkpoint.threshold_frames;
        let result = (|| {
            let counts = checkpoint(conn, None)?;
            self.control.record_wal_frames(counts.log_frames);
            if !due(counts) {
                return Ok(());
            }
            // Each pass copies what arrived during the one before; while the
            // copy outruns the writes, the tail shrinks. Once it is short,
            // the writer copies it between two jobs and the WAL restarts.
            // If the writes outrun the copy (a slow or busy disk), the last
            // round hands the writer a longer tail rather than let the WAL
            // grow: a longer pause for one write, a bounded WAL.
            for round in 1..=MAX_PASSES_PER_ROUND {
                let done = self.pass(
                    conn,
                    wal_path,
                    CheckpointMode::Passive,
                    CheckpointWrites::Concurrent,
                    Duration::ZERO,
                )?;
                let now = checkpoint(conn, None)?;
                self.control.record_wal_frames(now.log_frames);
                if now.log_frames < threshold || now.log_frames == done.checkpointed_frames {
                    // Short, or copied entirely: the next commit restarts it.
                    break;
                }
                let tail = now.log_frames - done.checkpointed_frames;
                let outrun = round == MAX_PASSES_PER_ROUND && now.log_frames >= 2 * threshold;
                if tail <= CATCH_UP_FRAMES || outrun {
                    self.control.request_catch_up();
                    break;
                }
            }
            Ok(())
        })();
        tolerate_busy(result)
    }

    /// Writes paused with the WAL file past `journal_size_limit` (a burst
    /// grew it): TRUNCATE it now rather than at the next write. Everything
    /// is copied already, so this only needs the locks; it takes them
    /// without waiting, so a reader or an arriving write is never held up,
    /// and simply tries again at the next pause.
    fn shrink(&self, conn: &Connection, wal_path: Option<&str>) -> Result<()> {
        let limit = self.settings.journal_size_limit;
        let Some(path) = wal_path else { return Ok(()) };
        // A TRUNCATE restarts the WAL at once, racing a commit that lands
        // after the observer captured; with an observer the WAL is only
        // trimmed when the writer restarts it (journal_size_limit).
        if self.settings.observer.is_set() {
            return Ok(());
        }
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if limit < 0 || size <= limit as u64 {
            return Ok(());
        }
        conn.busy_timeout(Duration::ZERO)?;
        let result = self
            .pass(
                conn,
                wal_path,
                CheckpointMode::Truncate,
                CheckpointWrites::Concurrent,
                Duration::ZERO,
            )
            .map(|_| ());
        conn.busy_timeout(self.settings.busy_timeout)?;
        tolerate_busy(result)
    }

    /// One checkpoint, recorded in the stats. After a pass that copied
    /// frames, the database file is synced here, so the writer's catch-up
    /// later syncs only the few pages it copies itself (SQLite syncs the
    /// file only when a pass reaches the end of the WAL, which under
    /// constant writes is never the checkpointer's). While another
    /// connection checkpoints, the count and the pass each retry for up to
    /// `patience` (zero: busy at once).
    fn pass(
        &self,
        conn: &Connection,
        wal_path: Option<&str>,
        mode: CheckpointMode,
        writes: CheckpointWrites,
        patience: Duration,
    ) -> Result<WalCounts> {
        let control = Some(&*self.control);
        let before = checkpoint_waiting(conn, None, patience, control)?;
        let started = Instant::now();
        let permit = self.settings.observer.before_checkpoint(writes);
        if permit.is_refused() {
            // The writer copies the WAL between two jobs instead, where no
            // commit can land during the copy. Busy: the caller's round
            // ends here, as when another connection holds a lock.
            self.control.request_catch_up();
            return Err(Error::sqlite(
                ffi::SQLITE_BUSY,
                "the WAL observer refused a checkpoint beside the writer",
            ));
        }
        let counts = checkpoint_waiting(conn, Some(mode), patience, control);
        drop(permit);
        let counts = counts?;
        if counts.checkpointed_frames > before.checkpointed_frames {
            sync_database_file(conn)?;
        }
        self.control
            .record_run(started.elapsed(), before.checkpointed_frames, counts);
        if let Some(path) = wal_path {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            self.control.record_wal_bytes(bytes);
        }
        Ok(counts)
    }
}

/// Syncs the main database file through SQLite's own file handle (closing
/// a second descriptor of our own would drop the process's POSIX locks on
/// the file).
fn sync_database_file(conn: &Connection) -> Result<()> {
    let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
    // SAFETY: live handle used on its own thread; FILE_POINTER writes the
    // connection's `sqlite3_file*` for "main" into `file`, which stays valid
    // while the connection is open and is used only during this call.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_FILE_POINTER,
            &mut file as *mut *mut ffi::sqlite3_file as *mut std::ffi::c_void,
        )
    };
    if rc != ffi::SQLITE_OK || file.is_null() {
        return Ok(());
    }
    // SAFETY: `file` is the open main-database file of this connection; its
    // methods table is SQLite's VFS, whose xSync is safe to call from the
    // connection's thread between calls on that connection.
    let rc = unsafe {
        match (*file).pMethods.as_ref().and_then(|m| m.xSync) {
            Some(sync) => sync(file, ffi::SQLITE_SYNC_NORMAL),
            None => ffi::SQLITE_OK,
        }
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(Error::sqlite(rc, Error::errstr(rc)))
    }
}

/// Errors that skip a round instead of stopping the checkpointer: a lock
/// another connection holds for a moment, and I/O that failed (a full
/// disk, an I/O error), which the next round retries, so the WAL shrinks
/// again once the disk recovers. A requested checkpoint still reports them.
fn tolerate_busy(result: Result<()>) -> Result<()> {
    match result {
        Err(Error::Sqlite { code, .. })
            if matches!(
                code & 0xff,
                ffi::SQLITE_BUSY | ffi::SQLITE_FULL | ffi::SQLITE_IOERR
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

fn wal_path(conn: &Connection) -> Option<String> {
    conn.path()
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}-wal"))
}
