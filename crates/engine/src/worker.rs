//! What every SQLite lane shares: run one job inside `catch_unwind`,
//! record its wait, hand the result to its completion; and serve a scope
//! (a transaction or read snapshot) that a job began, one job per step.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crossbeam_channel::TryRecvError;

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::job::{complete, Done, Job, Outcome, Request};
use crate::pool::{Lane, WeakLane};
use crate::scope::{begin_sql, ScopeKind, ScopeStart};
use crate::stats::RoleCounters;
use crate::timers::notify_at;
use crate::timing;

pub fn run_job(executor: &mut Executor, job: Job, counters: &RoleCounters) {
    if let Request::Scope(_) = &job.request {
        // A scope is begun from a lane's own queue, never inside another.
        job.fail(Error::invalid_state(
            "a transaction cannot begin inside another",
        ));
        return;
    }
    run_job_then(executor, job, counters, None, |_| {});
}

/// `run_job`, calling `settled` with the executor after the job ran and
/// before its completion: what it publishes is seen by every call issued
/// once the job's caller hears back. A `Request::Scope` begins its scope,
/// served from then on by `lane` (see `ActiveScope`), and returns it;
/// `settled` runs only when the scope ends.
pub fn run_job_then(
    executor: &mut Executor,
    job: Job,
    counters: &RoleCounters,
    lane: Option<&Lane>,
    settled: impl FnOnce(&Executor),
) -> Option<ActiveScope> {
    let waited = job.enqueued.elapsed();
    counters.record(waited);
    let token = job.cancel.clone();
    if let Some(token) = &token {
        if !token.start(executor.interrupt_handle()) {
            // Cancelled while it waited: it never runs.
            job.fail(aborted());
            return None;
        }
    }
    let (request, done) = job.take();
    if let Request::Scope(scope) = request {
        let Some(lane) = lane else {
            complete(
                done,
                Err(Error::invalid_state("a transaction cannot begin here")),
            );
            return None;
        };
        let begun = catch_unwind(AssertUnwindSafe(|| {
            ActiveScope::begin(executor, scope, done, lane)
        }));
        return match begun {
            Ok(Some(active)) => Some(active),
            Ok(None) => {
                settled(executor);
                None
            }
            Err(_) => {
                // The scope's queue and completion went down with the
                // panic (dropped jobs report the database closed).
                executor.set_snapshot(false);
                let _ = executor.execute(Request::Exec("ROLLBACK".into()));
                settled(executor);
                None
            }
        };
    }
    if let Some(token) = &token {
        executor.watch(Some(token.clone()));
    }
    timing::started(executor.role(), waited);
    let mut result = catch_unwind(AssertUnwindSafe(|| executor.execute(request)))
        .unwrap_or_else(|panic| Err(panic_error(panic)));
    if let Some(token) = &token {
        executor.watch(None);
        if token.finish() && result.is_err() {
            result = Err(aborted());
        }
    }
    settled(executor);
    // A completion that panics must not take the thread (and the connection
    // every later job needs) with it. It may read this job's timing.
    complete(done, result);
    timing::finished();
    None
}

fn aborted() -> Error {
    Error::Aborted {
        message: "The operation was aborted".into(),
    }
}

pub fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    Error::Panic {
        message: format!("offloop internal error: {}", panic_detail(&*panic)),
    }
}

/// What a panic said, when it said it with a string.
pub fn panic_detail(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

fn exec(executor: &mut Executor, sql: &str) -> Result<Outcome> {
    executor.execute(Request::Exec(sql.to_string()))
}

/// A scope (a transaction or read snapshot) begun on a lane's connection:
/// the lane serves its queue first, job by job, and holds no thread while
/// the queue is empty. A timer notifies the lane when the scope may have
/// been idle too long.
pub struct ActiveScope {
    start: ScopeStart,
    /// Cursors opened from here on belong to the scope and end with it.
    mark: u64,
    /// When the scope's last job arrived (or it began).
    last: Instant,
    /// The deadline a timer will notify the lane at, if one is pending.
    armed: Option<Instant>,
    lane: WeakLane,
}

/// What one step of a scope did.
pub enum ScopeStep {
    /// It ran a job; more may wait.
    Ran,
    /// Its queue is empty: the lane waits for a send or the idle timer.
    Waiting,
    /// It ended (committed, rolled back, timed out, or let go).
    Ended,
}

impl ActiveScope {
    /// Runs BEGIN; `done` is the pinning job's completion and hears
    /// whether it succeeded. `None` when it did not.
    fn begin(
        executor: &mut Executor,
        scope: ScopeStart,
        done: Done,
        lane: &Lane,
    ) -> Option<ActiveScope> {
        let mark = executor.cursor_mark();
        executor.reset_savepoints();
        if let Err(error) = exec(executor, begin_sql(scope.kind)) {
            scope.end(error.clone());
            complete(done, Err(error));
            return None;
        }
        scope.attach(lane.clone());
        complete(done, Ok(Outcome::Done));
        // A read snapshot's statements are judged before they run: nothing
        // in it may write, or end the transaction it reads in.
        executor.set_snapshot(matches!(scope.kind, ScopeKind::Read));
        Some(ActiveScope {
            start: scope,
            mark,
            last: Instant::now(),
            armed: None,
            lane: lane.downgrade(),
        })
    }

    /// Serves the scope's next job, or ends the scope, or arms the idle
    /// timer and says it waits.
    pub fn step(&mut self, executor: &mut Executor, counters: &RoleCounters) -> ScopeStep {
        let stepped = catch_unwind(AssertUnwindSafe(|| self.step_inner(executor, counters)));
        stepped.unwrap_or_else(|panic| {
            executor.set_snapshot(false);
            executor.close_cursors_from(self.mark);
            let _ = exec(executor, "ROLLBACK");
            executor.reset_savepoints();
            self.start.end(panic_error(panic));
            ScopeStep::Ended
        })
    }

    fn step_inner(&mut self, executor: &mut Executor, counters: &RoleCounters) -> ScopeStep {
        match self.start.jobs.try_recv() {
            Ok(job) => {
                self.last = Instant::now();
                match job.request {
                    Request::Commit | Request::Rollback => {
                        self.finish(executor, Some(job));
                        ScopeStep::Ended
                    }
                    _ => {
                        if matches!(self.start.kind, ScopeKind::Write(_))
                            && job.cursor().is_none()
                            && executor.has_live_cursors()
                        {
                            executor.park_cursors();
                        }
                        run_job(executor, job, counters);
                        ScopeStep::Ran
                    }
                }
            }
            Err(TryRecvError::Disconnected) => {
                self.finish(executor, None);
                ScopeStep::Ended
            }
            Err(TryRecvError::Empty) => {
                // No deadline this far away fits an Instant: never idle out.
                let Some(deadline) = self.last.checked_add(self.start.idle) else {
                    return ScopeStep::Waiting;
                };
                let now = Instant::now();
                if now >= deadline {
                    self.time_out(executor);
                    return ScopeStep::Ended;
                }
                if self.armed.is_none_or(|at| at <= now) {
                    // The timer that fired was set before the last job: set
                    // it again for the deadline that now stands.
                    self.armed = Some(deadline);
                    notify_at(deadline, self.lane.clone());
                }
                ScopeStep::Waiting
            }
        }
    }

    fn time_out(&mut self, executor: &mut Executor) {
        executor.set_snapshot(false);
        executor.close_cursors_from(self.mark);
        let _ = exec(executor, "ROLLBACK");
        executor.reset_savepoints();
        self.start.end(Error::invalid_state(format!(
            "the transaction was rolled back after {} ms without a statement \
             (transactionIdleTimeout); did the callback await a call on the \
             database instead of on the transaction?",
            self.start.idle.as_millis()
        )));
    }

    /// Ends the scope with COMMIT or ROLLBACK (`ending`: the job that asked,
    /// `None` when the caller let go).
    fn finish(&mut self, executor: &mut Executor, ending: Option<Job>) {
        executor.set_snapshot(false);
        executor.close_cursors_from(self.mark);
        // A read snapshot ends with ROLLBACK: it has nothing to commit, and
        // however its callback ended, nothing in it may ever be committed.
        let read = matches!(self.start.kind, ScopeKind::Read);
        let commit =
            !read && matches!(&ending, Some(job) if matches!(job.request, Request::Commit));
        let result = if commit {
            exec(executor, "COMMIT").inspect_err(|_| {
                // A failed COMMIT (a deferred constraint, a busy lock) leaves
                // the transaction open; end it.
                let _ = exec(executor, "ROLLBACK");
            })
        } else {
            exec(executor, "ROLLBACK")
        };
        executor.reset_savepoints();
        self.start
            .end(Error::invalid_state("the transaction has ended"));
        if let Some(job) = ending {
            let (_, done) = job.take();
            complete(done, result.map(|_| Outcome::Done));
        }
    }
}
