//! Connections closed when idle and reopened on demand. Each lane that
//! holds a connection has a `Doze`: when the lane goes idle it notes the
//! time and arms one timer at `idle + idle_close()`; when the timer (or the
//! cap below) notifies it and it is still idle, and its connection holds
//! nothing the user could miss, the lane closes the connection. The next
//! job opens a fresh one, with the database's settings, functions and
//! changes applied again (the same path a first open takes).
//!
//! The cap: the process keeps at most `connection_limit()` connections
//! open (by default what the file descriptor limit allows, see
//! `default_connections`). A lane that needs one at the cap asks the lanes
//! idle longest to close theirs (`relieve`, oldest first) and waits for a
//! close (`admit`). What must stay open stays: when nothing idle can
//! close, the cap is exceeded, never enforced by closing a connection
//! under its user.
//!
//! This file decides nothing about what a connection holds; each lane asks
//! its own (`writer.rs`, `reader.rs`, `checkpointer.rs`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::pool::WeakLane;
use crate::timers::{notify_at, trim_soon};

/// How soon a connection asked to close for the cap, that could not yet
/// (its replica still shipping), looks again.
const EVICTED_LOOK_MS: u64 = 250;

/// How long a connection stays open with nothing to do, by default.
pub const DEFAULT_IDLE_CLOSE: Duration = Duration::from_secs(30);

/// Descriptors kept for everything else the process opens (its own
/// files, sockets, the replicas' files).
const RESERVED_FDS: u64 = 64;

/// Descriptors budgeted per connection: its database file, its WAL, the
/// shared-memory index (one per file, counted for each connection here),
/// and one more of slack, since connections asked to close when the cap
/// is passed close a moment later, while new ones open.
const FDS_PER_CONNECTION: u64 = 4;

struct Global {
    /// Milliseconds; 0: the default.
    idle_close_ms: AtomicU64,
    /// 0: the default.
    connections: AtomicUsize,
    /// SQLite connections open now.
    open_count: AtomicUsize,
    /// Connections closed since the start: a waiting lane that sees it
    /// move since its last look waits on (see `Doze::looks_without_close`).
    closes: AtomicU64,
    /// Every lane with a connection open (from `opened` to `closed`): no
    /// more entries than connections.
    open: Mutex<Vec<(WeakLane, Arc<Doze>)>>,
    /// Lanes waiting for a connection (see `admit`), first come first
    /// notified as connections close.
    waiting: Mutex<VecDeque<WeakLane>>,
}

fn global() -> &'static Global {
    static GLOBAL: OnceLock<Global> = OnceLock::new();
    GLOBAL.get_or_init(|| Global {
        idle_close_ms: AtomicU64::new(0),
        connections: AtomicUsize::new(0),
        open_count: AtomicUsize::new(0),
        closes: AtomicU64::new(0),
        open: Mutex::new(Vec::new()),
        waiting: Mutex::new(VecDeque::new()),
    })
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// How long an idle connection stays open.
pub fn idle_close() -> Duration {
    match global().idle_close_ms.load(Ordering::Relaxed) {
        0 => DEFAULT_IDLE_CLOSE,
        ms => Duration::from_millis(ms),
    }
}

/// The default cap on open connections: what the soft limit on file
/// descriptors leaves after `RESERVED_FDS`, at `FDS_PER_CONNECTION` each;
/// at least 16.
pub fn default_connections() -> usize {
    let fds = open_files_limit().unwrap_or(1024);
    let spare = fds.saturating_sub(RESERVED_FDS) / FDS_PER_CONNECTION;
    usize::try_from(spare).unwrap_or(usize::MAX).max(16)
}

#[cfg(unix)]
fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the call to fill.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (got == 0).then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
fn open_files_limit() -> Option<u64> {
    // Windows has no such limit on handles that matters here (the C
    // runtime's 8,192 does not apply: SQLite uses Win32 handles).
    Some(8192 * FDS_PER_CONNECTION)
}

/// The cap on open connections in force.
pub fn connection_limit() -> usize {
    match global().connections.load(Ordering::Relaxed) {
        0 => default_connections(),
        n => n,
    }
}

/// Sets how long an idle connection stays open (`None`: the default).
pub fn configure_idle_close(idle_close: Option<Duration>) {
    let ms = idle_close.map_or(0, |d| {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
    });
    global().idle_close_ms.store(ms, Ordering::Relaxed);
}

/// Sets the cap on open connections (`None`: the default).
pub fn configure_connections(connections: Option<usize>) {
    global()
        .connections
        .store(connections.unwrap_or(0), Ordering::Relaxed);
}

/// One lane's idle bookkeeping.
#[derive(Default)]
pub struct Doze {
    /// When the lane last went idle (ms since `epoch`).
    idle_since: AtomicU64,
    /// When its timer fires (0: none armed).
    armed: AtomicU64,
    /// Asked to close now (the cap is exceeded).
    evict: AtomicBool,
    /// The lane's connection is open.
    open: AtomicBool,
    /// It kept its connection the last time it was asked (it holds
    /// state): not asked again until it works and goes idle again.
    holding: AtomicBool,
    /// Times in a row the lane was told to wait for a connection, with no
    /// connection closing in between.
    waits: AtomicU32,
    /// Times in a row its open ran out of file descriptors and it waited
    /// for connections to close (see `make_room`), with none closing in
    /// between.
    short: AtomicU32,
    /// The process's count of closes (`Global::closes`) at the lane's last
    /// look while waiting.
    closes_seen: AtomicU64,
    /// It ran a job (or opened) since it last went idle.
    worked: AtomicBool,
    /// Closing it costs more than a close: a replicating writer's waits
    /// for its replica and then lets its replicator rest. The cap asks
    /// the others first.
    costly: AtomicBool,
    /// Asked to close, it asked its replica to ship now (`hurried`): once,
    /// until it closes or is told to keep its connection.
    hurried: AtomicBool,
}

impl Doze {
    /// The lane opened its connection: it counts among those the cap may
    /// ask to close (and, past the cap, the ones idle longest are asked
    /// now). The open counts as work: the timer is armed at the next idle.
    pub fn opened(self: &Arc<Self>, lane: &WeakLane) {
        self.short.store(0, Ordering::Release);
        self.idle_since.store(now_ms(), Ordering::Release);
        self.worked.store(true, Ordering::Release);
        if !self.open.swap(true, Ordering::AcqRel) {
            let mut open = global().open.lock().unwrap_or_else(|e| e.into_inner());
            open.push((lane.clone(), self.clone()));
        }
        relieve(0);
    }

    /// Whether closing this lane's connection costs more than a close (see
    /// `costly`).
    pub fn set_costly(&self, costly: bool) {
        self.costly.store(costly, Ordering::Release);
    }

    /// Whether the lane's connection is open.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// The lane runs a job.
    pub fn worked(&self) {
        self.worked.store(true, Ordering::Release);
    }

    /// The lane is idle with its connection open: whether to close it now
    /// (`due`); if not, and it worked since it last went idle, it went idle
    /// now (`went_idle`).
    pub fn settle(self: &Arc<Self>, lane: &WeakLane) -> bool {
        if self.due(lane) {
            return true;
        }
        if self.worked.swap(false, Ordering::AcqRel) {
            self.went_idle(lane);
        }
        false
    }

    /// The lane goes idle with its connection open: notes when, and arms
    /// its timer unless one is armed.
    fn went_idle(self: &Arc<Self>, lane: &WeakLane) {
        let now = now_ms();
        self.idle_since.store(now, Ordering::Release);
        self.holding.store(false, Ordering::Release);
        if self.armed.load(Ordering::Acquire) == 0 {
            self.arm(lane, now);
        }
    }

    fn arm(&self, lane: &WeakLane, idle_since: u64) {
        let wait = u64::try_from(idle_close().as_millis()).unwrap_or(u64::MAX);
        self.arm_at(lane, idle_since.saturating_add(wait));
    }

    /// Notifies the lane at `at` (ms since `epoch`).
    fn arm_at(&self, lane: &WeakLane, at: u64) {
        let at = at.max(1);
        self.armed.store(at, Ordering::Release);
        notify_at(epoch() + Duration::from_millis(at), lane.clone());
    }

    /// Whether the idle lane should close its connection now: asked to, or
    /// idle for `idle_close()`. Re-arms the timer when it fired early (the
    /// lane was used since it was armed).
    fn due(&self, lane: &WeakLane) -> bool {
        if self.evict.load(Ordering::Acquire) {
            return true;
        }
        let now = now_ms();
        let armed = self.armed.load(Ordering::Acquire);
        if armed == 0 || now < armed {
            return false;
        }
        let since = self.idle_since.load(Ordering::Acquire);
        let wait = u64::try_from(idle_close().as_millis()).unwrap_or(u64::MAX);
        if now.saturating_sub(since) >= wait {
            return true;
        }
        self.arm(lane, since);
        false
    }

    /// Asks the lane to close its connection when next idle; whether it
    /// has one open.
    pub fn evict(&self) -> bool {
        let open = self.is_open();
        if open {
            self.evict.store(true, Ordering::Release);
        }
        open
    }

    /// Whether the lane was asked to close (the process is over its cap).
    pub fn is_evicted(&self) -> bool {
        self.evict.load(Ordering::Acquire)
    }

    /// Whether this is the first time since it was asked to close that the
    /// lane hurries what its close waits for (a replica's shipping). Only
    /// the first hurry looks again as soon as it is done: what a later look
    /// still waits for, shipping does not bring (a paged restore still
    /// filling, a file too large to rest), and looking at each shipping
    /// round's end would loop.
    pub fn hurried(&self) -> bool {
        !self.hurried.swap(true, Ordering::AcqRel)
    }

    /// The connection must stay open for now: nothing to do until the
    /// lane is idle again.
    pub fn kept(&self) {
        self.hurried.store(false, Ordering::Release);
        self.holding.store(true, Ordering::Release);
        self.evict.store(false, Ordering::Release);
        self.armed.store(0, Ordering::Release);
    }

    /// The connection cannot close yet, for a reason that passes without
    /// the lane working again (a replica still shipping): looks again after
    /// another `idle_close()`; or, asked to close for the cap, it stays
    /// asked and looks again after `EVICTED_LOOK_MS`.
    pub fn look_again(&self, lane: &WeakLane) {
        if self.evict.load(Ordering::Acquire) {
            self.arm_at(lane, now_ms().saturating_add(EVICTED_LOOK_MS));
        } else {
            self.arm(lane, now_ms());
        }
    }

    /// One more look by the lane while it waits for a connection to close
    /// (`counter` is `waits` or `short`): how many looks in a row came
    /// before this one with no connection of the process closing in
    /// between. A wait that sees connections close goes on, however long
    /// (a burst of replicated writers, each closing once its replica has
    /// shipped); one that sees none gives up after `WAIT_LOOKS`.
    fn looks_without_close(&self, counter: &AtomicU32) -> u32 {
        let closes = global().closes.load(Ordering::Acquire);
        if self.closes_seen.swap(closes, Ordering::AcqRel) != closes {
            counter.store(0, Ordering::Release);
        }
        counter.fetch_add(1, Ordering::AcqRel)
    }

    /// The connection closed.
    pub fn closed(self: &Arc<Self>) {
        self.hurried.store(false, Ordering::Release);
        self.evict.store(false, Ordering::Release);
        self.armed.store(0, Ordering::Release);
        if self.open.swap(false, Ordering::AcqRel) {
            let mut open = global().open.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = open.iter().position(|(_, d)| Arc::ptr_eq(d, self)) {
                open.swap_remove(at);
            }
        }
    }
}

/// How long a lane told to wait for a connection waits at most before it
/// looks again (a close notifies it sooner), and how many looks in a row,
/// with no connection of the process closing, before it opens past the cap
/// anyway.
const WAIT_LOOK: Duration = Duration::from_millis(20);
const WAIT_LOOKS: u32 = 50;

/// Whether the lane may open a connection now. Under the cap, yes. At the
/// cap, the lanes idle longest are asked to close theirs and this one
/// waits (it is notified as a connection closes, or after `WAIT_LOOK`):
/// `false`, and the lane leaves its work queued. It waits as long as
/// connections close meanwhile, or one asked to close has yet to (a
/// replicating writer's close waits for its replica, then its replicator
/// rests): opening past the cap then would run the process out of file
/// descriptors in a burst. When no connection can be asked to close, now
/// or once its job ends (every one holds state), or after `WAIT_LOOKS`
/// looks with none closing, it opens past the cap anyway: waiting then
/// could wait for a transaction that waits for this very call.
pub fn admit(lane: &WeakLane, doze: &Doze) -> bool {
    let limit = connection_limit();
    if connections_open() < limit {
        doze.waits.store(0, Ordering::Release);
        return true;
    }
    let waits = doze.looks_without_close(&doze.waits);
    let asked = relieve(1);
    let admitted = |doze: &Doze| {
        doze.waits.store(0, Ordering::Release);
        true
    };
    // A connection asked just now may have closed already.
    if connections_open() < limit {
        return admitted(doze);
    }
    if waits >= WAIT_LOOKS || none_will_close(asked) {
        return admitted(doze);
    }
    // Under the queue's lock, as `connection_closed` pops it after the
    // count went down: a close since the look above is seen here, or
    // notifies this lane.
    let waiting = waiting();
    if connections_open() < limit {
        drop(waiting);
        return admitted(doze);
    }
    wait_for_close(waiting, lane);
    false
}

/// The lanes waiting for a connection to close, locked.
fn waiting() -> MutexGuard<'static, VecDeque<WeakLane>> {
    global().waiting.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lane waits for a connection to close: notified by the next close
/// (first come, first notified; `connection_closed`), or after
/// `WAIT_LOOK` at the latest.
fn wait_for_close(mut waiting: MutexGuard<'static, VecDeque<WeakLane>>, lane: &WeakLane) {
    waiting.push_back(lane.clone());
    drop(waiting);
    notify_at(Instant::now() + WAIT_LOOK, lane.clone());
}

/// The lane's open failed for want of file descriptors: whether it waits
/// for connections to close and tries again (`true`; its work stays
/// queued), rather than failing the job that needed the connection.
///
/// The cap budgets descriptors by the limit on open files, but the
/// process may hold others (sockets, its own files), and connections
/// asked to close are still open for a moment: while offloop holds idle
/// connections it can close, running out is theirs to fix, not the
/// caller's. It asks the one idle longest to close and waits, as `admit`
/// does at the cap (a connection running a job now can be asked once it
/// is idle), as long as connections close meanwhile, or up to
/// `WAIT_LOOKS` looks in a row with none closing; when nothing can close
/// (every connection holds state), the caller hears why.
pub fn make_room(lane: &WeakLane, doze: &Doze) -> bool {
    let give_up =
        doze.looks_without_close(&doze.short) >= WAIT_LOOKS || none_will_close(relieve(1));
    if give_up {
        doze.short.store(0, Ordering::Release);
        return false;
    }
    wait_for_close(waiting(), lane);
    true
}

/// Whether no connection will close for a waiting lane: none was asked
/// just now (`asked`), none asked before is still closing, and none is
/// running a job it could be asked to close after.
fn none_will_close(asked: usize) -> bool {
    asked == 0 && !any_closing() && !any_busy()
}

/// Whether a connection asked to close has not closed yet.
fn any_closing() -> bool {
    let open = global().open.lock().unwrap_or_else(|e| e.into_inner());
    open.iter()
        .any(|(_, doze)| doze.evict.load(Ordering::Acquire))
}

/// Whether a lane with a connection open is running now and holds no
/// state: once idle, it can be asked to close (a waiting lane looks again
/// every `WAIT_LOOK`).
fn any_busy() -> bool {
    let open = global().open.lock().unwrap_or_else(|e| e.into_inner());
    open.iter().any(|(lane, doze)| {
        !doze.holding.load(Ordering::Acquire) && lane.is_live() && !lane.is_idle()
    })
}

/// A connection closed: the lane waiting longest for one looks again,
/// before the lanes queued meanwhile (its call has waited once already).
pub fn connection_closed() {
    let next = waiting().pop_front();
    if let Some(lane) = next {
        lane.notify_first();
    }
}

/// Asks the lanes idle longest to close their connections, those whose
/// close is cheap first: one for each connection over the cap, and at
/// least `least`; not those running now, asked already, or holding state.
/// How many were asked.
pub fn relieve(least: usize) -> usize {
    let over = connections_open()
        .saturating_sub(connection_limit())
        .max(least);
    if over == 0 {
        return 0;
    }
    let mut candidates: Vec<(u64, WeakLane, Arc<Doze>)> = {
        let open = global().open.lock().unwrap_or_else(|e| e.into_inner());
        open.iter()
            .filter(|(lane, doze)| {
                !doze.evict.load(Ordering::Acquire)
                    && !doze.holding.load(Ordering::Acquire)
                    && lane.is_idle()
            })
            .map(|(lane, doze)| {
                (
                    doze.idle_since.load(Ordering::Acquire),
                    lane.clone(),
                    doze.clone(),
                )
            })
            .collect()
    };
    // The cheap closes first (readers, checkpointers, writers without a
    // replica), each kind idle longest first.
    candidates
        .sort_unstable_by_key(|(since, _, doze)| (doze.costly.load(Ordering::Acquire), *since));
    let mut asked = 0;
    // Each runs before the lanes queued already: a lane waits for its close.
    for (_, lane, doze) in candidates.into_iter().take(over) {
        doze.evict.store(true, Ordering::Release);
        lane.notify_first();
        asked += 1;
    }
    asked
}

/// SQLite connections open now.
pub fn connections_open() -> usize {
    global().open_count.load(Ordering::Acquire)
}

/// A connection's place in the process's count of open connections, held
/// beside the connection and given up when it drops (which lets a lane
/// waiting for a connection look again). A writer whose WAL observer holds
/// connections of its own for the database (a replicator's) counts those
/// too, until it closes (and the observer lets go of them, see `rested`).
pub struct Counted(usize);

impl Counted {
    pub fn new() -> Counted {
        Counted::many(1)
    }

    pub fn many(connections: usize) -> Counted {
        global().open_count.fetch_add(connections, Ordering::AcqRel);
        Counted(connections)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let g = global();
        g.open_count.fetch_sub(self.0, Ordering::AcqRel);
        g.closes.fetch_add(1, Ordering::AcqRel);
        connection_closed();
        trim_soon();
    }
}
