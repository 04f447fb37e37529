//! The process-wide timer: one thread that notifies lanes at deadlines (a
//! scope's idle timeout, the checkpointer's idle pass), and looks for a
//! stalled pool `STALL` after a push found every pool thread busy (see
//! `pool::rescue_stalled`), and hands the memory of closed connections
//! back to the system (see `trim.rs`). It starts with the first deadline and leaves
//! soon after the last one passed, or was dropped because no database is
//! open (every lane is gone then). A timer only notifies: the lane decides,
//! when it runs, whether its deadline still stands. It never runs a job or
//! touches a connection.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::pool::{self, Lane, WeakLane, STALL};
use crate::trim::release_free_memory;

/// How long the timer thread waits with nothing to wait for before leaving.
const LINGER: Duration = Duration::from_millis(100);

/// How long after a connection closes its memory is handed back: closes
/// come in waves (idle connections time out together, a server closes its
/// databases), and one trim a second serves a whole wave.
const TRIM_DELAY: Duration = Duration::from_secs(1);

struct Entry {
    at: Instant,
    order: u64,
    lane: WeakLane,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Reverse<Entry>>,
    order: u64,
    running: bool,
    /// When to look for a stalled pool, if a push asked.
    pool_check: Option<Instant>,
    /// When to hand freed memory back, if a connection closed since.
    trim: Option<Instant>,
}

struct Timers {
    state: Mutex<State>,
    changed: Condvar,
}

fn timers() -> &'static Timers {
    static TIMERS: OnceLock<Timers> = OnceLock::new();
    TIMERS.get_or_init(|| Timers {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    })
}

/// Whether the timer thread is alive now.
pub fn running() -> bool {
    timers()
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .running
}

/// Notifies `lane` at `at` (if it still exists then).
pub fn notify_at(at: Instant, lane: WeakLane) {
    schedule(|state| {
        state.order += 1;
        let order = state.order;
        state.heap.push(Reverse(Entry { at, order, lane }));
        true
    });
}

/// A push found every pool thread busy: look for a stall in `STALL`
/// (`pool::on_starved` calls this).
pub fn watch_pools() {
    schedule(|state| {
        let unset = state.pool_check.is_none();
        if unset {
            state.pool_check = Some(Instant::now() + STALL);
        }
        unset
    });
}

/// A connection closed: its memory goes back to the system within
/// `TRIM_DELAY`, with that of every other closed meanwhile.
pub fn trim_soon() {
    trim_at(Instant::now() + TRIM_DELAY);
}

/// The last database closed: its memory goes back now (and the timer
/// thread leaves soon after, rather than wait for the delay).
pub fn trim_now() {
    trim_at(Instant::now());
}

fn trim_at(at: Instant) {
    schedule(|state| {
        let later = state.trim.is_none_or(|due| due > at);
        if later {
            state.trim = Some(at);
        }
        later
    });
}

/// Changes the timer's state; if `change` says it set a deadline, the
/// thread (started if need be) hears of it.
fn schedule(change: impl FnOnce(&mut State) -> bool) {
    let timers = timers();
    let mut state = timers.state.lock().unwrap_or_else(|e| e.into_inner());
    if !change(&mut state) {
        return;
    }
    start(&mut state);
    drop(state);
    timers.changed.notify_one();
}

fn start(state: &mut State) {
    if !state.running {
        let started = thread::Builder::new()
            .name("offloop-timer".into())
            .spawn(serve);
        // Without a thread the deadline passes unheard: the lane runs at
        // its next job instead (and a stalled pool at its next free thread).
        state.running = started.is_ok();
    }
}

/// The last database closed (its writer, `closing`, is finishing): the
/// deadlines of that lane and of lanes that finished are dropped (all of
/// them, unless a database opened meanwhile), and with none left the
/// thread leaves soon.
pub fn clear(closing: &Lane) {
    let timers = timers();
    let mut state = timers.state.lock().unwrap_or_else(|e| e.into_inner());
    if pool::databases_open() == 0 {
        // Every lane is gone or going: another database's writer may still
        // be returning from its last run, live for a moment more.
        state.heap.clear();
    } else {
        state
            .heap
            .retain(|Reverse(entry)| entry.lane.is_live() && !entry.lane.is(closing));
    }
    drop(state);
    timers.changed.notify_all();
}

fn serve() {
    let timers = timers();
    let lock = || timers.state.lock().unwrap_or_else(|e| e.into_inner());
    let mut state = lock();
    loop {
        let now = Instant::now();
        if state.pool_check.is_some_and(|at| at <= now) {
            state.pool_check = None;
            drop(state);
            let again = pool::rescue_stalled();
            state = lock();
            if again && state.pool_check.is_none() {
                state.pool_check = Some(Instant::now() + STALL);
            }
            continue;
        }
        if state.trim.is_some_and(|at| at <= now) {
            state.trim = None;
            drop(state);
            release_free_memory();
            state = lock();
            continue;
        }
        if state
            .heap
            .peek()
            .is_some_and(|Reverse(entry)| entry.at <= now)
        {
            let Some(Reverse(entry)) = state.heap.pop() else {
                continue;
            };
            drop(state);
            entry.lane.notify();
            state = lock();
            continue;
        }
        let deadline = state.heap.peek().map(|Reverse(entry)| entry.at);
        match deadline
            .into_iter()
            .chain(state.pool_check)
            .chain(state.trim)
            .min()
        {
            None => {
                let (next, waited) = timers
                    .changed
                    .wait_timeout(state, LINGER)
                    .unwrap_or_else(|e| e.into_inner());
                state = next;
                if waited.timed_out()
                    && state.heap.is_empty()
                    && state.pool_check.is_none()
                    && state.trim.is_none()
                {
                    state.running = false;
                    return;
                }
            }
            Some(at) => {
                state = timers
                    .changed
                    .wait_timeout(state, at - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}
