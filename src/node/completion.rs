//! The completion queue: SQLite threads push finished jobs onto the queue of
//! the JS environment that asked for them, and the push that finds the
//! queue disarmed fires the environment's `Waker`, so a burst of
//! completions costs one wake-up of the event loop. The queue is a
//! lock-free channel: a SQLite thread pushing never waits for the JS thread
//! taking a batch, nor for another SQLite thread, and nothing holds a lock
//! across a wake-up.
//!
//! A `Reply` is the one way into the queue: each job's reply arrives exactly
//! once, even if the engine drops the job's callback without calling it, so
//! the JS thread can count the replies it still waits for (see `drain`).
//! This file knows nothing of JS values.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};
use offloop_engine as engine;

use super::protocol::flag;
use super::waker::Waker;

/// One finished job, waiting for the JS thread.
pub struct Completion {
    pub id: f64,
    pub flags: u32,
    pub result: engine::Result<engine::Outcome>,
    /// Where and when it ran, for a call flagged `TIMED` that ran.
    pub timing: Option<Box<CallTiming>>,
}

/// The lane that ran a call (its connection: `offloop-writer`,
/// `offloop-reader-N`; whichever pool thread ran it), its wait in the queue
/// and its run.
pub struct CallTiming {
    pub thread: String,
    pub wait_ms: f64,
    pub run_ms: f64,
}

impl CallTiming {
    /// The job this thread is completing now, if it ran one.
    fn of_current_job() -> Option<Box<CallTiming>> {
        let job = engine::current_job()?;
        Some(Box::new(CallTiming {
            thread: job.role.lane_name(),
            wait_ms: job.waited.as_secs_f64() * 1000.0,
            run_ms: job.started.elapsed().as_secs_f64() * 1000.0,
        }))
    }
}

impl Completion {
    /// Whether this is a job's one reply, rather than a report on the way
    /// (`CompletionQueue::report`).
    pub fn is_reply(&self) -> bool {
        !matches!(self.result, Ok(engine::Outcome::Progress { .. }))
    }

    /// The row values of a ROWS record it carries (what the sweeper may
    /// free).
    pub fn values(&self) -> usize {
        match &self.result {
            Ok(engine::Outcome::Rows(set)) => set.values.len(),
            _ => 0,
        }
    }

    /// About how much work turning this completion into JS values and
    /// settling its promise costs the JS thread, in units of one value's
    /// conversion: a fixed share for the call (its promise, its settling)
    /// plus one per row (the row object) and one per value.
    pub fn weight(&self) -> usize {
        CALL_WEIGHT
            + match &self.result {
                Ok(outcome) => outcome_weight(outcome),
                Err(_) => 0,
            }
    }
}

/// A call's own cost on the JS thread in value units: a `get()` of four
/// columns costs the JS thread about 1.1 us (docs/cores.md), of which each
/// value takes about 25 ns.
const CALL_WEIGHT: usize = 32;

/// How much of the JS thread one drain may take, in the units of
/// `Completion::weight`: at most about a millisecond of work, set when a
/// value cost the JS thread roughly 0.1 us; at today's costs (a value
/// about 25 ns, a row object about twice that) a quarter of one. A drain
/// takes whole completions until it reaches this, and leaves the rest for
/// the next turn of the event loop, so timers and I/O run between slices.
pub const SLICE_WEIGHT: usize = 8192;

fn outcome_weight(outcome: &engine::Outcome) -> usize {
    use engine::Outcome;
    let rows = |set: &engine::RowSet| set.values.len() + set.row_count();
    match outcome {
        Outcome::Rows(set)
        | Outcome::Chunk { rows: set, .. }
        | Outcome::Query { rows: set, .. } => rows(set),
        Outcome::Batch { results, .. } => results.iter().map(outcome_weight).sum(),
        _ => 0,
    }
}

pub struct CompletionQueue {
    sender: Sender<Completion>,
    receiver: Receiver<Completion>,
    /// Set by the push that fires the waker, cleared by the JS thread just
    /// before it takes a batch: pushes in between find it set and leave the
    /// wake-up to that one.
    armed: AtomicBool,
    pub(super) waker: Waker,
}

impl CompletionQueue {
    pub fn new(waker: Waker) -> Self {
        let (sender, receiver) = unbounded();
        CompletionQueue {
            sender,
            receiver,
            armed: AtomicBool::new(false),
            waker,
        }
    }

    /// Any thread.
    fn push(&self, completion: Completion) {
        // The receiver lives in this same queue, so the send cannot fail.
        let _ = self.sender.send(completion);
        // After the send: either this swap finds the flag clear and fires,
        // or the flag was set by a push the JS thread has not taken yet, and
        // its take (which clears the flag first) sees this completion too.
        if !self.armed.swap(true, Ordering::SeqCst) {
            self.waker.fire();
        }
    }

    /// Queues a report that is not a job's reply (a backup's progress): the
    /// call it names stays pending, and `drain` does not count it as a
    /// reply. Any thread.
    pub fn report(&self, completion: Completion) {
        self.push(completion);
    }

    /// Whether no completion is queued. Any thread.
    pub fn is_empty(&self) -> bool {
        self.receiver.is_empty()
    }

    /// Takes the completions queued so far, up to `budget` of work (see
    /// `Completion::weight`), and at least one. JS thread.
    pub fn take(&self, budget: usize) -> Vec<Completion> {
        self.armed.store(false, Ordering::SeqCst);
        // At most as many as are queued now: a push after this fires again,
        // and a drain that never ends while threads keep pushing would
        // starve the event loop.
        let queued = self.receiver.len();
        let mut batch = Vec::with_capacity(queued);
        let mut weight = 0;
        for completion in self.receiver.try_iter().take(queued) {
            weight += completion.weight();
            batch.push(completion);
            if weight >= budget {
                break;
            }
        }
        batch
    }

    /// Asks for another drain of what a sliced one left queued: the waker
    /// fires unless a push since the last `take` already fired it. The
    /// drain then runs on the loop's next turn, after the timers and I/O
    /// that were waiting. JS thread.
    pub fn rearm(&self) {
        if !self.receiver.is_empty() && !self.armed.swap(true, Ordering::SeqCst) {
            self.waker.fire();
        }
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
        let timing = if self.flags & flag::TIMED != 0 {
            CallTiming::of_current_job()
        } else {
            None
        };
        self.queue.push(Completion {
            id: self.id,
            flags: self.flags,
            result,
            timing,
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
                timing: None,
            });
        }
    }
}
