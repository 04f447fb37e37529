//! The state the replicator's handle, the engine's observer calls and the
//! database's replication steps share: the counters `stats()` reads, the
//! stager behind its lock, the read connections that pin the WAL, the
//! messages the handle sends the steps, and what a promotion hands the
//! replicator it starts.
//!
//! It grants checkpoint permits (capturing the WAL's tail on the caller's
//! thread) and runs a full image inside a read snapshot. It never uploads,
//! never runs a thread of its own, and never decides when anything is due:
//! the step does (`replication`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use offloop_engine::queue::Sender;
use offloop_engine::{CheckpointPermit, CheckpointWrites};
use rusqlite::Connection;

use offloop_ltx::Txid;

use crate::error::Result;
use crate::lease::Lease;
use crate::pool::Wake;
use crate::settings::ReplicaSettings;
use crate::stager::Stager;
use crate::store::Store;

/// Attempts at a full image while the WAL restarts under it (one restart
/// at most can happen while the image's read transaction lasts).
const IMAGE_TRIES: usize = 3;

/// What a replica call comes to: the replica's TXID (`None` while it holds
/// nothing of this database yet), or why not.
pub type Answer = std::result::Result<Option<Txid>, String>;

/// Answers to `sync`, `ready`, `stop` and a fill's end.
pub type Reply = Box<dyn FnOnce(Answer) + Send>;

pub(crate) enum Command {
    Opened(PathBuf),
    Ready(Reply),
    Sync(Reply),
    /// `closed`: the database has closed, so nothing commits any more.
    Stop {
        reply: Reply,
        closed: bool,
    },
}

#[derive(Default)]
pub(crate) struct Counters {
    /// The last TXID the replica holds, 0 for none (a number, so that
    /// `stats()` reads it without a lock): read through `Worker::txid`.
    pub(crate) txid: AtomicU64,
    pub(crate) pending_files: AtomicU64,
    pub(crate) pending_bytes: AtomicU64,
    pub(crate) bytes_shipped: AtomicU64,
    /// Uploads that made writes waiting for the replica durable, and how
    /// many writes they answered (`durability: 'replica'`).
    pub(crate) durable_rounds: AtomicU64,
    pub(crate) durable_writes: AtomicU64,
    pub(crate) last_sync_at_ms: AtomicI64,
    /// Oldest commit waiting in the capture log or the outbox (0: none).
    pub(crate) oldest_pending_ms: AtomicI64,
    /// Oldest commit not yet captured (0: none), set by `committed`.
    pub(crate) oldest_uncaptured_ms: AtomicI64,
    pub(crate) last_error: Mutex<Option<String>>,
}

impl Counters {
    /// A round for durable writes made `writes` of them durable.
    pub(crate) fn count_durable_round(&self, writes: usize) {
        self.durable_rounds.fetch_add(1, Ordering::Relaxed);
        self.durable_writes
            .fetch_add(writes as u64, Ordering::Relaxed);
    }
}

/// Whether a database is at rest (see `rest.rs`), and its path.
#[derive(Default)]
pub(crate) struct Rest {
    /// The database's path, once opened.
    db: Mutex<Option<PathBuf>>,
    /// At rest: no stager, no read connections, until the writer opens.
    rested: AtomicBool,
    /// Held by the replication for each of its steps, and by a rest: a
    /// database rests between two steps, never under one (a sync round, a
    /// snapshot would find its stager or its read connection gone).
    pub(crate) steps: Mutex<()>,
}

impl Rest {
    pub(crate) fn set_path(&self, db: &Path) {
        *self.db.lock().unwrap_or_else(|e| e.into_inner()) = Some(db.to_path_buf());
    }

    pub(crate) fn path(&self) -> Option<PathBuf> {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn is_rested(&self) -> bool {
        self.rested.load(Ordering::Acquire)
    }

    pub(crate) fn begin(&self) {
        self.rested.store(true, Ordering::Release);
    }

    /// Leaves rest; whether the database was at rest.
    pub(crate) fn end(&self) -> bool {
        self.rested.swap(false, Ordering::AcqRel)
    }
}

/// Local state: the stager once the database opened, or why it could not.
pub(crate) enum Local {
    Waiting,
    Ready(Box<Stager>),
    Failed(String),
}

/// Connects to the replica; run by the replication's first step (on a
/// pool thread), so that even resolving a local folder never happens on
/// the caller's.
pub type Connect = Box<dyn FnOnce() -> Result<Arc<dyn Store>> + Send>;

/// What a promotion hands the replicator it starts: the lease it took
/// and where the replica stands, which a replicator's open would
/// otherwise establish again (the lease's read and write, a listing of
/// every level and the newest file's header).
pub struct Handover {
    /// Taken already, and still unrenewed: the replicator renews it.
    pub lease: Arc<Lease>,
    /// The replica's head, where the follower stopped; the local chain
    /// goes on from the next TXID (`promotion::continue_as_writer`).
    pub head: Txid,
    /// The newest L9 snapshot's timestamp in the follower's last listing
    /// (`None`: none), which decides when the next one is due.
    pub snapshot_ms: Option<i64>,
}

pub(crate) struct Shared {
    pub(crate) settings: ReplicaSettings,
    pub(crate) local: Mutex<Local>,
    pub(crate) local_changed: Condvar,
    /// A read-only connection whose open read transaction pins the WAL
    /// during a checkpointer pass.
    pub(crate) pin: Arc<Mutex<Option<Connection>>>,
    /// A second read-only connection, whose read transaction holds the WAL
    /// still while a full image is read.
    pub(crate) image: Mutex<Option<Connection>>,
    pub(crate) counters: Counters,
    /// The commit wake-up, which schedules the database's next step.
    pub(crate) wake: Wake,
    /// Writes waiting for their commit to be in the replica
    /// (`Replicator::durable`): every waiter queued when an upload starts
    /// shares it.
    pub(crate) durable: Sender<Reply>,
    /// The replica's lease, when the settings ask for one.
    pub(crate) lease: Option<Arc<Lease>>,
    /// Whether the lease taken at the start (`ReplicaSettings::restore_at`)
    /// is held, with the replica's newest TXID listed under it, or why it is
    /// not: `None` until that is known.
    pub(crate) leased: Mutex<Option<Answer>>,
    pub(crate) leased_changed: Condvar,
    /// Whether the database is at rest (see `rest.rs`), and its path.
    pub(crate) rest: Rest,
}

impl Shared {
    /// Records whether the lease taken at the start is held; the first
    /// outcome stays.
    pub(crate) fn set_leased(&self, outcome: Answer) {
        let mut leased = self.leased.lock().unwrap_or_else(|e| e.into_inner());
        if leased.is_none() {
            *leased = Some(outcome);
        }
        self.leased_changed.notify_all();
    }

    /// Waits until the lease taken at the start is held (Ok, with the
    /// replica's newest TXID) or will not be.
    pub(crate) fn wait_leased(&self) -> Answer {
        let mut leased = self.leased.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match &*leased {
                Some(outcome) => return outcome.clone(),
                None => {
                    leased = self
                        .leased_changed
                        .wait(leased)
                        .unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    /// Waits until the local state is known; `None` when it never will be,
    /// or while the database is at rest (see `rest.rs`): the replication's
    /// own steps must never wait for a wake that only they can process.
    pub(crate) fn with_stager<T>(&self, f: impl FnOnce(&mut Stager) -> T) -> Option<T> {
        self.stager_access(f, false)
    }

    /// `with_stager` for a checkpoint permit, asked on the engine's threads:
    /// it waits through a rest too, since the writer opened again (or no
    /// checkpoint would run) and the replication is about to wake.
    fn with_stager_waking<T>(&self, f: impl FnOnce(&mut Stager) -> T) -> Option<T> {
        self.stager_access(f, true)
    }

    fn stager_access<T>(&self, f: impl FnOnce(&mut Stager) -> T, through_rest: bool) -> Option<T> {
        let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match &mut *local {
                Local::Waiting if !through_rest && self.rest.is_rested() => return None,
                Local::Waiting => {
                    local = self
                        .local_changed
                        .wait(local)
                        .unwrap_or_else(|e| e.into_inner());
                }
                Local::Ready(stager) => return Some(f(stager)),
                Local::Failed(_) => return None,
            }
        }
    }

    /// A checkpoint is about to run: capture everything committed, and if
    /// the writer may commit meanwhile, pin a read snapshot first so the
    /// copy stops at what was captured. Without that pin such a checkpoint
    /// is refused: it could copy a commit made after the capture, and the
    /// WAL could then restart over frames never captured.
    pub(crate) fn permit(&self, writes: CheckpointWrites) -> CheckpointPermit {
        let concurrent = writes == CheckpointWrites::Concurrent;
        let pinned = concurrent && self.pin_snapshot();
        if concurrent && !pinned {
            return CheckpointPermit::refused();
        }
        if !concurrent && self.rested_unchanged() {
            return CheckpointPermit::free();
        }
        let captured = self.with_stager_waking(|stager| {
            let commit_ms = self.take_uncaptured();
            // Not synced here: a capture log that loses its tail to a power
            // cut no longer matches the WAL at the next open, which then
            // starts the chain again from a full image.
            let result = stager.capture(commit_ms);
            self.publish_pending(stager);
            result
        });
        if let Some(Err(e)) = captured {
            // The frames may be lost to the replica: start its chain again
            // rather than ship a page that is wrong.
            self.set_error(format!("could not capture the WAL: {e}"));
            self.with_stager_waking(|f| {
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

    /// At rest, and nothing committed since: the WAL holds no frame (a rest
    /// is clean only with none) and nothing can commit while the writer is
    /// excluded, so a checkpoint has nothing to capture first. Such a
    /// checkpoint runs at the database's close when its checkpointer opened
    /// after the rest (a nudge it could not serve at the connection cap
    /// until then): waiting for the stager would wait for a wake that only
    /// the writer's next open sends, and the close would never resolve.
    fn rested_unchanged(&self) -> bool {
        self.rest.is_rested() && self.counters.oldest_uncaptured_ms.load(Ordering::SeqCst) == 0
    }

    /// Opens a read transaction on the pin connection. False when there is
    /// none (not open yet) or it could not begin.
    pub(crate) fn pin_snapshot(&self) -> bool {
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

    /// Whether the database file holds every page, so a full image may
    /// read it (a paged restore fills it in the background).
    pub(crate) fn database_whole(&self) -> bool {
        self.settings.paged.as_ref().is_none_or(|p| p.is_filled())
    }

    /// Runs `image` (which reads a full image of the database) inside a
    /// read transaction on the image connection: while it lasts, no
    /// checkpoint copies past what the image reads and the WAL restarts at
    /// most once; when it did, `image` runs again.
    pub(crate) fn in_read_snapshot<T>(
        &self,
        mut image: impl FnMut() -> Option<std::io::Result<T>>,
    ) -> Option<std::io::Result<T>> {
        let conn = self.image.lock().unwrap_or_else(|e| e.into_inner());
        let Some(conn) = conn.as_ref() else {
            return Some(Err(std::io::Error::other(
                "no read connection to hold the WAL still while a full image is read",
            )));
        };
        let mut result = None;
        for _ in 0..IMAGE_TRIES {
            let begun = conn.execute_batch("BEGIN").is_ok()
                && conn
                    .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                    .is_ok();
            if !begun {
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                return Some(Err(std::io::Error::other(
                    "could not begin the read transaction that holds the WAL still for a full image",
                )));
            }
            result = image();
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("COMMIT");
            }
            match &result {
                Some(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ => return result,
            }
        }
        result
    }

    /// When the oldest commit not yet captured happened, as the capture
    /// about to run takes it over. Until `publish_pending` recounts, that
    /// commit counts as pending, so `stats` never sees it in neither (lag 0
    /// and nothing pending while it is not in the replica): it reads the
    /// uncaptured time first, and these are sequentially consistent.
    pub(crate) fn take_uncaptured(&self) -> Option<i64> {
        let c = &self.counters;
        let t = c.oldest_uncaptured_ms.load(Ordering::SeqCst);
        if t > 0 {
            let _ = c
                .oldest_pending_ms
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |p| {
                    Some(if p == 0 { t } else { p.min(t) })
                });
        }
        let t = c.oldest_uncaptured_ms.swap(0, Ordering::SeqCst);
        (t > 0).then_some(t)
    }

    /// Mirrors the outbox and capture log into the counters `stats` reads.
    pub(crate) fn publish_pending(&self, stager: &Stager) {
        let staged = stager.outbox().staged();
        let c = &self.counters;
        let bytes: u64 = staged.iter().map(|s| s.file.size).sum::<u64>() + stager.captured_bytes();
        c.pending_files
            .store(staged.len() as u64, Ordering::Relaxed);
        c.pending_bytes.store(bytes, Ordering::Relaxed);
        let oldest = staged
            .iter()
            .map(|s| s.oldest_commit_ms)
            .chain(stager.oldest_captured_ms())
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        c.oldest_pending_ms.store(oldest, Ordering::SeqCst);
    }

    /// Why this database writes nothing to the replica now: its lease is
    /// lost, lapsed or not taken; `None` while it may write, or holds no
    /// lease. Uploads stop while this says why.
    pub(crate) fn refusal(&self) -> Option<String> {
        self.lease.as_ref()?.why_refused()
    }

    /// Why this database may never write to the replica again (another
    /// writer took its lease, or its TXIDs); `None` while it may, or once a
    /// lapse ends. Writes waiting for the replica reject only on this.
    pub(crate) fn fenced(&self) -> Option<String> {
        self.lease.as_ref()?.why_fenced()
    }

    pub(crate) fn set_error(&self, message: String) {
        *self
            .counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(message);
    }

    pub(crate) fn clear_error(&self) {
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
