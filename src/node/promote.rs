//! Promotion across the boundary (its addon functions are in
//! `following.rs`): `db.promote()` runs the steps of
//! `offloop_replica::promotion` on an `offloop-promote` thread (catch up
//! with a listing, take the lease, catch up again by name, stop following,
//! leave the writer's state, start replicating with the lease and the
//! position handed over, lift the follower's guard), and
//! `follow: { promote: 'auto' }` runs an `offloop-lease-watch` thread that
//! reads the replica's lease every poll (and again the moment the last
//! `expires_at` it read passes) and tells lib/promote.js when it may be
//! taken, which then promotes the same way.
//!
//! Nothing here runs on the JS thread but the calls' set-up; nothing here
//! reads or writes a database page (the follower applies, the writer
//! lifts its guard, the replicator captures).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use napi::{Error, Result, Status};
use offloop_engine::{Job, ObserverSlot, Request, WriterHandle};
use offloop_replica::promotion::{self, LeaseState};
use offloop_replica::stager::now_ms;
use offloop_replica::{
    Follower, Handover, PagedGate, ReplicaStore, Replicator, Reply, S3Options, Store, Txid,
    Versioned,
};

use super::follow::Kept;
use super::replica::{self, ReplicaOptions};

/// The replicator slot a database and its promotion share: the promotion
/// fills it, the database's calls read it, the close empties it.
pub type ReplicatorSlot = Arc<Mutex<Option<Arc<Replicator>>>>;

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a follower's promotion needs of its database, shared with the
/// threads that promote it.
pub struct Promotion {
    path: PathBuf,
    follower: Arc<Follower>,
    observer: Arc<ObserverSlot>,
    gate: PagedGate,
    replicator: ReplicatorSlot,
    /// The database writes to its replica now: it no longer follows.
    promoted: AtomicBool,
    /// The database closed: a promotion under way installs nothing.
    closed: AtomicBool,
    /// One promotion at a time.
    running: Mutex<()>,
    /// The lease watch's GETs of `lock.json` and the process lease it
    /// names, counted with the follower's.
    lease_gets: AtomicU64,
    /// The lease object as the watch last read it free: the promotion it
    /// starts writes over it without reading it again.
    seen_free: Mutex<Option<Versioned>>,
    /// Why the last automatic promotion failed, if it did.
    last_error: Mutex<Option<String>>,
    /// Stops the lease watch.
    stop_watch: Mutex<Option<Sender<()>>>,
    /// Where the open set aside the old primary's file (its rejoin).
    kept: Kept,
    /// The holder's id, made once: the lease watch and a promotion both
    /// need it, and two threads making it at once would disagree.
    owner: Mutex<Option<String>>,
}

impl Promotion {
    pub fn new(
        path: &str,
        follower: Arc<Follower>,
        observer: Arc<ObserverSlot>,
        gate: PagedGate,
        replicator: ReplicatorSlot,
        kept: Kept,
    ) -> Arc<Promotion> {
        Arc::new(Promotion {
            path: PathBuf::from(path),
            follower,
            observer,
            gate,
            replicator,
            promoted: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            running: Mutex::new(()),
            lease_gets: AtomicU64::new(0),
            seen_free: Mutex::new(None),
            last_error: Mutex::new(None),
            stop_watch: Mutex::new(None),
            kept,
            owner: Mutex::new(None),
        })
    }

    pub fn is_promoted(&self) -> bool {
        self.promoted.load(Ordering::Acquire)
    }

    pub fn lease_gets(&self) -> u64 {
        self.lease_gets.load(Ordering::Relaxed)
    }

    pub fn last_error(&self) -> Option<String> {
        lock(&self.last_error).clone()
    }

    pub fn kept_file(&self) -> Option<String> {
        lock(&self.kept).clone()
    }

    /// This database's name as a lease holder (see `promotion::holder`).
    fn owner(&self, url: &str) -> std::result::Result<String, String> {
        let mut owner = lock(&self.owner);
        if let Some(id) = owner.as_ref() {
            return Ok(id.clone());
        }
        let id = promotion::holder(&self.path, url).map_err(|e| promotion::holder_unkept(&e))?;
        *owner = Some(id.clone());
        Ok(id)
    }

    /// The database closes: no promotion may install a replicator after
    /// this, and the lease watch ends.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.stop_watch).take();
    }

    /// The steps, in order; the head TXID it promoted at, or why not. A
    /// failure before the follower stopped leaves it following (the lease
    /// given back if it was taken); one after leaves a database that
    /// neither follows nor writes, and says so.
    fn run(
        &self,
        writer: WriterHandle,
        options: ReplicaOptions,
    ) -> std::result::Result<Txid, String> {
        let mut held = false;
        let result = self.steps(writer, options, &mut held);
        // Another writer's live lease is the normal answer to a follower
        // that may promote itself: not a failure to show.
        if let (Err(why), false) = (&result, held) {
            *lock(&self.last_error) = Some(why.clone());
        }
        result
    }

    fn steps(
        &self,
        writer: WriterHandle,
        options: ReplicaOptions,
        held: &mut bool,
    ) -> std::result::Result<Txid, String> {
        let _one = lock(&self.running);
        if self.is_promoted() {
            return Err("the database was promoted already".into());
        }
        let url = options.url.clone();
        let ttl = Duration::from_millis(options.lease_ttl_ms.unwrap_or(0.0).max(0.0) as u64);
        let s3 = S3Options::from(options.s3.clone());
        let store = ReplicaStore::open(&url, &s3).map_err(|e| format!("replica {url}: {e}"))?;
        let owner = self.owner(&url)?;
        // The bulk of the catching up happens before the lease is taken,
        // so the lease is held unrenewed for as short a time as can be.
        // Its listing also rules out anything newer in a level above L0.
        self.catch_up(false)?;
        let seen = lock(&self.seen_free).take();
        let lease =
            promotion::take_lease(&store, ttl, owner, seen.as_ref()).map_err(|refusal| {
                match refusal {
                    offloop_replica::lease::Refusal::Held(why) => {
                        *held = true;
                        format!("replica {url}: {why}")
                    }
                    offloop_replica::lease::Refusal::Store(e) => {
                        format!("replica {url}: cannot take its lease: {e}")
                    }
                }
            })?;
        // What the old writer uploaded between that listing and its lease
        // running out is L0 files: found by name, with no listing.
        if let Err(why) = self.catch_up(true) {
            let _ = lease.release(&store);
            return Err(why);
        }
        let unknown = || {
            "the follower stopped in the middle of an apply: the database neither follows nor \
             writes; close it and open it again"
                .to_string()
        };
        let head = self.follower.halt().ok_or_else(unknown)?;
        let broken = |what: String| {
            format!("{what}: the database no longer follows and does not write; close it and open it again")
        };
        promotion::continue_as_writer(&self.path, head)
            .map_err(|e| broken(format!("cannot write the replicator's state: {e}")))?;
        let handover = Handover {
            lease,
            head,
            snapshot_ms: self.follower.listed_snapshot_ms(),
        };
        let replicator = replica::take_over(options, self.gate.clone(), handover)
            .map_err(|e| broken(e.reason))?;
        {
            let mut slot = lock(&self.replicator);
            if self.closed.load(Ordering::Acquire) {
                drop(slot);
                replicator.close(Box::new(|_| {}));
                return Err("the database closed".into());
            }
            *slot = Some(replicator.clone());
        }
        self.observer.set(Some(replicator.clone()));
        let (tx, rx) = bounded(1);
        replicator.ready(Box::new(move |answer| {
            let _ = tx.send(answer);
        }));
        match rx.recv() {
            Ok(Ok(_)) => {}
            Ok(Err(why)) => return Err(broken(why)),
            Err(_) => return Err(broken("replication stopped".into())),
        }
        let (tx, rx) = bounded(1);
        writer.submit(Job::new(
            Request::Promote,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        ));
        drop(writer);
        match rx.recv() {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(broken(format!("the writer could not lift its guard: {e}"))),
            Err(_) => return Err("the database closed".into()),
        }
        self.promoted.store(true, Ordering::Release);
        lock(&self.stop_watch).take();
        Ok(head)
    }

    /// Waits until a check of the replica with a listing from the head
    /// (`named`: by name; see `Follower::catch_up_from_head` and
    /// `catch_up_named`) found nothing more to apply.
    fn catch_up(&self, named: bool) -> std::result::Result<Option<Txid>, String> {
        let (tx, rx) = bounded(1);
        let reply: Reply = Box::new(move |answer| {
            let _ = tx.send(answer);
        });
        // An id no call of lib/ takes (theirs are small integers).
        if named {
            self.follower.catch_up_named(u64::MAX, reply);
        } else {
            self.follower.catch_up_from_head(u64::MAX, reply);
        }
        match rx.recv() {
            Ok(Ok(txid)) => Ok(txid),
            Ok(Err(why)) => Err(why),
            Err(_) => Err("the database closed".into()),
        }
    }

    /// The lease watch's loop: every `every`, one GET of the lease, or
    /// sooner when the lease it read runs out sooner (a holder that stopped
    /// renewing is seen the moment its lease expires, not up to `every`
    /// later); when it may be taken, `report()` (lib/promote.js promotes).
    /// Ends once the database is promoted or closes.
    fn watch(
        &self,
        store: &dyn Store,
        owner: &str,
        every: Duration,
        stop: &Receiver<()>,
        report: &dyn Fn(),
    ) {
        let mut wait = every;
        loop {
            match stop.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            if self.is_promoted() {
                return;
            }
            wait = every;
            match promotion::lease_state_counted(store, owner, &self.lease_gets) {
                Ok(LeaseState::Free(object)) => {
                    *lock(&self.seen_free) = Some(object);
                    report();
                }
                Ok(state) => wait = promotion::watch_wait(&state, every, now_ms()),
                Err(_) => {}
            }
        }
    }
}

/// Promotes the follower on an `offloop-promote` thread; `reply` hears
/// the TXID it promoted at.
pub fn promote(
    promotion: Arc<Promotion>,
    writer: WriterHandle,
    options: ReplicaOptions,
    reply: Reply,
) -> Result<()> {
    std::thread::Builder::new()
        .name("offloop-promote".into())
        .spawn(move || {
            let run = || promotion.run(writer, options);
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                .unwrap_or_else(|_| Err("offloop internal error: the promotion panicked".into()));
            reply(answer.map(Some));
        })
        .map(|_| ())
        .map_err(thread_error)
}

/// Watches the replica's lease at `url` every `every` on an
/// `offloop-lease-watch` thread; `report()` each time it may be taken.
pub fn watch_lease(
    promotion: Arc<Promotion>,
    url: String,
    s3: S3Options,
    every: Duration,
    report: Box<dyn Fn() + Send>,
) -> Result<()> {
    let (stop, stopped) = bounded::<()>(1);
    *lock(&promotion.stop_watch) = Some(stop);
    std::thread::Builder::new()
        .name("offloop-lease-watch".into())
        .spawn(move || {
            let watch = || {
                let store = match ReplicaStore::open(&url, &s3) {
                    Ok(store) => store,
                    Err(e) => {
                        *lock(&promotion.last_error) = Some(format!("replica {url}: {e}"));
                        return;
                    }
                };
                let owner = match promotion.owner(&url) {
                    Ok(owner) => owner,
                    Err(why) => {
                        *lock(&promotion.last_error) = Some(why);
                        return;
                    }
                };
                promotion.watch(&store, &owner, every, &stopped, &*report);
            };
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(watch));
        })
        .map(|_| ())
        .map_err(thread_error)
}

fn thread_error(e: std::io::Error) -> Error {
    Error::new(
        Status::GenericFailure,
        format!("could not start a thread: {e}"),
    )
}
