//! `CancelToken`: stops one call, whether it still waits in a queue or is
//! running, without touching any other call.
//!
//! `sqlite3_interrupt` stops whatever its connection is running, so the
//! token only interrupts while its own job runs: the thread marks the job
//! running (with the connection's interrupt handle) and finished under the
//! token's lock, and `cancel` interrupts under the same lock. An interrupt
//! that lands after the job's statement ended but before `finish` leaves
//! SQLite's flag set with no statement active, and SQLite clears it when
//! the next statement starts, so the next job is never hit. The same
//! clearing would drop an interrupt that lands before the job's first
//! statement starts (while it prepares or binds), so while the job runs its
//! connection also checks the token itself (`Executor::watch`).

use std::sync::{Arc, Mutex};

use rusqlite::InterruptHandle;

enum State {
    Queued,
    Running(InterruptHandle),
    Finished,
    Cancelled,
}

/// What `cancel` achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// The call will never run.
    BeforeStart,
    /// The call was interrupted; its completion says how it ended.
    WhileRunning,
    /// The call had finished (or was cancelled before).
    TooLate,
}

pub struct CancelToken {
    state: Mutex<State>,
}

impl CancelToken {
    pub fn new() -> Arc<Self> {
        Arc::new(CancelToken {
            state: Mutex::new(State::Queued),
        })
    }

    /// Cancels the call: a queued one will never run, a running one is
    /// interrupted (its completion then reports the abort, unless it
    /// finished first). Nothing happens once it finished.
    pub fn cancel(&self) -> Cancelled {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Queued => {
                *state = State::Cancelled;
                Cancelled::BeforeStart
            }
            State::Running(handle) => {
                handle.interrupt();
                *state = State::Cancelled;
                Cancelled::WhileRunning
            }
            State::Finished | State::Cancelled => Cancelled::TooLate,
        }
    }

    /// Whether the call runs now: started on a connection, where `cancel`
    /// would interrupt it, and not finished.
    pub fn is_running(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(|e| e.into_inner()),
            State::Running(_)
        )
    }

    pub fn is_cancelled(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(|e| e.into_inner()),
            State::Cancelled
        )
    }

    /// The job starts on a connection; false when it was cancelled first.
    pub(crate) fn start(&self, handle: InterruptHandle) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Queued => {
                *state = State::Running(handle);
                true
            }
            _ => false,
        }
    }

    /// The job's statements are done; from now on `cancel` does nothing.
    /// Returns whether it was cancelled while it ran.
    pub(crate) fn finish(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let cancelled = matches!(*state, State::Cancelled);
        *state = State::Finished;
        cancelled
    }
}
