//! The replicator thread (`offloop-replicator`): its loop, which answers
//! the handle's messages, captures shortly after a commit wakes it and
//! runs a sync round each `sync_interval`; and the `Worker`, the thread's
//! state between messages, with the steps that open the local state, capture
//! and stop.
//!
//! A panic in any step becomes an error and the thread lives on. It never
//! runs on the JS thread; the sync round itself (upload) and the
//! compaction/snapshot schedule live in their own files.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver};
use rusqlite::{Connection, OpenFlags};

use offloop_ltx::Txid;

use crate::backlog::Backlog;
use crate::error::Error;
use crate::renewer::Renewer;
use crate::settings::PagedGate;
use crate::shared::{Answer, Command, Connect, Handover, Local, Reply, Shared};
use crate::stager::Stager;
use crate::store::{LtxFile, Store, Timestamps};

/// First retry after a failed upload; doubles up to `MAX_BACKOFF`.
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// How long after a commit wakes the thread it captures: the commits of
/// those milliseconds are read in one pass, so a busy writer costs one
/// capture per interval rather than one per commit. A checkpoint never
/// waits for it (it captures the tail itself).
const CAPTURE_DELAY: Duration = Duration::from_millis(20);
/// How long `stop` keeps trying to upload what waits before it gives up
/// and leaves it in the outbox for the next open.
const STOP_UPLOAD_DEADLINE: Duration = Duration::from_secs(10);

/// The replicator's folder for the database at `db`: `<db>-replica`.
pub fn state_dir(db: &Path) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push("-replica");
    PathBuf::from(dir)
}

/// The thread's state between messages.
pub(crate) struct Worker {
    pub(crate) shared: Arc<Shared>,
    /// The replica's position has been checked against the outbox since
    /// the last failure.
    pub(crate) verified: bool,
    /// Whether the replica holds an L9 snapshot: read from its listing at
    /// each reconcile, and set when one is uploaded. Without one, the next
    /// full image of a chain that starts again is also an L9 snapshot.
    pub(crate) has_snapshot: bool,
    pub(crate) last_snapshot_ms: i64,
    pub(crate) last_compaction: Vec<Instant>,
    /// What reached the replica since housekeeping last looked.
    pub(crate) backlog: Backlog,
    pub(crate) failures: u32,
    pub(crate) retry_at: Option<Instant>,
    pub(crate) permanent_error: Option<String>,
    /// The database's path, once opened.
    pub(crate) db: Option<PathBuf>,
    /// Why the chain started again, to show as `last_error` after the
    /// round that did it succeeds (the open turns it into a warning).
    pub(crate) notice: Option<String>,
    /// The replica, once connected. Held by this thread alone, so that it
    /// goes (and with the process's last store, the store's threads) when
    /// the thread ends, not when the last handle to the replicator does.
    store: Option<Arc<dyn Store>>,
    /// Renews the lease while it is held.
    pub(crate) renewer: Option<Renewer>,
    /// The replica's position was checked once under this holder's lease:
    /// from then on, a TXID this database did not write fences it.
    pub(crate) tenure: bool,
    /// The replica's files as listed right after the lease was taken at
    /// the start, for the first contact once the database opens: under
    /// this holder's lease, with nothing uploaded yet, the replica is
    /// still as listed.
    listed: Option<Vec<LtxFile>>,
    /// A promotion's lease and position, until the open takes them.
    handover: Option<Handover>,
}

pub(crate) fn run(
    shared: Arc<Shared>,
    connect: Connect,
    handover: Option<Handover>,
    inbox: Receiver<Command>,
    woken: Receiver<()>,
    waiting: Receiver<Reply>,
) {
    let _ended = Ended(shared.clone());
    let connected = catch_unwind(AssertUnwindSafe(connect)).unwrap_or_else(|_| {
        Err(Error::State(
            "offloop internal error: connecting to the replica panicked".into(),
        ))
    });
    let mut worker = Worker {
        last_compaction: vec![Instant::now(); shared.settings.levels.len()],
        backlog: Backlog::unknown(&shared.settings),
        shared,
        verified: false,
        has_snapshot: false,
        last_snapshot_ms: 0,
        failures: 0,
        retry_at: None,
        permanent_error: None,
        db: None,
        notice: None,
        store: None,
        renewer: None,
        tenure: false,
        listed: None,
        handover,
    };
    match connected {
        Ok(store) => {
            worker.store = Some(store);
        }
        Err(e) => {
            let why = format!("replica {}: {e}", worker.shared.settings.url);
            worker.shared.set_error(why.clone());
            worker.permanent_error = Some(why);
        }
    }
    // A database restored at open: its lease is taken now, beside the
    // restore's reads, which write nothing before it is held, and the
    // replica listed under it.
    let first = (
        worker.shared.settings.restore_at.clone(),
        worker.shared.lease.clone(),
    );
    if let (Some(db), Some(lease)) = first {
        let outcome = match &worker.permanent_error {
            Some(why) => Err(why.clone()),
            None => guarded(|| {
                worker.take_lease_first(lease, &db)?;
                worker.list_under_lease()
            }),
        };
        if let Err(why) = &outcome {
            worker.shared.set_error(why.clone());
            worker.permanent_error = Some(why.clone());
        }
        worker.shared.set_leased(outcome);
    }
    let mut waiting_ready: Vec<Reply> = Vec::new();
    let mut opened = false;
    let sync_interval = worker.shared.settings.sync_interval;
    let gather_window = worker.shared.settings.gather_window;
    let mut next_sync = Instant::now() + sync_interval;
    // When the next capture runs, once a commit woke the thread: commits
    // arriving meanwhile are captured together.
    let mut capture_at: Option<Instant> = None;
    let never = crossbeam_channel::never();
    // Writes waiting for the replica, and when a failed upload for them is
    // tried again.
    let mut durable: Vec<Reply> = Vec::new();
    let mut durable_retry: Option<Instant> = None;
    // Until when, and for how many waiters, the next round gathers.
    let mut gather: Option<(Instant, usize)> = None;
    loop {
        durable.extend(waiting.try_iter());
        let gathered = gather
            .is_none_or(|(until, expected)| durable.len() >= expected || Instant::now() >= until);
        if opened && !durable.is_empty() {
            if let Some(why) = worker.shared.fenced() {
                for reply in durable.drain(..) {
                    reply(Err(why.clone()));
                }
            } else if gathered && durable_retry.is_none_or(|at| Instant::now() >= at) {
                gather = None;
                // Everyone who asked before this upload starts shares it
                // (they were gathered at the top of the loop).
                // They hear back once the upload is done; compaction and
                // the rest run after the replies.
                let result = guarded(|| worker.ship(true));
                let result = match (result, worker.shared.fenced()) {
                    (_, Some(why)) => Err(why),
                    (result, None) => result,
                };
                let keep_waiting = result.is_err()
                    && worker.permanent_error.is_none()
                    && worker.shared.fenced().is_none();
                if keep_waiting {
                    durable_retry = Some(Instant::now() + FIRST_BACKOFF);
                } else {
                    durable_retry = None;
                    let answered = durable.len();
                    if result.is_ok() {
                        worker.shared.counters.count_durable_round(answered);
                    }
                    for reply in durable.drain(..) {
                        reply(result.clone());
                    }
                    // Those who asked meanwhile, and those just answered
                    // coming back, share the next round.
                    durable.extend(waiting.try_iter());
                    gather = Some((Instant::now() + gather_window, durable.len() + answered));
                }
                worker.tidy_after(result.is_ok());
                next_sync = Instant::now() + sync_interval;
                continue;
            }
        }
        let mut due = capture_at.map_or(next_sync, |c| c.min(next_sync));
        if let Some(retry) = durable_retry.filter(|_| !durable.is_empty()) {
            due = due.min(retry);
        }
        if let Some((until, _)) = gather.filter(|_| !durable.is_empty()) {
            due = due.min(until);
        }
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
                    let result = guarded(|| worker.ship(true));
                    let shipped = result.is_ok();
                    reply(result);
                    worker.tidy_after(shipped);
                }
                Ok(Command::Stop { reply, .. }) if !opened => {
                    // The database never opened (its open failed): nothing
                    // was committed, and no stager will ever be ready to
                    // ship it. A lease taken for its restore goes back.
                    worker.release_lease();
                    reply(Err("replication stopped before the database opened".into()));
                    break;
                }
                Ok(Command::Stop { reply, closed }) => {
                    durable.extend(waiting.try_iter());
                    let result = guarded(|| worker.stop(closed));
                    for waiter in durable.drain(..) {
                        waiter(result.clone());
                    }
                    reply(result);
                    break;
                }
                Err(_) => break,
            },
            recv(wake) -> _ => {
                capture_at = Some(Instant::now() + CAPTURE_DELAY);
            }
            recv(waiting) -> reply => {
                if let Ok(reply) = reply {
                    durable.push(reply);
                }
            }
            default(timeout) => {
                let now = Instant::now();
                if capture_at.is_some_and(|c| c <= now) {
                    capture_at = None;
                    let _ = guarded(|| {
                        worker.capture();
                        Ok(None)
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
    for reply in durable.into_iter().chain(waiting.try_iter()) {
        reply(Err("replication has stopped".into()));
    }
}

/// However the thread ends, permits asked for afterwards find no stager
/// and pass at once instead of waiting for one, and the pin closes.
struct Ended(Arc<Shared>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.set_leased(Err("replication stopped".into()));
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
pub(crate) fn guarded(f: impl FnOnce() -> Answer) -> Answer {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("offloop internal error: the replicator panicked".into()))
}

impl Worker {
    /// The database closed, and everything its WAL held is captured and
    /// shipped. The pin and image connections closed after the writer's, and
    /// read-only connections cannot checkpoint: the WAL and the `-shm` are
    /// still there. The last connection to a file that can write checkpoints
    /// and deletes both as it closes, so one is opened and closed here, as
    /// SQLite's own last close would have done. A file a paged restore is
    /// still filling is left as it is, and so is one another connection
    /// holds (SQLite then checkpoints nothing).
    fn close_last(&self, db: &Path) {
        let filling = self
            .shared
            .settings
            .paged
            .as_ref()
            .is_some_and(|gate| !gate.is_filled());
        if filling {
            return;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if let Ok(conn) = Connection::open_with_flags(db, flags) {
            // A connection opens the WAL with its first read; only then does
            // its close checkpoint and delete it.
            let _ = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()));
        }
    }

    /// The database opened: local state first (so permits can be granted),
    /// then the replica's position.
    pub(crate) fn open(&mut self, db: &Path) -> Answer {
        self.db = Some(db.to_path_buf());
        let local = match Stager::open(db, &state_dir(db)) {
            Ok(stager) => Local::Ready(Box::new(stager)),
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
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // A database a paged restore put in place is read through the paged
        // VFS, as the engine's connections read it; any other through the
        // default one (the paged VFS is registered only for a restore).
        let paged = self
            .shared
            .settings
            .paged
            .as_ref()
            .is_some_and(PagedGate::is_set);
        let read_only = || {
            let opened = if paged {
                Connection::open_with_flags_and_vfs(db, flags, offloop_vfs::VFS_NAME)
            } else {
                Connection::open_with_flags(db, flags)
            };
            // Without them, checkpoints beside the writer are refused and
            // full images fail (with this error) rather than risk a frame.
            opened
                .map_err(|e| {
                    self.shared
                        .set_error(format!("could not open a read connection: {e}"))
                })
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
        if let Some(handover) = self.handover.take() {
            return self.take_over(handover);
        }
        // Taken already when the database was restored at open.
        let lease = self.shared.lease.clone().filter(|_| self.renewer.is_none());
        if let Some(lease) = lease {
            if let Err(why) = self.take_lease(lease, db) {
                self.shared.set_error(why.clone());
                self.permanent_error = Some(why.clone());
                return Err(why);
            }
        }
        let contact = match self.listed.take() {
            Some(files) => self.reconcile(&files),
            None => self
                .store()
                .and_then(|store| store.list_all(Timestamps::Listed))
                .and_then(|levels| self.reconcile(&levels.concat())),
        };
        match contact {
            Ok(()) => {
                self.verified = true;
                if let Some(notice) = self.notice.take() {
                    self.shared.set_error(notice);
                }
                Ok(self.txid())
            }
            Err(e) => {
                let why = format!("replica {}: {e}", self.shared.settings.url);
                self.shared.set_error(why.clone());
                if e.is_permanent() {
                    self.permanent_error = Some(why.clone());
                    // The open fails having written nothing: the lease
                    // goes back at once rather than block others for its TTL.
                    self.release_lease();
                    return Err(why);
                }
                Ok(self.txid())
            }
        }
    }

    /// A promoted follower's open: the follower stopped at the replica's
    /// head under the lease the promotion took, and the local chain goes
    /// on from the next TXID, so the replica's position is known without
    /// asking it. The lease is renewed from now on.
    fn take_over(&mut self, handover: Handover) -> Answer {
        let url = &self.shared.settings.url;
        let store = self.store().map_err(|e| format!("replica {url}: {e}"))?;
        if let Err(why) = self.renew(handover.lease, store) {
            self.shared.set_error(why.clone());
            self.permanent_error = Some(why.clone());
            return Err(why);
        }
        self.shared
            .counters
            .txid
            .store(handover.head.get(), Ordering::Relaxed);
        self.has_snapshot = handover.snapshot_ms.is_some();
        self.last_snapshot_ms = handover.snapshot_ms.unwrap_or(0);
        self.tenure = true;
        self.verified = true;
        Ok(self.txid())
    }

    /// Lists the replica once the lease is held (kept for the first
    /// contact): its newest TXID, `None` when it holds no file.
    fn list_under_lease(&mut self) -> Answer {
        let url = &self.shared.settings.url;
        let files = self
            .store()
            .and_then(|store| store.list_all(Timestamps::Listed))
            .map_err(|e| format!("replica {url}: {e}"))?
            .concat();
        let newest = files.iter().map(|f| f.max_txid).max();
        self.listed = Some(files);
        Ok(newest)
    }

    pub(crate) fn readiness(&self) -> Answer {
        match &self.permanent_error {
            Some(why) => Err(why.clone()),
            None => Ok(self.txid()),
        }
    }

    pub(crate) fn store(&self) -> crate::Result<Arc<dyn Store>> {
        self.store
            .clone()
            .ok_or_else(|| Error::State("not connected to the replica".into()))
    }

    /// The replica's TXID as last seen; `None` while it holds nothing of
    /// this database.
    pub(crate) fn txid(&self) -> Option<Txid> {
        Txid::new(self.shared.counters.txid.load(Ordering::Relaxed))
    }

    /// Copies new commits into the capture log (woken by a commit).
    pub(crate) fn capture(&self) {
        let shared = &self.shared;
        let result = shared.with_stager(|f| {
            let r = f.capture(shared.take_uncaptured());
            shared.publish_pending(f);
            r
        });
        if let Some(Err(e)) = result {
            shared.set_error(format!("could not capture the WAL: {e}"));
        }
    }

    /// The final round: capture, stage and upload, retrying until the
    /// deadline; whatever is left stays in the outbox for the next open.
    pub(crate) fn stop(&mut self, closed: bool) -> Answer {
        let deadline = Instant::now() + STOP_UPLOAD_DEADLINE;
        loop {
            match self.sync(true) {
                Ok(txid) => {
                    if closed {
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
                            self.close_last(db);
                            let dir = state_dir(db);
                            self.shared.with_stager(|f| f.mark_clean(&dir));
                        }
                    }
                    self.shared.with_stager(|f| f.make_durable());
                    self.release_lease();
                    return Ok(txid);
                }
                Err(e)
                    if self.permanent_error.is_some()
                        || self.shared.refusal().is_some()
                        || Instant::now() >= deadline =>
                {
                    self.shared.with_stager(|f| f.make_durable());
                    // What waits is not in the replica: the lease expires
                    // rather than let another writer in before it is.
                    self.renewer.take();
                    return Err(e);
                }
                Err(_) => std::thread::sleep(FIRST_BACKOFF),
            }
        }
    }
}
