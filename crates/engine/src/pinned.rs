//! Pinned sessions: a write transaction on the writer, or a read snapshot
//! on one reader. The thread that takes a `Request::Pinned` runs BEGIN and
//! then serves only the session's own queue, in order, until COMMIT or
//! ROLLBACK arrives, the caller drops the session, or nothing arrives for
//! the idle timeout. Other callers' jobs wait in their queues meanwhile; on
//! the writer that is what keeps two callers' writes from interleaving.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::error::{Error, Result};
use crate::job::{complete, Done, Job, Outcome, Request};
use crate::session::Session;
use crate::stats::RoleCounters;
use crate::worker::run_job;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionMode {
    Deferred,
    Immediate,
    Exclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinKind {
    /// A write transaction, on the writer.
    Write(TransactionMode),
    /// One snapshot for several reads, on a reader (the writer when there
    /// are none).
    Read,
}

/// Why a session ended before its caller ended it. Senders check it under
/// the lock, and the serving thread sets it and drains the queue under the
/// same lock, so no job is ever left behind in a dead session's queue.
#[derive(Default)]
struct EndState {
    ended: Mutex<Option<Error>>,
}

/// The request that pins a thread.
pub struct Pinned {
    kind: PinKind,
    jobs: Receiver<Job>,
    idle: Duration,
    state: Arc<EndState>,
}

impl fmt::Debug for Pinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pinned").field("kind", &self.kind).finish()
    }
}

impl Pinned {
    pub fn kind(&self) -> PinKind {
        self.kind
    }
}

/// The caller's side of a session.
pub struct PinnedSession {
    jobs: Sender<Job>,
    state: Arc<EndState>,
    /// The pinning request, until it is sent. A read snapshot sends it with
    /// its first statement, so an unused one costs nothing and a used one
    /// no extra round trip.
    start: Option<Pinned>,
    /// The completion of the pinning request, kept until it is sent.
    begun: Option<Done>,
}

impl PinnedSession {
    pub fn new(kind: PinKind, idle: Duration) -> Self {
        let (jobs, rx) = crossbeam_channel::unbounded();
        let state = Arc::new(EndState::default());
        PinnedSession {
            jobs,
            state: state.clone(),
            start: Some(Pinned {
                kind,
                jobs: rx,
                idle,
                state,
            }),
            begun: None,
        }
    }

    pub(crate) fn take_start(&mut self) -> Option<Pinned> {
        self.start.take()
    }

    pub(crate) fn set_begun(&mut self, begun: Done) {
        self.begun = Some(begun);
    }

    /// The pinning request and its completion, if not sent yet.
    pub(crate) fn take_start_with_begun(&mut self) -> Option<(Pinned, Done)> {
        let start = self.start.take()?;
        let begun = self.begun.take().unwrap_or_else(|| Box::new(|_| {}));
        Some((start, begun))
    }

    /// Whether the session has reached a thread (or was never used).
    pub fn is_started(&self) -> bool {
        self.start.is_none()
    }

    /// Queues a job on the session, or fails it at once if the session has
    /// ended.
    pub fn send(&self, job: Job) {
        let ended = self.state.ended.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(error) = ended.as_ref() {
            let error = error.clone();
            drop(ended);
            job.fail(error);
            return;
        }
        // The receiver lives until the serving thread ends the session,
        // which it does under the lock held here.
        let _ = self.jobs.send(job);
    }
}

impl Pinned {
    /// Ends the session early: later sends fail with `error`, and so do the
    /// jobs already queued.
    pub(crate) fn end(&self, error: Error) {
        let mut ended = self.state.ended.lock().unwrap_or_else(|e| e.into_inner());
        if ended.is_none() {
            *ended = Some(error.clone());
        }
        for job in self.jobs.try_iter() {
            job.fail(ended.clone().unwrap_or_else(|| error.clone()));
        }
    }
}

fn begin_sql(kind: PinKind) -> &'static str {
    match kind {
        PinKind::Write(TransactionMode::Deferred) | PinKind::Read => "BEGIN DEFERRED",
        PinKind::Write(TransactionMode::Immediate) => "BEGIN IMMEDIATE",
        PinKind::Write(TransactionMode::Exclusive) => "BEGIN EXCLUSIVE",
    }
}

fn exec(session: &mut Session, sql: &str) -> Result<Outcome> {
    session.execute(Request::Exec(sql.to_string()))
}

/// Serves one pinned session on `session`'s thread, to its end. `done` is
/// the pinning job's completion: it hears whether BEGIN succeeded.
pub fn serve(session: &mut Session, pinned: Pinned, done: Done, counters: &RoleCounters) {
    // Cursors opened from here on belong to the session and end with it;
    // older ones (parked on this thread) outlive it.
    let mark = session.cursor_mark();
    if let Err(error) = exec(session, begin_sql(pinned.kind)) {
        pinned.end(error.clone());
        complete(done, Err(error));
        return;
    }
    complete(done, Ok(Outcome::Done));
    // A read snapshot's statements are judged before they run: nothing in
    // it may write, or end the transaction it reads in.
    let read = matches!(pinned.kind, PinKind::Read);
    session.set_snapshot(read);
    let ending = loop {
        match pinned.jobs.recv_timeout(pinned.idle) {
            Ok(job) => match job.request {
                Request::Commit | Request::Rollback => break Some(job),
                _ => {
                    if matches!(pinned.kind, PinKind::Write(_))
                        && job.cursor().is_none()
                        && session.has_live_cursors()
                    {
                        session.park_cursors();
                    }
                    run_job(session, job, counters);
                }
            },
            Err(RecvTimeoutError::Timeout) => {
                session.set_snapshot(false);
                session.close_cursors_from(mark);
                let _ = exec(session, "ROLLBACK");
                pinned.end(Error::invalid_state(format!(
                    "the transaction was rolled back after {} ms without a statement \
                     (transactionIdleTimeout); did the callback await a call on the \
                     database instead of on the transaction?",
                    pinned.idle.as_millis()
                )));
                return;
            }
            Err(RecvTimeoutError::Disconnected) => break None,
        }
    };
    session.set_snapshot(false);
    session.close_cursors_from(mark);
    // A read snapshot ends with ROLLBACK: it has nothing to commit, and
    // however its callback ended, nothing in it may ever be committed.
    let commit = !read && matches!(&ending, Some(job) if matches!(job.request, Request::Commit));
    let result = if commit {
        exec(session, "COMMIT").inspect_err(|_| {
            // A failed COMMIT (a deferred constraint, a busy lock) leaves
            // the transaction open; end it.
            let _ = exec(session, "ROLLBACK");
        })
    } else {
        exec(session, "ROLLBACK")
    };
    pinned.end(Error::invalid_state("the transaction has ended"));
    if let Some(job) = ending {
        let (_, done) = job.take();
        complete(done, result.map(|_| Outcome::Done));
    }
}
