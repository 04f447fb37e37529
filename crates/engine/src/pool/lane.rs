//! A lane: one unit of serial work of a database (its writer, one of its
//! readers, its checkpointer), run by the process-wide pool (`pool.rs`).
//! Whoever queues work for it calls `notify`; a pool thread runs it until it
//! has nothing left or has used its budget. A lane never runs on two
//! threads at once, and a notification that comes while it runs makes it
//! run once more, so nothing queued is missed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::Pool;

/// What a lane's run ended with.
pub enum Ran {
    /// Nothing is queued: the lane sleeps until notified.
    Idle,
    /// The budget is spent with work left: the lane goes to the back of the
    /// run queue, behind the lanes that waited meanwhile.
    More,
    /// The lane's work is over (its database closed); it never runs again.
    Finished,
}

/// The serial work of a lane: run what is queued, then return. It is never
/// run on two threads at once.
pub trait Work: Send {
    fn run(&mut self) -> Ran;
}

const IDLE: u8 = 0;
const SCHEDULED: u8 = 1;
const RUNNING: u8 = 2;
const NOTIFIED: u8 = 3;
const FINISHED: u8 = 4;

struct LaneInner {
    state: AtomicU8,
    work: Mutex<Option<Box<dyn Work>>>,
    pool: Arc<Pool>,
}

/// A handle on a lane: clone it to notify the lane from anywhere.
#[derive(Clone)]
pub struct Lane(Arc<LaneInner>);

/// A handle that does not keep the lane's work alive (a timer's).
#[derive(Clone)]
pub struct WeakLane(Weak<LaneInner>);

impl WeakLane {
    /// Whether the lane may still run (it exists and has not finished).
    pub fn is_live(&self) -> bool {
        self.0
            .upgrade()
            .is_some_and(|inner| inner.state.load(Ordering::Acquire) != FINISHED)
    }

    /// Whether the lane sleeps (it exists, neither queued to run nor
    /// running).
    pub fn is_idle(&self) -> bool {
        self.0
            .upgrade()
            .is_some_and(|inner| inner.state.load(Ordering::Acquire) == IDLE)
    }

    /// Whether this is a handle on `lane`.
    pub fn is(&self, lane: &Lane) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&lane.0))
    }

    pub fn notify(&self) {
        if let Some(inner) = self.0.upgrade() {
            Lane(inner).notify();
        }
    }

    /// See `Lane::notify_first`.
    pub fn notify_first(&self) {
        if let Some(inner) = self.0.upgrade() {
            Lane(inner).notify_first();
        }
    }
}

impl Lane {
    /// A lane of `pool` whose work is set later (`start`): until then it
    /// can be notified, and runs once the work is there.
    pub fn new(pool: Arc<Pool>) -> Lane {
        Lane(Arc::new(LaneInner {
            state: AtomicU8::new(IDLE),
            work: Mutex::new(None),
            pool,
        }))
    }

    /// Gives the lane its work (the work may hold handles on this lane).
    pub fn start(&self, work: Box<dyn Work>) {
        *self.0.work.lock().unwrap_or_else(|e| e.into_inner()) = Some(work);
    }

    pub fn downgrade(&self) -> WeakLane {
        WeakLane(Arc::downgrade(&self.0))
    }

    /// Something was queued for the lane: it runs soon, on some pool
    /// thread. A lane that is running runs once more after this run, so
    /// nothing queued meanwhile is missed.
    pub fn notify(&self) {
        self.schedule(false);
    }

    /// As `notify`, but a lane that sleeps runs before the lanes queued
    /// already: one whose run frees what others wait for (a connection
    /// asked to close for the cap), or whose caller waited already (for
    /// that connection to close). Those are few, and each would otherwise
    /// wait out the whole run queue once more.
    pub fn notify_first(&self) {
        self.schedule(true);
    }

    fn schedule(&self, first: bool) {
        let state = &self.0.state;
        let mut now = state.load(Ordering::Acquire);
        loop {
            let next = match now {
                IDLE => SCHEDULED,
                RUNNING => NOTIFIED,
                _ => return,
            };
            match state.compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) if next == SCHEDULED => {
                    return self.0.pool.clone().push(self.clone(), false, first)
                }
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// Whether the lane sleeps (neither queued to run nor running).
    pub fn is_idle(&self) -> bool {
        self.0.state.load(Ordering::Acquire) == IDLE
    }

    /// Runs the lane once, on the calling pool thread. Whether that thread
    /// now counts as spinning (see `Pool::serve`): it does from just before
    /// the lane goes idle, so that a caller who hears the lane's last reply
    /// and queues its next call at once finds it counted, and wakes nobody.
    pub(crate) fn run(self) -> bool {
        self.0.state.store(RUNNING, Ordering::Release);
        let ran = {
            let mut work = self.0.work.lock().unwrap_or_else(|e| e.into_inner());
            match work.as_mut() {
                // Every `Work` catches its jobs' panics itself; one that
                // escapes ends the lane, whose queues then refuse (closed).
                Some(w) => catch_unwind(AssertUnwindSafe(|| w.run())).unwrap_or(Ran::Finished),
                None => Ran::Idle,
            }
        };
        match ran {
            Ran::More => {
                self.0.state.store(SCHEDULED, Ordering::Release);
                self.0.pool.clone().push(self, true, false);
                false
            }
            Ran::Idle => {
                let pool = self.0.pool.clone();
                pool.spinning.fetch_add(1, Ordering::SeqCst);
                let done = self.0.state.compare_exchange(
                    RUNNING,
                    IDLE,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                if done.is_err() {
                    // Notified while it ran: again, behind the others.
                    pool.spinning.fetch_sub(1, Ordering::SeqCst);
                    self.0.state.store(SCHEDULED, Ordering::Release);
                    pool.push(self, true, false);
                    return false;
                }
                true
            }
            Ran::Finished => {
                self.0.state.store(FINISHED, Ordering::Release);
                // Dropped outside the lock: the work's handles on other
                // lanes (and on this one) go with it.
                let work = self.0.work.lock().unwrap_or_else(|e| e.into_inner()).take();
                drop(work);
                false
            }
        }
    }
}
