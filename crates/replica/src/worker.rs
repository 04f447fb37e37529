//! The `Worker`: one database's replication state between steps, with the
//! steps that connect, open the local state, capture and stop.
//!
//! It runs on the replicator pool's threads, one step at a time
//! (`replication` decides which step is due, `pool` which thread runs
//! it). A panic in any step becomes an error and the replication goes on.
//! It never runs on the JS thread; the sync round itself (upload) and the
//! compaction/snapshot schedule live in their own files.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use offloop_engine::explain_os_error;
use offloop_ltx::Txid;

use crate::backlog::Backlog;
use crate::error::Error;
use crate::renewer::Renewer;
use crate::rest::close_last;
use crate::shared::{Answer, Connect, Handover, Local, Shared};
use crate::stager::Stager;
use crate::store::{LtxFile, Store, Timestamps};

/// First retry after a failed upload; doubles up to `MAX_BACKOFF`.
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// How long `stop` keeps trying to upload what waits before it gives up
/// and leaves it in the outbox for the next open.
pub(crate) const STOP_UPLOAD_DEADLINE: Duration = Duration::from_secs(10);

pub use crate::stager::state_dir;

/// A database's replication state between steps.
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
    /// The replica, once connected. Held by the worker alone, so that it
    /// goes (and with the process's last store, the store's threads) when
    /// the replication ends, not when the last handle to the replicator
    /// does.
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

impl Worker {
    /// The state before the first step: nothing connected yet.
    pub(crate) fn new(shared: Arc<Shared>, handover: Option<Handover>) -> Self {
        Worker {
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
        }
    }

    /// The first step: connects to the replica and, for a database
    /// restored at open, takes its lease.
    pub(crate) fn begin(&mut self, connect: Connect) {
        let connected = catch_unwind(AssertUnwindSafe(connect)).unwrap_or_else(|_| {
            Err(Error::State(
                "offloop internal error: connecting to the replica panicked".into(),
            ))
        });
        match connected {
            Ok(store) => {
                self.store = Some(store);
            }
            Err(e) => {
                let why = format!("replica {}: {e}", self.shared.settings.url);
                self.shared.set_error(why.clone());
                self.permanent_error = Some(why);
            }
        }
        // A database restored at open: its lease is taken now, beside the
        // restore's reads, which write nothing before it is held, and the
        // replica listed under it.
        let first = (
            self.shared.settings.restore_at.clone(),
            self.shared.lease.clone(),
        );
        if let (Some(db), Some(lease)) = first {
            let outcome = match &self.permanent_error {
                Some(why) => Err(why.clone()),
                None => guarded(|| {
                    self.take_lease_first(lease, &db)?;
                    self.list_under_lease()
                }),
            };
            if let Err(why) = &outcome {
                self.shared.set_error(why.clone());
                self.permanent_error = Some(why.clone());
            }
            self.shared.set_leased(outcome);
        }
    }
}

/// However the replication ends, permits asked for afterwards find no
/// stager and pass at once instead of waiting for one, and the pin closes.
pub(crate) struct Ended(pub(crate) Arc<Shared>);

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

/// Runs one piece of a step under `catch_unwind`: a panic becomes an
/// error and the database's replication goes on.
pub(crate) fn guarded(f: impl FnOnce() -> Answer) -> Answer {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("offloop internal error: the replicator panicked".into()))
}

impl Worker {
    /// The database opened: local state first (so permits can be granted),
    /// then the replica's position.
    pub(crate) fn open(&mut self, db: &Path) -> Answer {
        self.db = Some(db.to_path_buf());
        self.open_local(db, false);
        let failed = match &*self.shared.local.lock().unwrap_or_else(|e| e.into_inner()) {
            Local::Failed(why) => Some(why.clone()),
            _ => None,
        };
        if let Some(why) = failed {
            self.shared.set_error(why.clone());
            self.permanent_error = Some(why.clone());
            return Err(why);
        }
        self.shared.rest.set_path(db);
        self.shared.open_read_connections(db);
        self.contact(db)
    }

    /// The writer opened again after the database rested (`rest.rs`), or
    /// the database closes at rest: the local state and the read
    /// connections come back, the chain carrying on from the clean-close
    /// record. Nothing to do when it was not at rest.
    pub(crate) fn wake_from_rest(&mut self) {
        if !self.shared.rest.end() {
            return;
        }
        if let Some(db) = self.db.clone() {
            self.open_local(&db, true);
            if let Local::Failed(why) =
                &*self.shared.local.lock().unwrap_or_else(|e| e.into_inner())
            {
                self.shared.set_error(why.clone());
            }
            self.shared.open_read_connections(&db);
        }
    }

    /// Opens the stager for the database at `db` (woken from rest, or not)
    /// and publishes it (or why it could not open) as the local state,
    /// which lets checkpoint permits through.
    fn open_local(&self, db: &Path, after_rest: bool) {
        let opened = if after_rest {
            Stager::open_after_rest(db, &state_dir(db))
        } else {
            Stager::open(db, &state_dir(db))
        };
        let local = match opened {
            Ok(stager) => Local::Ready(Box::new(stager)),
            Err(e) => Local::Failed(format!(
                "cannot keep replication state next to the database: {}",
                explain_os_error(&e)
            )),
        };
        *self.shared.local.lock().unwrap_or_else(|e| e.into_inner()) = local;
        self.shared.local_changed.notify_all();
    }

    /// The first contact with the replica once the database opened.
    fn contact(&mut self, db: &Path) -> Answer {
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

    /// A round of the stop: capture, stage and upload. `None`: it failed
    /// before `deadline`, and is worth another round; else the answer, and
    /// whatever is left stays in the outbox for the next open.
    pub(crate) fn stop_round(&mut self, closed: bool, deadline: Instant) -> Option<Answer> {
        self.wake_from_rest();
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
                        close_last(&self.shared.settings, db);
                        let dir = state_dir(db);
                        self.shared.with_stager(|f| f.mark_clean(&dir));
                    }
                }
                self.shared.with_stager(|f| f.make_durable());
                self.release_lease();
                Some(Ok(txid))
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
                Some(Err(e))
            }
            Err(_) => None,
        }
    }
}
