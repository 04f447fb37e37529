//! Scopes: a write transaction on the writer, or a read snapshot on one
//! reader. A scope is a queue of its own: the lane that takes its
//! `Request::Scope` runs BEGIN and then serves only that queue, in order,
//! until COMMIT or ROLLBACK arrives, the caller drops the scope, or nothing
//! arrives for the idle timeout (`worker::ActiveScope`). Between two of its
//! jobs the lane holds no thread: a send notifies it. Other callers' jobs
//! wait in their queues meanwhile; on the writer that is what keeps two
//! callers' writes from interleaving. This file holds the data both sides
//! share and starts nothing.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::queue::{Receiver, Sender};

use crate::error::Error;
use crate::job::{Done, Job};
use crate::pool::Lane;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionMode {
    Deferred,
    Immediate,
    Exclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// A write transaction, on the writer.
    Write(TransactionMode),
    /// One snapshot for several reads, on a reader (the writer when there
    /// are none).
    Read,
}

/// Why a scope ended before its caller ended it, and the lane serving it.
/// Senders check it under the lock, and the serving lane sets it and
/// drains the queue under the same lock, so no job is ever left behind in
/// a dead scope's queue.
#[derive(Default)]
struct EndState {
    ended: Mutex<Ending>,
}

#[derive(Default)]
struct Ending {
    error: Option<Error>,
    /// The lane serving the scope, once one took it: a send notifies it.
    lane: Option<Lane>,
}

/// The request that pins a thread.
pub struct ScopeStart {
    pub(crate) kind: ScopeKind,
    pub(crate) jobs: Receiver<Job>,
    pub(crate) idle: Duration,
    state: Arc<EndState>,
}

impl fmt::Debug for ScopeStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeStart")
            .field("kind", &self.kind)
            .finish()
    }
}

impl ScopeStart {
    pub fn kind(&self) -> ScopeKind {
        self.kind
    }
}

/// The caller's side of a scope.
pub struct Scope {
    /// `None` only while the scope drops.
    jobs: Option<Sender<Job>>,
    state: Arc<EndState>,
    /// The pinning request, until it is sent. A read snapshot sends it with
    /// its first statement, so an unused one costs nothing and a used one
    /// no extra round trip.
    start: Option<ScopeStart>,
    /// The completion of the pinning request, kept until it is sent.
    begun: Option<Done>,
}

impl Scope {
    pub fn new(kind: ScopeKind, idle: Duration) -> Self {
        let (jobs, rx) = crate::queue::unbounded();
        let state = Arc::new(EndState::default());
        Scope {
            jobs: Some(jobs),
            state: state.clone(),
            start: Some(ScopeStart {
                kind,
                jobs: rx,
                idle,
                state,
            }),
            begun: None,
        }
    }

    pub(crate) fn take_start(&mut self) -> Option<ScopeStart> {
        self.start.take()
    }

    pub(crate) fn set_begun(&mut self, begun: Done) {
        self.begun = Some(begun);
    }

    /// The pinning request and its completion, if not sent yet.
    pub(crate) fn take_start_with_begun(&mut self) -> Option<(ScopeStart, Done)> {
        let start = self.start.take()?;
        let begun = self.begun.take().unwrap_or_else(|| Box::new(|_| {}));
        Some((start, begun))
    }

    /// Whether the scope has reached a thread (or was never used).
    pub fn is_started(&self) -> bool {
        self.start.is_none()
    }

    /// Queues a job on the scope, or fails it at once if the scope has
    /// ended.
    pub fn send(&self, job: Job) {
        let ended = self.state.ended.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(error) = ended.error.as_ref() {
            let error = error.clone();
            drop(ended);
            job.fail(error);
            return;
        }
        // The receiver lives until the serving lane ends the scope, which
        // it does under the lock held here.
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
        let lane = ended.lane.clone();
        drop(ended);
        if let Some(lane) = lane {
            lane.notify();
        }
    }
}

impl Drop for Scope {
    /// The caller let go: the serving lane hears it and rolls back.
    fn drop(&mut self) {
        drop(self.jobs.take());
        let lane = self
            .state
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lane
            .clone();
        if let Some(lane) = lane {
            lane.notify();
        }
    }
}

impl ScopeStart {
    /// Ends the scope early: later sends fail with `error`, and so do the
    /// jobs already queued.
    pub(crate) fn end(&self, error: Error) {
        let mut ended = self.state.ended.lock().unwrap_or_else(|e| e.into_inner());
        if ended.error.is_none() {
            ended.error = Some(error.clone());
        }
        let lane = ended.lane.take();
        for job in self.jobs.try_iter() {
            job.fail(ended.error.clone().unwrap_or_else(|| error.clone()));
        }
        drop(ended);
        drop(lane);
    }

    /// `lane` serves the scope from now on: sends notify it. It looks at
    /// the queue after this, so a job sent before is not missed.
    pub(crate) fn attach(&self, lane: Lane) {
        self.state
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lane = Some(lane);
    }
}

pub(crate) fn begin_sql(kind: ScopeKind) -> &'static str {
    match kind {
        ScopeKind::Write(TransactionMode::Deferred) | ScopeKind::Read => "BEGIN DEFERRED",
        ScopeKind::Write(TransactionMode::Immediate) => "BEGIN IMMEDIATE",
        ScopeKind::Write(TransactionMode::Exclusive) => "BEGIN EXCLUSIVE",
    }
}
