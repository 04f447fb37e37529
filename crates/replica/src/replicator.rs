//! `Replicator`: continuous replication of one database, on a thread of
//! its own (`offloop-replicator`), and the engine's WAL observer.
//!
//! # Design
//!
//! The writer tells the replicator of each commit (a bounded(1) wake-up,
//! never a wait); the replicator thread then copies the new committed
//! frames from the `-wal` file into its capture log, and every
//! `sync_interval` turns the log into one L0 file and uploads what waits in
//! the outbox, in TXID order. Before any checkpoint the engine asks for a
//! permit: the caller's thread captures the short tail itself (and, when
//! the writer may commit during the checkpoint, pins a read snapshot at the
//! captured end so the copy cannot pass it), so no frame is ever
//! overwritten uncaptured, and an upload in progress never holds a
//! checkpoint up. Compaction, L9 snapshots and retention run on the same
//! thread after uploads, when due.
//!
//! Faults: a replica that fails leaves the data in the outbox, retried with
//! backoff (`last_error` says why); writes never wait for it. Past
//! `max_pending_bytes` waiting, the outbox and capture are dropped and,
//! once the replica answers, a full image restarts the chain at the next
//! TXID. Before uploading (at start and after every failure) the replica's
//! position is checked against the outbox: a replica that is behind with a
//! gap, ahead, or unrelated gets a full image at its next TXID instead.
//!
//! It never runs on the JS thread: `stats()` reads atomics, and every
//! other call only sends a message.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, unbounded, Receiver, Sender, TrySendError};
use offloop_engine::{CheckpointPermit, CheckpointWrites, WalObserver};
use rusqlite::{Connection, OpenFlags};

use crate::compact::{compact_level, enforce_retention};
use crate::follower::{now_ms, Chain, Follower};
use crate::pending::Staged;
use crate::remote::{Remote, RemoteError, RemoteFile};
use crate::settings::ReplicaSettings;
use crate::store::SNAPSHOT_LEVEL;

/// First retry after a failed upload; doubles up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Retries of a replica that stays down settle at this interval: often
/// enough to catch up soon after it returns, rare enough to cost nothing.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long after a commit wakes the thread it captures: the commits of
/// those milliseconds are read in one pass, so a busy writer costs one
/// capture per interval rather than one per commit. A checkpoint never
/// waits for it (it captures the tail itself).
const CAPTURE_DELAY: Duration = Duration::from_millis(20);
/// Attempts at a full image while the WAL restarts under it (one restart
/// at most can happen while the image's read transaction lasts).
const IMAGE_TRIES: usize = 3;
/// How long `stop` keeps trying to upload what waits before it gives up
/// and leaves it in the outbox for the next open.
const STOP_UPLOAD_DEADLINE: Duration = Duration::from_secs(10);

/// Answers to `sync` and `ready`: the replica's TXID, or why not.
pub type Reply = Box<dyn FnOnce(Result<u64, String>) + Send>;

enum Command {
    Opened(PathBuf),
    Ready(Reply),
    Sync(Reply),
    /// `closed`: the database has closed, so nothing commits any more.
    Stop {
        reply: Reply,
        closed: bool,
    },
}

/// What `stats()` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaStats {
    pub url: String,
    /// The last TXID the replica holds (0: none yet).
    pub txid: u64,
    /// How long the oldest commit not yet in the replica has waited.
    pub lag: Duration,
    pub pending_files: u64,
    pub pending_bytes: u64,
    pub bytes_shipped: u64,
    /// When the last upload succeeded (ms since the epoch).
    pub last_sync_at_ms: Option<i64>,
    pub last_error: Option<String>,
}

#[derive(Default)]
struct Counters {
    txid: AtomicU64,
    pending_files: AtomicU64,
    pending_bytes: AtomicU64,
    bytes_shipped: AtomicU64,
    last_sync_at_ms: AtomicI64,
    /// Oldest commit waiting in the capture log or the outbox (0: none).
    oldest_pending_ms: AtomicI64,
    /// Oldest commit not yet captured (0: none), set by `committed`.
    oldest_uncaptured_ms: AtomicI64,
    last_error: Mutex<Option<String>>,
}

/// Local state: the follower once the database opened, or why it could not.
enum Local {
    Waiting,
    Ready(Box<Follower>),
    Failed(String),
}

/// Connects to the replica; run on the replicator's thread, so that even
/// resolving a local folder never happens on the caller's.
pub type Connect = Box<dyn FnOnce() -> Result<Arc<dyn Remote>, RemoteError> + Send>;

struct Shared {
    settings: ReplicaSettings,
    remote: OnceLock<Arc<dyn Remote>>,
    local: Mutex<Local>,
    local_changed: Condvar,
    /// A read-only connection whose open read transaction pins the WAL
    /// during a checkpointer pass.
    pin: Arc<Mutex<Option<Connection>>>,
    /// A second read-only connection, whose read transaction holds the WAL
    /// still while a full image is read.
    image: Mutex<Option<Connection>>,
    counters: Counters,
    wake: Sender<()>,
}

pub struct Replicator {
    shared: Arc<Shared>,
    commands: Sender<Command>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Replicator {
    /// Starts the replicator thread. It waits for the engine's `opened`
    /// before it touches any file.
    pub fn start(settings: ReplicaSettings, connect: Connect) -> std::io::Result<Arc<Self>> {
        let (wake, woken) = bounded(1);
        let (commands, inbox) = unbounded();
        let shared = Arc::new(Shared {
            settings,
            remote: OnceLock::new(),
            local: Mutex::new(Local::Waiting),
            local_changed: Condvar::new(),
            pin: Arc::default(),
            image: Mutex::new(None),
            counters: Counters::default(),
            wake,
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("offloop-replicator".into())
                .spawn(move || run(shared, connect, inbox, woken))?
        };
        Ok(Arc::new(Replicator {
            shared,
            commands,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// Calls `reply` once the replicator knows where the replica stands:
    /// with an error if it never will (a bad URL, refused credentials, a
    /// local folder it cannot write), else with the replica's TXID. A
    /// replica that is only down does not fail this: it is retried.
    pub fn ready(&self, reply: Reply) {
        self.send(Command::Ready(reply));
    }

    /// Captures every commit made so far, stages and uploads it; `reply`
    /// hears the replica's TXID once every one of them is in the replica.
    pub fn sync(&self, reply: Reply) {
        self.send(Command::Sync(reply));
    }

    /// Ships what is committed (trying for a bounded time), then ends the
    /// thread; `reply` hears the replica's TXID. The database may go on
    /// without replication.
    pub fn stop(&self, reply: Reply) {
        self.send(Command::Stop {
            reply,
            closed: false,
        });
    }

    /// `stop` for a database that has closed: when everything was shipped,
    /// it also records the database as the replica's last TXID left it, so
    /// the next open carries on without a full snapshot.
    pub fn close(&self, reply: Reply) {
        self.send(Command::Stop {
            reply,
            closed: true,
        });
    }

    /// Waits for the thread to end (after `stop`), on the caller's thread.
    pub fn join(&self) {
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    fn send(&self, command: Command) {
        if let Err(err) = self.commands.send(command) {
            match err.0 {
                Command::Ready(reply) | Command::Sync(reply) | Command::Stop { reply, .. } => {
                    reply(Err("replication has stopped".into()))
                }
                Command::Opened(_) => {}
            }
        }
    }

    pub fn stats(&self) -> ReplicaStats {
        let c = &self.shared.counters;
        let now = now_ms();
        let oldest = [
            c.oldest_pending_ms.load(Ordering::Relaxed),
            c.oldest_uncaptured_ms.load(Ordering::Relaxed),
        ]
        .into_iter()
        .filter(|&t| t > 0)
        .min();
        let last_sync = c.last_sync_at_ms.load(Ordering::Relaxed);
        ReplicaStats {
            url: self.shared.settings.url.clone(),
            txid: c.txid.load(Ordering::Relaxed),
            lag: Duration::from_millis(oldest.map_or(0, |t| (now - t).max(0) as u64)),
            pending_files: c.pending_files.load(Ordering::Relaxed),
            pending_bytes: c.pending_bytes.load(Ordering::Relaxed),
            bytes_shipped: c.bytes_shipped.load(Ordering::Relaxed),
            last_sync_at_ms: (last_sync > 0).then_some(last_sync),
            last_error: c
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

impl WalObserver for Replicator {
    fn opened(&self, path: &str) {
        self.send(Command::Opened(PathBuf::from(path)));
    }

    fn committed(&self) {
        let c = &self.shared.counters;
        let _ = c.oldest_uncaptured_ms.compare_exchange(
            0,
            now_ms(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        match self.shared.wake.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
        }
    }

    /// Runs on the engine's threads: a panic here must not end one of
    /// them, so it becomes a free permit.
    fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit {
        catch_unwind(AssertUnwindSafe(|| self.shared.permit(writes)))
            .unwrap_or_else(|_| CheckpointPermit::free())
    }
}

impl Shared {
    /// Waits until the local state is known; `None` when it never will be.
    fn with_follower<T>(&self, f: impl FnOnce(&mut Follower) -> T) -> Option<T> {
        let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match &mut *local {
                Local::Waiting => {
                    local = self
                        .local_changed
                        .wait(local)
                        .unwrap_or_else(|e| e.into_inner());
                }
                Local::Ready(follower) => return Some(f(follower)),
                Local::Failed(_) => return None,
            }
        }
    }

    /// A checkpoint is about to run: capture everything committed, and if
    /// the writer may commit meanwhile, pin a read snapshot first so the
    /// copy stops at what was captured.
    fn permit(&self, writes: CheckpointWrites) -> CheckpointPermit {
        let pinned = writes == CheckpointWrites::Concurrent && self.pin_snapshot();
        let captured = self.with_follower(|follower| {
            let commit_ms = self.take_uncaptured();
            // Not synced here: a capture log that loses its tail to a power
            // cut no longer matches the WAL at the next open, which then
            // starts the chain again from a full image.
            let result = follower.capture(commit_ms);
            self.publish_pending(follower);
            result
        });
        if let Some(Err(e)) = captured {
            // The frames may be lost to the replica: start its chain again
            // rather than ship a page that is wrong.
            self.set_error(format!("could not capture the WAL: {e}"));
            self.with_follower(|f| {
                let next = f.next_txid();
                f.restart_at(next, format!("a capture failed: {e}"));
            });
        }
        if pinned {
            CheckpointPermit::holding(Box::new(Pin(self.pin.clone())))
        } else {
            CheckpointPermit::free()
        }
    }

    /// Opens a read transaction on the pin connection. False when there is
    /// none (not open yet) or it could not begin.
    fn pin_snapshot(&self) -> bool {
        let pin = self.pin.lock().unwrap_or_else(|e| e.into_inner());
        let Some(conn) = pin.as_ref() else {
            return false;
        };
        let begun = conn.execute_batch("BEGIN").is_ok()
            && conn
                .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                .is_ok();
        if !begun && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        begun
    }

    /// Runs `image` (which reads a full image of the database) inside a
    /// read transaction on the image connection: while it lasts, no
    /// checkpoint copies past what the image reads and the WAL restarts at
    /// most once; when it did, `image` runs again.
    fn in_read_snapshot<T>(
        &self,
        mut image: impl FnMut() -> Option<std::io::Result<T>>,
    ) -> Option<std::io::Result<T>> {
        let conn = self.image.lock().unwrap_or_else(|e| e.into_inner());
        let mut result = None;
        for _ in 0..IMAGE_TRIES {
            if let Some(conn) = conn.as_ref() {
                let _ = conn.execute_batch("BEGIN");
                let _ = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()));
            }
            result = image();
            if let Some(conn) = conn.as_ref() {
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("COMMIT");
                }
            }
            match &result {
                Some(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ => return result,
            }
        }
        result
    }

    fn take_uncaptured(&self) -> Option<i64> {
        let t = self
            .counters
            .oldest_uncaptured_ms
            .swap(0, Ordering::Relaxed);
        (t > 0).then_some(t)
    }

    /// Mirrors the outbox and capture log into the counters `stats` reads.
    fn publish_pending(&self, follower: &Follower) {
        let staged = follower.outbox().staged();
        let c = &self.counters;
        let bytes: u64 =
            staged.iter().map(|s| s.file.size).sum::<u64>() + follower.captured_bytes();
        c.pending_files
            .store(staged.len() as u64, Ordering::Relaxed);
        c.pending_bytes.store(bytes, Ordering::Relaxed);
        let oldest = staged
            .iter()
            .map(|s| s.oldest_commit_ms)
            .chain(follower.oldest_captured_ms())
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        c.oldest_pending_ms.store(oldest, Ordering::Relaxed);
    }

    fn set_error(&self, message: String) {
        *self
            .counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(message);
    }

    fn clear_error(&self) {
        *self
            .counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Ends the pin's read transaction when the checkpoint is over.
struct Pin(Arc<Mutex<Option<Connection>>>);

impl Drop for Pin {
    fn drop(&mut self) {
        let pin = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(conn) = pin.as_ref() {
            let _ = conn.execute_batch("COMMIT");
        }
    }
}

/// The replicator's folder for the database at `db`: `<db>-replica`.
pub fn state_dir(db: &Path) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push("-replica");
    PathBuf::from(dir)
}

/// How the replica's position relates to the local state.
enum Verdict {
    /// The outbox continues the replica; the local chain goes on.
    Continues,
    /// No local state: start with a full image after the replica's last.
    Start,
    /// The replica has a gap before the outbox, is ahead, or is someone
    /// else's: start again with a full image after its last.
    Diverged(String),
}

/// The thread's state between messages.
struct Worker {
    shared: Arc<Shared>,
    /// The replica's position has been checked against the outbox since
    /// the last failure.
    verified: bool,
    /// The replica's files, known once listed.
    has_snapshot: bool,
    last_snapshot_ms: i64,
    last_compaction: Vec<Instant>,
    failures: u32,
    retry_at: Option<Instant>,
    permanent_error: Option<String>,
    /// The database's path, once opened.
    db: Option<PathBuf>,
    /// Why the chain started again, to show as `last_error` after the
    /// round that did it succeeds (the open turns it into a warning).
    notice: Option<String>,
}

fn run(shared: Arc<Shared>, connect: Connect, inbox: Receiver<Command>, woken: Receiver<()>) {
    let _ended = Ended(shared.clone());
    let connected = catch_unwind(AssertUnwindSafe(connect)).unwrap_or_else(|_| {
        Err(RemoteError::permanent(
            "offloop internal error: connecting to the replica panicked",
        ))
    });
    let mut worker = Worker {
        last_compaction: vec![Instant::now(); shared.settings.levels.len()],
        shared,
        verified: false,
        has_snapshot: false,
        last_snapshot_ms: 0,
        failures: 0,
        retry_at: None,
        permanent_error: None,
        db: None,
        notice: None,
    };
    match connected {
        Ok(remote) => {
            let _ = worker.shared.remote.set(remote);
        }
        Err(e) => {
            let why = format!("replica {}: {}", worker.shared.settings.url, e.message);
            worker.shared.set_error(why.clone());
            worker.permanent_error = Some(why);
        }
    }
    let mut waiting_ready: Vec<Reply> = Vec::new();
    let mut opened = false;
    let sync_interval = worker.shared.settings.sync_interval;
    let mut next_sync = Instant::now() + sync_interval;
    // When the next capture runs, once a commit woke the thread: commits
    // arriving meanwhile are captured together.
    let mut capture_at: Option<Instant> = None;
    let never = crossbeam_channel::never();
    loop {
        let due = capture_at.map_or(next_sync, |c| c.min(next_sync));
        let timeout = due.saturating_duration_since(Instant::now());
        let wake = if capture_at.is_some() { &never } else { &woken };
        select! {
            recv(inbox) -> msg => match msg {
                Ok(Command::Opened(path)) => {
                    opened = true;
                    let result = guarded(|| worker.open(&path));
                    for reply in waiting_ready.drain(..) {
                        reply(result.clone());
                    }
                }
                Ok(Command::Ready(reply)) => {
                    if opened {
                        reply(worker.readiness());
                    } else {
                        waiting_ready.push(reply);
                    }
                }
                Ok(Command::Sync(reply)) => {
                    let result = guarded(|| worker.sync(true));
                    reply(result);
                }
                Ok(Command::Stop { reply, closed }) => {
                    reply(guarded(|| worker.stop(closed)));
                    break;
                }
                Err(_) => break,
            },
            recv(wake) -> _ => {
                capture_at = Some(Instant::now() + CAPTURE_DELAY);
            }
            default(timeout) => {
                let now = Instant::now();
                if capture_at.is_some_and(|c| c <= now) {
                    capture_at = None;
                    let _ = guarded(|| {
                        worker.capture();
                        Ok(0)
                    });
                }
                if next_sync <= now {
                    if opened {
                        let _ = guarded(|| worker.sync(false));
                    }
                    next_sync = Instant::now() + sync_interval;
                }
            }
        }
    }
    for reply in waiting_ready {
        reply(Err("replication stopped before the database opened".into()));
    }
}

/// However the thread ends, permits asked for afterwards find no follower
/// and pass at once instead of waiting for one, and the pin closes.
struct Ended(Arc<Shared>);

impl Drop for Ended {
    fn drop(&mut self) {
        let mut local = self.0.local.lock().unwrap_or_else(|e| e.into_inner());
        *local = Local::Failed("replication stopped".into());
        self.0.local_changed.notify_all();
        drop(local);
        self.0.pin.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.0
            .image
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

/// Runs one step under `catch_unwind`: a panic becomes an error and the
/// thread lives on.
fn guarded(f: impl FnOnce() -> Result<u64, String>) -> Result<u64, String> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("offloop internal error: the replicator panicked".into()))
}

impl Worker {
    /// The database opened: local state first (so permits can be granted),
    /// then the replica's position.
    fn open(&mut self, db: &Path) -> Result<u64, String> {
        self.db = Some(db.to_path_buf());
        let local = match Follower::open(db, &state_dir(db)) {
            Ok(follower) => Local::Ready(Box::new(follower)),
            Err(e) => Local::Failed(format!(
                "cannot keep replication state next to the database: {e}"
            )),
        };
        let failed = match &local {
            Local::Failed(why) => Some(why.clone()),
            _ => None,
        };
        *self.shared.local.lock().unwrap_or_else(|e| e.into_inner()) = local;
        self.shared.local_changed.notify_all();
        if let Some(why) = failed {
            self.shared.set_error(why.clone());
            self.permanent_error = Some(why.clone());
            return Err(why);
        }
        let read_only = || {
            Connection::open_with_flags(
                db,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok()
        };
        *self.shared.pin.lock().unwrap_or_else(|e| e.into_inner()) = read_only();
        *self.shared.image.lock().unwrap_or_else(|e| e.into_inner()) = read_only();
        // The first contact (a listing) decides whether the replica can be
        // used at all, and where it stands; uploads wait for the first
        // round. A replica that is only down is retried then.
        if let Some(why) = &self.permanent_error {
            return Err(why.clone());
        }
        let contact = self
            .remote()
            .and_then(|remote| remote.list_all())
            .and_then(|files| self.reconcile(&files));
        match contact {
            Ok(()) => {
                self.verified = true;
                if let Some(notice) = self.notice.take() {
                    self.shared.set_error(notice);
                }
                Ok(self.txid())
            }
            Err(e) => {
                let why = format!("replica {}: {}", self.shared.settings.url, e.message);
                self.shared.set_error(why.clone());
                if e.permanent {
                    self.permanent_error = Some(why.clone());
                    return Err(why);
                }
                Ok(self.txid())
            }
        }
    }

    fn readiness(&self) -> Result<u64, String> {
        match &self.permanent_error {
            Some(why) => Err(why.clone()),
            None => Ok(self.txid()),
        }
    }

    fn remote(&self) -> Result<Arc<dyn Remote>, RemoteError> {
        self.shared
            .remote
            .get()
            .cloned()
            .ok_or_else(|| RemoteError::permanent("not connected to the replica"))
    }

    fn txid(&self) -> u64 {
        self.shared.counters.txid.load(Ordering::Relaxed)
    }

    /// Copies new commits into the capture log (woken by a commit).
    fn capture(&self) {
        let shared = &self.shared;
        let result = shared.with_follower(|f| {
            let r = f.capture(shared.take_uncaptured());
            shared.publish_pending(f);
            r
        });
        if let Some(Err(e)) = result {
            shared.set_error(format!("could not capture the WAL: {e}"));
        }
    }

    /// One round: capture and stage, repair the chain if it broke, upload
    /// the outbox, then compaction, snapshots and retention when due.
    /// `forced` (a `sync()` call) ignores the retry backoff.
    fn sync(&mut self, forced: bool) -> Result<u64, String> {
        if let Some(why) = &self.permanent_error {
            return Err(why.clone());
        }
        let shared = self.shared.clone();
        let staged = shared.with_follower(|f| {
            let r = f
                .capture(shared.take_uncaptured())
                .and_then(|_| f.stage(now_ms()));
            shared.publish_pending(f);
            r
        });
        match staged {
            None => return Err("replication state is unavailable".into()),
            Some(Err(e)) => {
                let why = format!("could not stage changes for upload: {e}");
                shared.set_error(why.clone());
                return Err(why);
            }
            Some(Ok(_)) => {}
        }
        self.enforce_cap();
        if !forced && self.retry_at.is_some_and(|r| Instant::now() < r) {
            return Err(self.current_error());
        }
        match self.upload_round() {
            Ok(()) => {
                self.failures = 0;
                self.retry_at = None;
                match self.notice.take() {
                    Some(notice) => shared.set_error(notice),
                    None => shared.clear_error(),
                }
                if let Err(e) = self.housekeeping() {
                    shared.set_error(e.message);
                }
                Ok(self.txid())
            }
            Err(e) => {
                self.verified = false;
                self.failures += 1;
                let backoff = FIRST_BACKOFF
                    .saturating_mul(1 << self.failures.min(8))
                    .min(MAX_BACKOFF);
                self.retry_at = Some(Instant::now() + backoff);
                let why = format!("replica {}: {}", shared.settings.url, e.message);
                shared.set_error(why.clone());
                if e.permanent && self.shared.counters.txid.load(Ordering::Relaxed) == 0 {
                    self.permanent_error = Some(why.clone());
                }
                Err(why)
            }
        }
    }

    /// Past the cap, what waits is dropped: the replica will start again
    /// from a full image once it answers, instead of the disk filling up.
    fn enforce_cap(&mut self) {
        let c = &self.shared.counters;
        let cap = self.shared.settings.max_pending_bytes;
        if c.pending_bytes.load(Ordering::Relaxed) <= cap {
            return;
        }
        let shared = self.shared.clone();
        shared.with_follower(|f| {
            let _ = f.outbox_mut().clear();
            f.restart_at(
                None,
                format!("more than {cap} bytes waited for upload; dropped"),
            );
            shared.publish_pending(f);
        });
        self.verified = false;
        shared.set_error(format!(
            "more than {cap} bytes waited for the replica: dropped them; a full snapshot follows once it answers"
        ));
    }

    fn current_error(&self) -> String {
        self.shared
            .counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the replica is unavailable".into())
    }

    /// Checks the replica's position if needed, starts the chain again
    /// with a full image when it must, and uploads the outbox in order.
    fn upload_round(&mut self) -> Result<(), RemoteError> {
        let shared = self.shared.clone();
        if !self.verified {
            let files = self.remote()?.list_all()?;
            self.reconcile(&files)?;
            self.verified = true;
        }
        self.repair_chain()?;
        let outbox = shared
            .with_follower(|f| f.outbox().staged().to_vec())
            .ok_or_else(|| RemoteError::permanent("replication state is unavailable"))?;
        for staged in outbox {
            self.remote()?.put(&staged.file, &staged.path)?;
            shared.with_follower(|f| {
                let _ = f.outbox_mut().remove(&staged);
                shared.publish_pending(f);
            });
            self.shipped(&staged);
        }
        Ok(())
    }

    fn shipped(&mut self, staged: &Staged) {
        let c = &self.shared.counters;
        c.bytes_shipped
            .fetch_add(staged.file.size, Ordering::Relaxed);
        c.txid.fetch_max(staged.file.max_txid, Ordering::Relaxed);
        c.last_sync_at_ms.store(now_ms(), Ordering::Relaxed);
        if staged.file.level == SNAPSHOT_LEVEL {
            self.has_snapshot = true;
            self.last_snapshot_ms = staged.file.timestamp_ms;
        }
    }

    /// Compares the replica's files with what waits locally, and decides:
    /// the outbox continues the replica's chain (upload it), or the chain
    /// must start again with a full image at the replica's next TXID.
    fn reconcile(&mut self, files: &[RemoteFile]) -> Result<(), RemoteError> {
        let replica_max = files.iter().map(|f| f.max_txid).max().unwrap_or(0);
        // The newest file's own timestamp tells ours from someone else's.
        let newest_ms = match files
            .iter()
            .filter(|f| f.max_txid == replica_max)
            .min_by_key(|f| f.level)
        {
            Some(newest) => Some(self.remote()?.header_timestamp(newest)?),
            None => None,
        };
        let snapshots = files.iter().filter(|f| f.level == SNAPSHOT_LEVEL);
        self.has_snapshot = snapshots.clone().next().is_some();
        self.last_snapshot_ms = snapshots.map(|f| f.timestamp_ms).max().unwrap_or(0);
        self.shared
            .counters
            .txid
            .store(replica_max, Ordering::Relaxed);
        let shared = self.shared.clone();
        let verdict = shared
            .with_follower(|f| -> std::io::Result<Verdict> {
                let staged = f.outbox().staged();
                let Some(next) = f.next_txid() else {
                    return Ok(Verdict::Start);
                };
                let first = staged
                    .iter()
                    .filter(|s| s.file.level == 0)
                    .map(|s| s.file.min_txid)
                    .min()
                    .unwrap_or(next);
                // A staged file the replica already has (a put whose answer
                // was lost) must be the very same file.
                let same = |txid: u64| {
                    staged
                        .iter()
                        .find(|s| s.file.level == 0 && s.file.max_txid == txid)
                        .zip(newest_ms)
                        .is_some_and(|(s, ms)| s.file.timestamp_ms == ms)
                };
                Ok(if replica_max + 1 < first {
                    Verdict::Diverged(format!(
                        "the replica ends at TXID {replica_max}, before this database's next ({first})"
                    ))
                } else if replica_max >= next {
                    Verdict::Diverged(format!(
                        "the replica (TXID {replica_max}) is ahead of this database (TXID {})",
                        next - 1
                    ))
                } else if replica_max >= first && !same(replica_max) {
                    Verdict::Diverged(format!(
                        "the replica's TXID {replica_max} was written by someone else"
                    ))
                } else {
                    Verdict::Continues
                })
            })
            .ok_or_else(|| RemoteError::permanent("replication state is unavailable"))?
            .map_err(|e| RemoteError::permanent(format!("cannot read the outbox: {e}")))?;
        if let Verdict::Start | Verdict::Diverged(_) = &verdict {
            if let Verdict::Diverged(why) = &verdict {
                self.notice = Some(format!(
                    "replica {}: {why}: starting it again from a full snapshot",
                    shared.settings.url
                ));
            }
            shared.with_follower(|f| {
                let _ = f.outbox_mut().clear();
                f.restart_at(Some(replica_max + 1), "the replica starts again here");
            });
        }
        Ok(())
    }

    /// A broken chain starts again: a full image at its next TXID (also an
    /// L9 snapshot when the replica has none).
    fn repair_chain(&mut self) -> Result<(), RemoteError> {
        let shared = self.shared.clone();
        let l9 = !self.has_snapshot;
        let result = shared.in_read_snapshot(|| {
            shared.with_follower(|f| {
                let r = match (f.chain(), f.next_txid()) {
                    (Chain::Broken { .. }, Some(txid)) => {
                        f.full_image(txid, true, l9, now_ms()).map(|_| ())
                    }
                    _ => Ok(()),
                };
                shared.publish_pending(f);
                r
            })
        });
        match result {
            Some(Err(e)) => Err(RemoteError::permanent(format!(
                "cannot stage a snapshot of the database: {e}"
            ))),
            _ => Ok(()),
        }
    }

    /// After a clean upload round: compaction per level, an L9 snapshot
    /// when due, retention.
    fn housekeeping(&mut self) -> Result<(), RemoteError> {
        let shared = self.shared.clone();
        let settings = &shared.settings;
        let now = now_ms();
        let mut compacted = false;
        for (i, interval) in settings.levels.iter().enumerate() {
            if self.last_compaction[i].elapsed() < *interval {
                continue;
            }
            self.last_compaction[i] = Instant::now();
            let dir = shared
                .with_follower(|f| f.scratch_dir())
                .ok_or_else(|| RemoteError::permanent("replication state is unavailable"))?;
            compact_level(self.remote()?.as_ref(), (i + 1) as u8, &dir)?;
            compacted = true;
        }
        if now - self.last_snapshot_ms >= settings.snapshot_interval.as_millis() as i64 {
            // Staged first, so the snapshot is exactly the last TXID.
            let staged = shared.in_read_snapshot(|| {
                shared.with_follower(|f| -> std::io::Result<bool> {
                    f.capture(shared.take_uncaptured())?;
                    f.stage(now)?;
                    let taken = match (f.chain(), f.next_txid()) {
                        (Chain::Following(_), Some(next)) if next > 1 => {
                            f.full_image(next - 1, false, true, now)?.is_some()
                        }
                        _ => false,
                    };
                    shared.publish_pending(f);
                    Ok(taken)
                })
            });
            match staged {
                Some(Ok(true)) => {
                    self.last_snapshot_ms = now;
                    self.upload_round()?;
                }
                Some(Err(e)) => {
                    return Err(RemoteError::transient(format!(
                        "cannot stage a snapshot: {e}"
                    )))
                }
                _ => {}
            }
        }
        if compacted {
            enforce_retention(
                self.remote()?.as_ref(),
                now,
                settings.retention,
                settings.l0_retention,
            )?;
        }
        Ok(())
    }

    /// The final round: capture, stage and upload, retrying until the
    /// deadline; whatever is left stays in the outbox for the next open.
    fn stop(&mut self, closed: bool) -> Result<u64, String> {
        let deadline = Instant::now() + STOP_UPLOAD_DEADLINE;
        loop {
            match self.sync(true) {
                Ok(txid) => {
                    if closed {
                        // These connections may be the last ones open:
                        // closing them checkpoints what is left (captured
                        // and shipped already) and removes the WAL.
                        self.shared
                            .pin
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .take();
                        self.shared
                            .image
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .take();
                        if let Some(db) = &self.db {
                            let dir = state_dir(db);
                            self.shared.with_follower(|f| f.mark_clean(&dir));
                        }
                    }
                    self.shared.with_follower(|f| f.sync());
                    return Ok(txid);
                }
                Err(e) if self.permanent_error.is_some() || Instant::now() >= deadline => {
                    self.shared.with_follower(|f| f.sync());
                    return Err(e);
                }
                Err(_) => std::thread::sleep(FIRST_BACKOFF),
            }
        }
    }
}
