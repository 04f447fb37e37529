//! The completion queue: SQLite threads push finished jobs onto the queue of
//! the JS environment that asked for them, and the push that finds the queue
//! empty fires the environment's `Signal`, so a burst of completions costs
//! one wake-up of the event loop. The lock over the queue is held only to
//! push or to take the whole batch, never across a wake-up.
//!
//! A `Reply` is the one way into the queue: each job's reply arrives exactly
//! once, even if the engine drops the job's callback without calling it, so
//! the JS thread can count the replies it still waits for (see `drain`).
//! This file knows nothing of JS values.

use std::sync::{Arc, Mutex};

use offloop_engine as engine;

use super::signal::Signal;

/// One finished job, waiting for the JS thread.
pub struct Completion {
    pub id: f64,
    pub flags: u32,
    pub result: engine::Result<engine::Outcome>,
}

pub struct CompletionQueue {
    items: Mutex<Vec<Completion>>,
    pub(super) signal: Signal,
}

impl CompletionQueue {
    pub fn new(signal: Signal) -> Self {
        CompletionQueue {
            items: Mutex::new(Vec::new()),
            signal,
        }
    }

    /// Any thread.
    fn push(&self, completion: Completion) {
        let first = {
            let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
            items.push(completion);
            items.len() == 1
        };
        // Fired after the lock is released: the JS thread it wakes takes
        // that lock first. A take between the push and the fire leaves a
        // fire that finds nothing, which costs one empty callback.
        if first {
            self.signal.fire();
        }
    }

    /// Takes every completion queued so far. JS thread.
    pub fn take(&self) -> Vec<Completion> {
        std::mem::take(&mut *self.items.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Where one job's result goes: call `send` with it. Dropped unsent (the
/// engine lost the job's callback), it sends the database-closed error
/// instead, so the caller hears back either way.
pub struct Reply {
    queue: Arc<CompletionQueue>,
    id: f64,
    flags: u32,
    sent: bool,
}

impl Reply {
    /// JS thread: `drain::expect_reply` must count it.
    pub(super) fn new(queue: Arc<CompletionQueue>, id: f64, flags: u32) -> Reply {
        Reply {
            queue,
            id,
            flags,
            sent: false,
        }
    }

    pub fn send(mut self, result: engine::Result<engine::Outcome>) {
        self.sent = true;
        self.queue.push(Completion {
            id: self.id,
            flags: self.flags,
            result,
        });
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            self.queue.push(Completion {
                id: self.id,
                flags: self.flags,
                result: Err(engine::Error::closed()),
            });
        }
    }
}
