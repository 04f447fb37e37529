//! The process-wide pool of SQLite threads and the lanes it runs. A lane is
//! one unit of serial work (a database's writer, one of its readers, its
//! checkpointer): whoever queues work for it calls `notify`, and a pool
//! thread runs it until it has nothing left, or has used its budget, then
//! takes the next lane. A lane never runs on two threads at once, and no
//! thread waits for a lane's next job: the cost of an open database is
//! state, not threads.
//!
//! The run queue is first come, first served, but for two notifications
//! that go to its front (`Lane::notify_first`, a second queue the threads
//! look at first): a lane asked to close its connection for the cap, and
//! the lane waiting for that close.
//!
//! Threads start on demand, up to a bound set by the machine (`configure`),
//! one pool per nice value databases ask for; a thread leaves after being
//! idle for `THREAD_LINGER`, or at once when no database is open. A thread
//! may still wait inside a lane's job: for a lock that a connection of
//! another database of this process holds (the same file opened twice), a
//! lock whose holder's lane waits in this run queue for a thread. So when
//! work has waited `STALL` with no thread taking any, the pool starts one
//! more, beyond the bound, up to `STALLED_THREADS_MAX` (the timer looks,
//! see `rescue_stalled`). This file knows nothing of SQLite: it runs `Work`
//! and never looks inside. The lane itself is in `lane.rs`.
//!
//! A caller awaiting one call after another must cost one thread, not
//! several: the thread that ran a lane counts as spinning from before the
//! lane goes idle until it is among the sleepers, only the latest thread
//! to start spinning spins on, and sleepers wake last in, first out; a
//! database's readers hand a lone call to the reader that ran the last one
//! (`Lanes::wake_shared`).

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender, TryRecvError};

use crate::error::Result;
use crate::pace::{self, Pace};
use crate::threads::spawn;

/// How long a pool thread with nothing to run stays, while databases are open.
const THREAD_LINGER: Duration = Duration::from_secs(10);

/// How long a pool thread with nothing to run stays once no database is
/// open.
const CLOSED_LINGER: Duration = Duration::from_millis(100);

/// How long a thread whose run queue ran dry looks at it before it sleeps,
/// when its pace says so (see `pace.rs`): a caller awaiting one call after
/// another sends the next within microseconds of the last reply.
const SPIN: Duration = Duration::from_micros(50);

/// A wait up to this long is short: worth spinning through next time.
const SHORT: Duration = Duration::from_micros(100);

/// How long lanes may wait in the run queue, with every thread busy and
/// none taking from it, before the pool starts a thread beyond its bound:
/// far longer than a job's usual run (or than a thread waits for a CPU on a
/// busy machine, which would start threads for nothing), far shorter than a
/// busy timeout (5 s by default).
pub const STALL: Duration = Duration::from_millis(100);

/// The most threads one pool runs, those started past a stall included: a
/// lock wait holds a thread, and as many lanes may wait for one lock as
/// there are connections of this process to that file.
const STALLED_THREADS_MAX: usize = 256;

/// Called when a push finds every thread busy: arranges a `rescue_stalled`
/// call after `STALL` (the timer's; set at the first open, so that this
/// file does not depend on the timer, which depends on it).
static ON_STARVED: OnceLock<fn()> = OnceLock::new();

pub fn on_starved(hook: fn()) {
    let _ = ON_STARVED.set(hook);
}

mod lane;
pub use lane::{Lane, Ran, WeakLane, Work};

pub struct Pool {
    nice: i32,
    sender: Sender<Lane>,
    receiver: Receiver<Lane>,
    /// Lanes that run before those queued above (`Lane::notify_first`).
    first_sender: Sender<Lane>,
    first_receiver: Receiver<Lane>,
    /// Threads alive, and of those, looking at the run queue before they
    /// sleep (they take a task without a wake-up).
    live: AtomicUsize,
    pub(crate) spinning: AtomicUsize,
    /// Bumped by each thread that starts to spin: only the latest spins on,
    /// the others sleep. That is the thread that just ran a lane, whose
    /// caller may call again at once; two spinning threads would take a
    /// lone caller's calls in turn, each burning a CPU while the other runs.
    spin_turn: AtomicU64,
    /// Threads asleep with nothing to run, to unpark after a push. A
    /// sleeper registers, then looks at the queue once more, then parks: a
    /// push either is seen by that look or finds the sleeper here.
    sleepers: Mutex<Vec<Thread>>,
    /// Tasks taken from the run queue so far, and their count when a stall
    /// was last looked for: no change while tasks wait is a stall.
    taken: AtomicU64,
    checked: AtomicU64,
    /// Set while a look for a stall is arranged.
    watched: AtomicBool,
    /// Held while a thread starts or decides to leave.
    membership: Mutex<()>,
    next_name: AtomicUsize,
}

/// Process-wide settings and counts.
struct Global {
    pools: Mutex<Vec<Arc<Pool>>>,
    /// The bound on threads per pool; 0 until configured (the default).
    threads: AtomicUsize,
    databases: AtomicUsize,
}

fn global() -> &'static Global {
    static GLOBAL: OnceLock<Global> = OnceLock::new();
    GLOBAL.get_or_init(|| Global {
        pools: Mutex::new(Vec::new()),
        threads: AtomicUsize::new(0),
        databases: AtomicUsize::new(0),
    })
}

/// The default bound: four threads a core, at least 8, at most 64. A
/// thread blocks only inside SQLite (a busy lock, disk I/O), never waiting
/// for JavaScript, so a few per core keep the cores busy through waits.
pub fn default_threads() -> usize {
    let cores = pace::cores();
    (4 * cores).clamp(8, 64)
}

/// The bound on SQLite threads in force.
pub fn thread_limit() -> usize {
    match global().threads.load(Ordering::Relaxed) {
        0 => default_threads(),
        n => n,
    }
}

/// Sets the bound on SQLite threads (`None`: the default). Threads above a
/// lowered bound leave as they finish what they run.
pub fn configure_threads(threads: Option<usize>) {
    global()
        .threads
        .store(threads.unwrap_or(0), Ordering::Relaxed);
}

/// The pool for threads at nice value `nice`, created on first use.
pub fn pool(nice: i32) -> Arc<Pool> {
    let mut pools = global().pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = pools.iter().find(|p| p.nice == nice) {
        return pool.clone();
    }
    let (sender, receiver) = unbounded();
    let (first_sender, first_receiver) = unbounded();
    let pool = Arc::new(Pool {
        nice,
        sender,
        receiver,
        first_sender,
        first_receiver,
        live: AtomicUsize::new(0),
        spinning: AtomicUsize::new(0),
        spin_turn: AtomicU64::new(0),
        sleepers: Mutex::new(Vec::new()),
        taken: AtomicU64::new(0),
        checked: AtomicU64::new(0),
        watched: AtomicBool::new(false),
        membership: Mutex::new(()),
        next_name: AtomicUsize::new(0),
    });
    pools.push(pool.clone());
    pool
}

/// Databases open now (counted from `database_opened` until their last
/// lane finished).
pub fn databases_open() -> usize {
    global().databases.load(Ordering::Acquire)
}

pub fn database_opened() {
    global().databases.fetch_add(1, Ordering::AcqRel);
}

/// The last lane of a database finished. When no database is left, every
/// sleeping thread wakes to sleep again for `CLOSED_LINGER` only (a database
/// opened meanwhile finds it still there); whether that was the last one.
pub fn database_closed() -> bool {
    if global().databases.fetch_sub(1, Ordering::AcqRel) != 1 {
        return false;
    }
    let pools = global().pools.lock().unwrap_or_else(|e| e.into_inner());
    for pool in pools.iter() {
        let sleepers =
            std::mem::take(&mut *pool.sleepers.lock().unwrap_or_else(|e| e.into_inner()));
        for thread in sleepers {
            thread.unpark();
        }
    }
    true
}

/// The timer's look for a stall in every pool (see `Pool::rescue`);
/// whether to look again after another `STALL`.
pub fn rescue_stalled() -> bool {
    let pools = global()
        .pools
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let mut again = false;
    for pool in &pools {
        again |= pool.rescue();
    }
    again
}

/// Pool threads alive, and lanes waiting for one, every pool together.
pub fn threads_and_queued() -> (usize, usize) {
    let pools = global().pools.lock().unwrap_or_else(|e| e.into_inner());
    let threads = pools.iter().map(|p| p.live.load(Ordering::Acquire)).sum();
    let queued = pools.iter().map(|p| p.queued()).sum();
    (threads, queued)
}

impl Pool {
    /// Makes sure a thread can run this pool's lanes: the error when none
    /// is alive and none can start.
    pub fn ensure_thread(self: &Arc<Self>) -> Result<()> {
        if self.live.load(Ordering::Acquire) > 0 {
            return Ok(());
        }
        self.start_thread(true, thread_limit()).map(|_| ())
    }

    /// Lanes waiting for a thread.
    fn queued(&self) -> usize {
        self.first_receiver.len() + self.receiver.len()
    }

    fn is_empty(&self) -> bool {
        self.first_receiver.is_empty() && self.receiver.is_empty()
    }

    /// Queues `lane` to run: behind the lanes queued already, or with
    /// `first`, before them. `by_runner`: pushed by the pool thread that
    /// just ran it, which looks at the run queue next and so counts as one
    /// more thread to take it.
    pub(crate) fn push(self: Arc<Self>, lane: Lane, by_runner: bool, first: bool) {
        // The receivers live in `self`: the send cannot fail.
        let _ = if first {
            self.first_sender.send(lane)
        } else {
            self.sender.send(lane)
        };
        // A spinning thread takes a task without a wake-up.
        fence(Ordering::SeqCst);
        let takers = self.spinning.load(Ordering::SeqCst) + usize::from(by_runner);
        if self.queued() <= takers {
            return;
        }
        let sleeper = self
            .sleepers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        match sleeper {
            Some(thread) => thread.unpark(),
            None if self.live.load(Ordering::Acquire) < thread_limit() => {
                // Best effort: a thread that cannot start leaves the lane
                // to the threads that run.
                let _ = self.start_thread(false, thread_limit());
            }
            None => {
                if !self.watched.swap(true, Ordering::SeqCst) {
                    self.checked
                        .store(self.taken.load(Ordering::Acquire), Ordering::Release);
                    if let Some(hook) = ON_STARVED.get() {
                        hook();
                    }
                }
            }
        }
    }

    /// A look for a stall, `STALL` after a push found every thread busy:
    /// if tasks wait and no thread took one since the last look, one more
    /// thread starts. Whether tasks still wait (look again then).
    fn rescue(self: &Arc<Self>) -> bool {
        // Cleared first: a push from here on arranges the next look.
        self.watched.store(false, Ordering::SeqCst);
        if self.is_empty() {
            return false;
        }
        let taken = self.taken.load(Ordering::Acquire);
        let stalled = self.checked.swap(taken, Ordering::AcqRel) == taken
            && self.spinning.load(Ordering::SeqCst) == 0;
        if stalled {
            let bound = thread_limit().max(STALLED_THREADS_MAX);
            let _ = self.start_thread(false, bound);
        }
        !self.watched.swap(true, Ordering::SeqCst)
    }

    /// Sleeps until a push unparks this thread or it has lingered long
    /// enough (`THREAD_LINGER`, or `CLOSED_LINGER` with no database open);
    /// whether a task may be waiting. The thread counts as spinning until it
    /// is among the sleepers, so that a push always finds it one way or the
    /// other (and wakes it, rather than another).
    fn sleep(&self) -> bool {
        let me = thread::current();
        self.sleepers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(me.clone());
        self.spinning.fetch_sub(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // Read once among the sleepers: a last close either counted before
        // this read, or found this thread there and unparks it.
        let linger = if databases_open() == 0 {
            CLOSED_LINGER
        } else {
            THREAD_LINGER
        };
        let deadline = Instant::now() + linger;
        loop {
            if !self.is_empty() {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            thread::park_timeout(deadline - now);
            // Popped by a push: it unparked this thread for its task.
            let sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
            if !sleepers.iter().any(|t| t.id() == me.id()) {
                return true;
            }
        }
        let mut sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        sleepers.retain(|t| t.id() != me.id());
        !self.is_empty()
    }

    /// Starts a thread unless `bound` threads run (or, with `first`,
    /// unless one runs already). Whether one started.
    fn start_thread(self: &Arc<Self>, first: bool, bound: usize) -> Result<bool> {
        let _member = self.membership.lock().unwrap_or_else(|e| e.into_inner());
        let live = self.live.load(Ordering::Acquire);
        if (first && live > 0) || (!first && live >= bound) {
            return Ok(false);
        }
        self.live.fetch_add(1, Ordering::AcqRel);
        let name = format!(
            "offloop-sql-{}",
            self.next_name.fetch_add(1, Ordering::Relaxed)
        );
        let pool = self.clone();
        match spawn(name, self.nice, move || pool.serve()) {
            // Detached: a thread leaves on its own (see `serve`).
            Ok(handle) => {
                drop(handle);
                Ok(true)
            }
            Err(error) => {
                self.live.fetch_sub(1, Ordering::AcqRel);
                Err(error)
            }
        }
    }

    /// A pool thread: runs lanes until it has been idle for
    /// `THREAD_LINGER`, or no database is open.
    fn serve(self: Arc<Self>) {
        let mut pace = Pace::new();
        // Whether this thread counts in `spinning` already (from the end of
        // its last lane's run, see `Lane::run`).
        let mut counted = false;
        loop {
            let task = match self
                .first_receiver
                .try_recv()
                .or_else(|_| self.receiver.try_recv())
            {
                Ok(task) => {
                    if std::mem::take(&mut counted) {
                        self.spinning.fetch_sub(1, Ordering::SeqCst);
                    }
                    self.taken.fetch_add(1, Ordering::Relaxed);
                    task
                }
                Err(TryRecvError::Disconnected) => {
                    if counted {
                        self.spinning.fetch_sub(1, Ordering::SeqCst);
                    }
                    return self.leave_now();
                }
                Err(TryRecvError::Empty) => {
                    let since = Instant::now();
                    if !std::mem::take(&mut counted) {
                        self.spinning.fetch_add(1, Ordering::SeqCst);
                    }
                    let turn = self.spin_turn.fetch_add(1, Ordering::AcqRel) + 1;
                    let (found, measured) = pace.spin(SPIN, || {
                        !self.is_empty() || self.spin_turn.load(Ordering::Acquire) != turn
                    });
                    if found && !self.is_empty() {
                        self.spinning.fetch_sub(1, Ordering::SeqCst);
                        continue;
                    }
                    let woken = self.sleep();
                    if measured {
                        pace.waited(since.elapsed(), SHORT);
                    }
                    if woken || !self.leave() {
                        continue;
                    }
                    return;
                }
            };
            counted = task.run();
        }
    }

    /// Leaves the pool unless work arrived meanwhile: a sender that saw
    /// this thread idle sent before this look.
    fn leave(&self) -> bool {
        let _member = self.membership.lock().unwrap_or_else(|e| e.into_inner());
        self.live.fetch_sub(1, Ordering::AcqRel);
        fence(Ordering::SeqCst);
        // A push that saw this thread alive (and so started none) sent
        // before this look.
        if self.is_empty() {
            true
        } else {
            self.live.fetch_add(1, Ordering::AcqRel);
            false
        }
    }

    fn leave_now(&self) {
        let _member = self.membership.lock().unwrap_or_else(|e| e.into_inner());
        self.live.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{channel, Receiver, Sender};

    use super::*;

    /// Work that reports its name when it runs and, if given a gate,
    /// holds its thread until the gate opens.
    struct Step {
        name: &'static str,
        ran: Sender<&'static str>,
        gate: Option<Receiver<()>>,
    }

    impl Work for Step {
        fn run(&mut self) -> Ran {
            let _ = self.ran.send(self.name);
            if let Some(gate) = self.gate.take() {
                let _ = gate.recv();
            }
            Ran::Idle
        }
    }

    fn lane(
        pool: &Arc<Pool>,
        name: &'static str,
        ran: &Sender<&'static str>,
        gate: Option<Receiver<()>>,
    ) -> Lane {
        let lane = Lane::new(pool.clone());
        let step = Step {
            name,
            ran: ran.clone(),
            gate,
        };
        lane.start(Box::new(step));
        lane
    }

    #[test]
    fn a_lane_notified_first_runs_before_the_lanes_queued_already() {
        // A nice value of its own: no other test's lanes share this pool.
        let pool = pool(7);
        database_opened();
        let (ran, heard) = channel();
        // Every thread the pool may start holds a blocker.
        let mut gates = Vec::new();
        for _ in 0..thread_limit() {
            let (open, gate) = channel();
            lane(&pool, "blocker", &ran, Some(gate)).notify();
            gates.push(open);
        }
        for _ in 0..thread_limit() {
            assert_eq!(heard.recv().unwrap(), "blocker");
        }
        let queued: Vec<Lane> = ["queued 1", "queued 2", "queued 3"]
            .into_iter()
            .map(|name| lane(&pool, name, &ran, None))
            .collect();
        for lane in &queued {
            lane.notify();
        }
        lane(&pool, "first", &ran, None).notify_first();
        // One thread comes free: it takes the lane notified first.
        gates.pop().unwrap().send(()).unwrap();
        assert_eq!(heard.recv().unwrap(), "first");
        for gate in gates {
            gate.send(()).unwrap();
        }
        let mut rest: Vec<_> = (0..3).map(|_| heard.recv().unwrap()).collect();
        rest.sort_unstable();
        assert_eq!(rest, ["queued 1", "queued 2", "queued 3"]);
        database_closed();
    }
}
