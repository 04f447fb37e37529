//! The replicator pool: the process's `offloop-replicator` threads, which
//! run the replication steps of every replicated database, and the one
//! `offloop-replicator-timer` thread, which wakes a database when its next
//! step is due (a capture, a sync round, a retry, a gathering window).
//!
//! # Design
//!
//! Each database is a `Lane`: its state (a `Task`, whose `step` does
//! whatever is due and says when it wants to run next) and where it
//! stands: idle, scheduled (in the ready queue, once at most) or running
//! (on one thread; `notified` when something arrived meanwhile, so it runs
//! again straight after). A lane never runs on two threads at once, so a
//! database's steps keep the order one thread of its own gave them. A
//! commit's wake-up (a `Wake`, one pending at most), a command or a
//! durable waiter schedules the lane at once; a deadline goes into the
//! timer's heap.
//!
//! The pool holds `base_threads` threads (the machine's cores, at least
//! 2, at most 4), started on demand. A step may block on its store (an
//! upload to a slow S3), holding one thread: a slow database holds at most
//! one. When every thread is held and the ready queue has not moved for
//! `STALL`, the timer starts one more, up to `RESCUE_THREADS` past the
//! base; past that, the other databases wait for a thread to come back
//! (docs/replication.md, "Threads"). A thread leaves after `IDLE_EXIT`
//! without work, a rescue thread as soon as it finds none, and every one
//! of them, the timer's included, as soon as no lane is left: none
//! outlives the last replicated database's close.
//!
//! A step that panics ends its database's replication (`Task::fail`
//! answers whoever waits), never the thread. The pool never touches a
//! database or a store itself; it only decides which step runs where.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

/// How long a scheduled database may wait while every thread is held
/// before one more thread starts: longer than a local round takes, short
/// beside a sync interval.
pub(crate) const STALL: Duration = Duration::from_millis(100);
/// Threads the timer may start past the base when all are held (by slow
/// stores): the most that slow stores can take before others wait.
pub(crate) const RESCUE_THREADS: usize = 4;
/// How long a base thread waits for work before it leaves.
const IDLE_EXIT: Duration = Duration::from_secs(5);

/// The pool's threads in normal work: one per core the process may use,
/// at least 2 (so a slow store never holds them all) and at most 4 (the
/// work is mostly waiting on disks and stores, not computing). Asked on
/// every scheduling decision, so it reads the cached CPU count: the
/// standard library's reads the cgroup's files each time.
pub fn base_threads() -> usize {
    offloop_engine::cores().clamp(2, 4)
}

/// The most threads the pool may hold at once: its workers with every
/// rescue started, and its timer.
pub fn max_threads() -> usize {
    base_threads() + RESCUE_THREADS + 1
}

/// A database's replication as the pool runs it.
pub(crate) trait Task: Send {
    /// Does what is due now; never waits for a deadline itself.
    fn step(&mut self) -> Next;
    /// A step panicked: answer whoever waits, as the replication ends.
    fn fail(&mut self);
}

/// What a step wants next.
pub(crate) enum Next {
    /// Run again at this instant (`None`: only when something arrives).
    Wait(Option<Instant>),
    /// The replication is over: the task is dropped.
    Ended,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Scheduled,
    Running { notified: bool },
    Ended,
}

struct Run {
    state: State,
    /// The earliest deadline in the timer's heap for this lane.
    due: Option<Instant>,
}

/// One database in the pool: its task and where it stands.
pub(crate) struct Lane {
    run: Mutex<Run>,
    ended: Condvar,
    task: Mutex<Option<Box<dyn Task>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Lane {
    /// A lane with no task yet (see [`Lane::start`]).
    pub(crate) fn new() -> Arc<Lane> {
        Arc::new(Lane {
            run: Mutex::new(Run {
                state: State::Idle,
                due: None,
            }),
            ended: Condvar::new(),
            task: Mutex::new(None),
        })
    }

    /// Joins the pool with `task`, whose first step is scheduled at once.
    pub(crate) fn start(self: &Arc<Self>, task: Box<dyn Task>) -> std::io::Result<()> {
        POOL.join()?;
        *lock(&self.task) = Some(task);
        self.schedule();
        Ok(())
    }

    /// Something arrived for this database: its next step runs as soon as
    /// a thread is free (straight after the current one, if it runs).
    pub(crate) fn schedule(self: &Arc<Self>) {
        let mut run = lock(&self.run);
        match run.state {
            State::Idle => {
                run.state = State::Scheduled;
                POOL.push(self.clone());
            }
            State::Running { .. } => run.state = State::Running { notified: true },
            State::Scheduled | State::Ended => {}
        }
    }

    /// Blocks until the task has ended.
    pub(crate) fn join(&self) {
        let mut run = lock(&self.run);
        while run.state != State::Ended {
            run = self.ended.wait(run).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The timer's deadline `at` passed: the lane runs, unless an earlier
    /// deadline replaced that one (a run since then set its own).
    fn fire(self: &Arc<Self>, at: Instant) {
        let mut run = lock(&self.run);
        if run.due != Some(at) {
            return;
        }
        run.due = None;
        drop(run);
        self.schedule();
    }

    /// Runs one step on this thread (the lane is `Scheduled`, taken off
    /// the ready queue), then files it where its answer says.
    fn run_step(self: &Arc<Self>) {
        lock(&self.run).state = State::Running { notified: false };
        let mut slot = lock(&self.task);
        let next = match slot.as_mut() {
            None => Next::Ended,
            Some(task) => catch_unwind(AssertUnwindSafe(|| task.step())).unwrap_or_else(|_| {
                let _ = catch_unwind(AssertUnwindSafe(|| task.fail()));
                Next::Ended
            }),
        };
        if let Next::Ended = next {
            // Dropped here, on the pool's thread: its store and files go
            // before the lane says it ended.
            let task = slot.take();
            drop(slot);
            let _ = catch_unwind(AssertUnwindSafe(move || drop(task)));
            lock(&self.run).state = State::Ended;
            self.ended.notify_all();
            POOL.leave();
            return;
        }
        drop(slot);
        let Next::Wait(at) = next else { return };
        let mut run = lock(&self.run);
        let now = Instant::now();
        if run.state == (State::Running { notified: true }) || at.is_some_and(|at| at <= now) {
            run.state = State::Scheduled;
            POOL.push(self.clone());
            return;
        }
        run.state = State::Idle;
        if let Some(at) = at {
            if run.due.is_none_or(|due| at < due) {
                run.due = Some(at);
                POOL.add_timer(at, Arc::downgrade(self));
            }
        }
    }
}

/// A lane's one-slot wake-up (a database's commit wake-up): at most one
/// pending, like the one-slot channel it replaced (whose name its call
/// keeps); one that arrives while one is pending costs an atomic swap.
pub(crate) struct Wake {
    pending: AtomicBool,
    lane: Weak<Lane>,
}

impl Wake {
    pub(crate) fn new(lane: Weak<Lane>) -> Self {
        Wake {
            pending: AtomicBool::new(false),
            lane,
        }
    }

    /// Wakes the database (schedules its next step) unless a wake-up is
    /// pending already. Its answer: whether this one was new.
    pub(crate) fn try_send(&self, _: ()) -> bool {
        if self.pending.swap(true, Ordering::AcqRel) {
            return false;
        }
        if let Some(lane) = self.lane.upgrade() {
            lane.schedule();
        }
        true
    }

    /// Takes the pending wake-up, if there is one.
    pub(crate) fn take(&self) -> bool {
        self.pending.swap(false, Ordering::AcqRel)
    }
}

/// A deadline in the timer's heap.
struct Timer {
    at: Instant,
    seq: u64,
    lane: Weak<Lane>,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timer {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

struct Threads {
    ready: VecDeque<Arc<Lane>>,
    timers: BinaryHeap<Reverse<Timer>>,
    seq: u64,
    /// Lanes started and not yet ended.
    lanes: usize,
    workers: usize,
    /// Workers waiting for work.
    idle: usize,
    timer: bool,
    /// When a worker last took a lane from the ready queue, or the queue
    /// last became non-empty: the stall clock.
    moved: Instant,
}

struct Pool {
    threads: Mutex<Option<Threads>>,
    work: Condvar,
    clock: Condvar,
}

static POOL: Pool = Pool {
    threads: Mutex::new(None),
    work: Condvar::new(),
    clock: Condvar::new(),
};

impl Pool {
    fn lock(&self) -> MutexGuard<'_, Option<Threads>> {
        lock(&self.threads)
    }

    /// A lane joins: the timer starts with the first.
    fn join(&'static self) -> std::io::Result<()> {
        let mut guard = self.lock();
        let t = guard.get_or_insert_with(|| Threads {
            ready: VecDeque::new(),
            timers: BinaryHeap::new(),
            seq: 0,
            lanes: 0,
            workers: 0,
            idle: 0,
            timer: false,
            moved: Instant::now(),
        });
        if !t.timer {
            std::thread::Builder::new()
                .name("offloop-replicator-timer".into())
                .spawn(move || self.tick())?;
            t.timer = true;
        }
        t.lanes += 1;
        Ok(())
    }

    /// A lane ended: with the last, every thread leaves.
    fn leave(&self) {
        let mut guard = self.lock();
        if let Some(t) = guard.as_mut() {
            t.lanes -= 1;
            if t.lanes == 0 {
                self.work.notify_all();
                self.clock.notify_all();
            }
        }
    }

    fn push(&'static self, lane: Arc<Lane>) {
        let mut guard = self.lock();
        let Some(t) = guard.as_mut() else { return };
        if t.ready.is_empty() {
            t.moved = Instant::now();
        }
        t.ready.push_back(lane);
        if t.idle > 0 {
            self.work.notify_one();
        }
        if t.ready.len() > t.idle && t.workers < base_threads() {
            self.spawn_worker(t);
        } else if t.idle == 0 {
            // The timer watches for a stall.
            self.clock.notify_one();
        }
    }

    fn add_timer(&self, at: Instant, lane: Weak<Lane>) {
        let mut guard = self.lock();
        let Some(t) = guard.as_mut() else { return };
        let earliest = t.timers.peek().is_none_or(|Reverse(first)| at < first.at);
        t.seq += 1;
        let seq = t.seq;
        t.timers.push(Reverse(Timer { at, seq, lane }));
        if earliest {
            self.clock.notify_one();
        }
    }

    /// Starts a worker; one that cannot start leaves the work to the
    /// others, and to the timer's next look at a stall.
    fn spawn_worker(&'static self, t: &mut Threads) {
        let spawned = std::thread::Builder::new()
            .name("offloop-replicator".into())
            .spawn(move || self.work());
        if spawned.is_ok() {
            t.workers += 1;
        }
    }

    /// A worker: runs scheduled lanes until there are none for a while.
    fn work(&self) {
        let mut guard = self.lock();
        loop {
            let Some(t) = guard.as_mut() else { return };
            if let Some(lane) = t.ready.pop_front() {
                t.moved = Instant::now();
                drop(guard);
                lane.run_step();
                guard = self.lock();
                continue;
            }
            if t.lanes == 0 || t.workers > base_threads() {
                t.workers -= 1;
                return;
            }
            t.idle += 1;
            let (g, waited) = self
                .work
                .wait_timeout(guard, IDLE_EXIT)
                .unwrap_or_else(PoisonError::into_inner);
            guard = g;
            let Some(t) = guard.as_mut() else { return };
            t.idle -= 1;
            if waited.timed_out() && t.ready.is_empty() {
                t.workers -= 1;
                return;
            }
        }
    }

    /// The timer: schedules the lanes whose deadline passed, and starts a
    /// worker when the ready queue stalled.
    fn tick(&'static self) {
        let mut guard = self.lock();
        loop {
            let Some(t) = guard.as_mut() else { return };
            if t.lanes == 0 {
                t.timer = false;
                t.timers.clear();
                return;
            }
            let now = Instant::now();
            let mut due = Vec::new();
            while t
                .timers
                .peek()
                .is_some_and(|Reverse(first)| first.at <= now)
            {
                if let Some(Reverse(timer)) = t.timers.pop() {
                    due.push(timer);
                }
            }
            if !due.is_empty() {
                drop(guard);
                for timer in due {
                    if let Some(lane) = timer.lane.upgrade() {
                        lane.fire(timer.at);
                    }
                }
                guard = self.lock();
                continue;
            }
            let stalled = !t.ready.is_empty() && t.idle == 0;
            if stalled && now.duration_since(t.moved) >= STALL {
                if t.workers < base_threads() + RESCUE_THREADS {
                    self.spawn_worker(t);
                }
                t.moved = now;
            }
            let mut wake = t.timers.peek().map(|Reverse(first)| first.at);
            if stalled {
                let check = t.moved + STALL;
                wake = Some(wake.map_or(check, |at| at.min(check)));
            }
            guard = match wake {
                Some(at) => {
                    let timeout = at.saturating_duration_since(now);
                    self.clock
                        .wait_timeout(guard, timeout)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .clock
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
