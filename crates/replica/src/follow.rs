//! The follower: a database that follows a replica another process
//! writes. [`Follower::setup`] makes the engine's writer read-only to the
//! application and puts the file in place before the first connection
//! opens (`follow_open`: restored whole or paged when missing; refused
//! when it is not this replica's follower). [`Follower::start`] then runs
//! an `offloop-follower` thread that polls the replica and applies each
//! file it finds on the writer's connection, in one transaction per file
//! (see `follow_apply`).
//!
//! Polling costs one request per interval in steady state: a GET of the
//! next TXID's L0 file by name. It lists the replica only when it must:
//! at start (unless the open has just restored the file at the newest TXID
//! a listing found), after a failure, when asked to (`catch_up` with no TXID),
//! when the next L0 file is missing while the one after it is there (a
//! full image, a compaction, a gap), or while a caller waits for a TXID
//! that the next L0 file does not bring. A promotion that holds the lease
//! asks for a check by name instead (`catch_up_named`): the next TXID's
//! L0 file and a full image at that TXID, both at once.
//!
//! It owns its thread, the record beside the database (`follow_record`)
//! and its counters. It never runs on the JS thread, never touches a
//! database page itself (the writer does), and knows nothing of Node.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use offloop_engine::{self as engine, WriterHandle};
use offloop_ltx::Txid;

use crate::error::{Error, Result};
use crate::follow_open::{put_in_place, PagedOpen};
use crate::follow_record::Position;
use crate::shared::Reply;
use crate::stager::now_ms;
use crate::store::{ReplicaStore, S3Options};

// The checks and the apply live in a file of their own; as a child of
// this module they reach its private state.
#[path = "follow_check.rs"]
mod check;
use check::Check;

/// Every this many polls that find no next file, the poll asks for the
/// file after it instead: if that one is there, the next one never will
/// be (a full image or a compaction took its place) and a listing finds
/// what to apply. Still one request per poll, and no listing while idle.
const PROBE_EVERY: u64 = 8;

/// What a follower follows and how often it looks.
#[derive(Clone, Debug)]
pub struct FollowSettings {
    pub url: String,
    pub s3: S3Options,
    pub poll_interval: Duration,
    /// A missing file is restored page by page (`restore: 'paged'`): the
    /// engine's `before_open` is then that restore's, and runs first.
    pub paged: bool,
}

/// `stats().follow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowStats {
    pub url: String,
    /// The TXID the database is at (`None` before the first is known).
    pub txid: Option<Txid>,
    /// Since the follower last knew it held the replica's newest TXID.
    pub staleness: Duration,
    /// Ms since the epoch.
    pub last_check_at_ms: Option<i64>,
    pub applied_at_ms: Option<i64>,
    pub list_requests: u64,
    pub get_requests: u64,
    pub bytes_fetched: u64,
    pub last_error: Option<String>,
}

/// Hears each applied file: the TXID the database is at now and the pages
/// the file wrote. Called on the follower's thread.
pub type OnApplied = Box<dyn Fn(Txid, u64) + Send + Sync>;

/// A `catch_up` waiting: `id` (to cancel it), the TXID it waits for
/// (`None`: the end of the next check of `kind`), its answer.
struct Waiter {
    id: u64,
    txid: Option<Txid>,
    kind: Wait,
    /// The checks of its kind begun before it came (`State::listings`,
    /// `State::head_listings`, `State::thorough`).
    begun: u64,
    reply: Reply,
}

/// Which check answers a `catch_up` that waits for no TXID.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// A listing of every level.
    Listed,
    /// A listing with L0 from the follower's next TXID (or a whole one).
    Head,
    /// A check by name (or any listing).
    Named,
}

#[derive(Default)]
struct State {
    /// Where the database stands in the replica.
    position: Position,
    fresh_at: Option<Instant>,
    last_check_at_ms: Option<i64>,
    applied_at_ms: Option<i64>,
    last_error: Option<String>,
    waiters: Vec<Waiter>,
    /// A caller asked for a check with a listing, or one from the head.
    list_now: bool,
    list_head_now: bool,
    /// Listings begun so far: a `catch_up` without a TXID is answered at
    /// the end of a check that listed after it came.
    listings: u64,
    /// The file was just restored at the newest TXID a listing found: the
    /// first check reads the next TXID's name instead of listing again.
    restored: bool,
    /// Listings begun so far, whole or from the head.
    head_listings: u64,
    /// Checks begun so far that see any file continuing the database
    /// (listings, and checks by name for a `catch_up_named`).
    thorough: u64,
    /// The newest L9 snapshot's timestamp in the last listing (`None`:
    /// none there, or no listing yet).
    snapshot_ms: Option<i64>,
    stopped: bool,
}

struct Shared {
    settings: FollowSettings,
    db: PathBuf,
    started: Instant,
    state: Mutex<State>,
    lists: AtomicU64,
    gets: AtomicU64,
    bytes: AtomicU64,
    /// Taken at stop: the writer's queue must not outlive the close.
    writer: Mutex<Option<WriterHandle>>,
    wake: Sender<()>,
}

/// One database's follower.
pub struct Follower {
    shared: Arc<Shared>,
    wakes: Mutex<Option<Receiver<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Follower {
    /// Sets up `engine` (the settings of the database at `path`) to follow
    /// `settings.url`: the writer is read-only to the application and
    /// syncs every commit, and before the first connection opens the file
    /// is restored when missing (whole, or paged with `settings.paged`:
    /// `engine` then holds the paged restore's `before_open`), or checked
    /// to be this replica's follower when present. The open fails with
    /// `fail(why)` otherwise.
    pub fn setup(
        path: &str,
        settings: FollowSettings,
        fail: fn(String) -> engine::Error,
        engine: &mut engine::Settings,
    ) -> Result<Follower> {
        if path.is_empty() || path == ":memory:" || path.starts_with("file:") {
            return Err(Error::Config(format!(
                "`follow` needs a database file's path, not '{path}'"
            )));
        }
        engine.follower = true;
        // The record says where the file is only if the commit it brackets
        // is durable when the next record is written.
        engine.synchronous = Some(engine::Synchronous::Full);
        let paged: Option<PagedOpen> = match engine.before_open.take() {
            Some(engine::BeforeOpen(open)) if settings.paged => {
                Some(Box::new(move || open().map_err(|e| e.to_string())))
            }
            _ => None,
        };
        let (wake, wakes) = bounded(1);
        let shared = Arc::new(Shared {
            db: PathBuf::from(path),
            settings,
            started: Instant::now(),
            state: Mutex::new(State::default()),
            lists: AtomicU64::new(0),
            gets: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            writer: Mutex::new(None),
            wake,
        });
        let prepare = shared.clone();
        engine.before_open = Some(engine::BeforeOpen(Arc::new(move || {
            let put = || prepare.put_in_place(paged.as_ref());
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(put))
                .unwrap_or_else(|_| Err("offloop internal error: the restore panicked".into()))
                .map_err(fail)
        })));
        Ok(Follower {
            shared,
            wakes: Mutex::new(Some(wakes)),
            thread: Mutex::new(None),
        })
    }

    /// Starts following, once the database is open: applies go to
    /// `writer`, and `on_applied` hears each one.
    pub fn start(&self, writer: WriterHandle, on_applied: OnApplied) -> Result<()> {
        let Some(wakes) = lock(&self.wakes).take() else {
            return Ok(());
        };
        *lock(&self.shared.writer) = Some(writer);
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("offloop-follower".into())
            .spawn(move || {
                let run = || shared.run(&wakes, &on_applied);
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
                    shared.end("offloop internal error: the follower panicked");
                }
            })
            .map(|thread| *lock(&self.thread) = Some(thread))
            .map_err(|e| Error::io("start the follower thread", e))
    }

    /// Answers `reply` with the TXID the database is at once it is at
    /// `txid` or later, or (`None`) once a check of the replica, with a
    /// listing, found nothing more to apply.
    pub fn catch_up(&self, id: u64, txid: Option<Txid>, reply: Reply) {
        let mut state = lock(&self.shared.state);
        if state.stopped {
            drop(state);
            reply(Err("the database is closed".into()));
            return;
        }
        if let Some(t) = txid {
            if state.position.reached(t) {
                let at = state.position.at;
                drop(state);
                reply(Ok(at));
                return;
            }
        }
        state.list_now |= txid.is_none();
        let begun = state.listings;
        state.waiters.push(Waiter {
            id,
            txid,
            kind: Wait::Listed,
            begun,
            reply,
        });
        drop(state);
        let _ = self.shared.wake.try_send(());
    }

    /// As `catch_up` with no TXID, but the listing lists L0 only from the
    /// next TXID on (the other levels whole), so it costs the same however
    /// many L0 files the replica keeps. It does not see a full image in
    /// L0 (whose name sorts first): one that continues the database is
    /// at the next TXID, which `catch_up_named` then asks for by name.
    /// When the L0 files it lists do not continue the database, it lists
    /// again whole. For a promotion, before `catch_up_named`.
    pub fn catch_up_from_head(&self, id: u64, reply: Reply) {
        self.wait(id, Wait::Head, reply);
    }

    /// Answers `reply` with the TXID the database is at once a check by
    /// name found neither the next TXID's L0 file nor a full image at that
    /// TXID, having applied those it found: with no listing, one round
    /// trip when nothing is new. For a promotion that holds the lease,
    /// after a listing established that nothing else is newer: a writer
    /// that wrote its last TXIDs before its lease ran out wrote them as L0
    /// files, which no compaction deletes within `l0_retention`.
    pub fn catch_up_named(&self, id: u64, reply: Reply) {
        self.wait(id, Wait::Named, reply);
    }

    fn wait(&self, id: u64, kind: Wait, reply: Reply) {
        let mut state = lock(&self.shared.state);
        if state.stopped {
            drop(state);
            reply(Err("the database is closed".into()));
            return;
        }
        state.list_head_now |= kind == Wait::Head;
        let begun = match kind {
            Wait::Listed => state.listings,
            Wait::Head => state.head_listings,
            Wait::Named => state.thorough,
        };
        state.waiters.push(Waiter {
            id,
            txid: None,
            kind,
            begun,
            reply,
        });
        drop(state);
        let _ = self.shared.wake.try_send(());
    }

    /// The newest L9 snapshot's timestamp (ms since the epoch, as listed)
    /// in the follower's last listing; `None` when it held none.
    pub fn listed_snapshot_ms(&self) -> Option<i64> {
        lock(&self.shared.state).snapshot_ms
    }

    /// Drops the `catch_up` made as `id` (its caller gave up on it).
    pub fn cancel(&self, id: u64) {
        let mut state = lock(&self.shared.state);
        let dropped: Vec<Waiter> = {
            let (gone, kept) = std::mem::take(&mut state.waiters)
                .into_iter()
                .partition(|w| w.id == id);
            state.waiters = kept;
            gone
        };
        drop(state);
        for w in dropped {
            (w.reply)(Err("cancelled".into()));
        }
    }

    /// How long since the follower last knew it held the newest TXID.
    pub fn staleness(&self) -> Duration {
        self.shared.staleness(&lock(&self.shared.state))
    }

    pub fn stats(&self) -> FollowStats {
        let s = &self.shared;
        let state = lock(&s.state);
        FollowStats {
            url: s.settings.url.clone(),
            txid: state.position.at,
            staleness: s.staleness(&state),
            last_check_at_ms: state.last_check_at_ms,
            applied_at_ms: state.applied_at_ms,
            list_requests: s.lists.load(Ordering::Relaxed),
            get_requests: s.gets.load(Ordering::Relaxed),
            bytes_fetched: s.bytes.load(Ordering::Relaxed),
            last_error: state.last_error.clone(),
        }
    }

    /// Stops following (the database closes): the thread ends after what
    /// it is doing, and the writer's queue is let go at once.
    pub fn stop(&self) {
        lock(&self.shared.writer).take();
        self.shared.end("the database closed");
        let _ = self.shared.wake.try_send(());
    }

    /// Stops for good (a promotion), then the TXID it is at; `None`: not
    /// known (an apply was cut short, or a restore into the file was).
    pub fn halt(&self) -> Option<Txid> {
        self.stop();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
        lock(&self.shared.state).position.known()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    fn staleness(&self, state: &State) -> Duration {
        state.fresh_at.unwrap_or(self.started).elapsed()
    }

    fn store(&self) -> std::result::Result<ReplicaStore, String> {
        ReplicaStore::open(&self.settings.url, &self.settings.s3).map_err(|e| e.to_string())
    }

    /// Before the first connection opens (the writer's thread): the file
    /// is put in place (`follow_open`) and the follower learns where it
    /// stands.
    fn put_in_place(&self, paged: Option<&PagedOpen>) -> std::result::Result<(), String> {
        let placed = put_in_place(&self.db, &self.settings.url, &|| self.store(), paged)?;
        let mut state = lock(&self.state);
        state.position = placed.position;
        if placed.restored {
            state.fresh_at = Some(Instant::now());
            state.restored = true;
        }
        Ok(())
    }

    /// Ends following: those waiting hear `why`.
    fn end(&self, why: &str) {
        let waiters = {
            let mut state = lock(&self.state);
            state.stopped = true;
            std::mem::take(&mut state.waiters)
        };
        for w in waiters {
            (w.reply)(Err(why.to_string()));
        }
    }

    fn run(&self, wakes: &Receiver<()>, on_applied: &OnApplied) {
        let store = match self.store() {
            Ok(store) => store,
            Err(e) => {
                lock(&self.state).last_error = Some(e.clone());
                self.end(&e);
                return;
            }
        };
        let mut must_list = !lock(&self.state).restored;
        let mut misses = 0u64;
        loop {
            let (stopped, listing, head, named) = {
                let mut state = lock(&self.state);
                // A listing asked for now is this one, whatever else
                // made it due: taken in any case, or it would list again.
                let head = std::mem::take(&mut state.list_head_now);
                let listing = std::mem::take(&mut state.list_now) | must_list;
                let head = head && !listing;
                let named =
                    !listing && !head && state.waiters.iter().any(|w| w.kind == Wait::Named);
                state.listings += u64::from(listing);
                state.head_listings += u64::from(listing || head);
                state.thorough += u64::from(listing || head || named);
                (state.stopped, listing, head, named)
            };
            if stopped {
                return;
            }
            let checked = if listing || head {
                self.listed_check(&store, head, on_applied)
            } else if named {
                self.named_check(&store, on_applied)
            } else {
                self.quick_check(&store, &mut misses, on_applied)
            };
            let again = {
                let mut state = lock(&self.state);
                state.last_check_at_ms = Some(now_ms());
                let again = match &checked {
                    Ok(Check::Fresh) => {
                        state.fresh_at = Some(Instant::now());
                        state.last_error = None;
                        // Waiting for a TXID the next L0 file did not bring:
                        // the next check lists.
                        must_list = state
                            .waiters
                            .iter()
                            .any(|w| w.txid.is_some_and(|t| !state.position.reached(t)));
                        false
                    }
                    Ok(Check::Applied) => {
                        must_list = false;
                        true
                    }
                    Ok(Check::Suspect) => {
                        must_list = true;
                        true
                    }
                    Err(e) => {
                        state.last_error = Some(e.clone());
                        must_list = true;
                        false
                    }
                };
                // A check with a listing answers those who asked for one;
                // a TXID reached answers those who wait for it.
                let position = state.position;
                let counts = (state.listings, state.head_listings, state.thorough);
                let done = |kind| match kind {
                    Wait::Listed => counts.0,
                    Wait::Head => counts.1,
                    Wait::Named => counts.2,
                };
                let (ready, waiting): (Vec<Waiter>, Vec<Waiter>) =
                    std::mem::take(&mut state.waiters)
                        .into_iter()
                        .partition(|w| match w.txid {
                            Some(t) => position.reached(t),
                            None => !again && done(w.kind) > w.begun,
                        });
                state.waiters = waiting;
                drop(state);
                for w in ready {
                    let answer = match (&checked, w.txid) {
                        (Err(e), None) => Err(e.clone()),
                        _ => Ok(position.at),
                    };
                    (w.reply)(answer);
                }
                again
            };
            if again {
                continue;
            }
            match wakes.recv_timeout(self.settings.poll_interval) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}
