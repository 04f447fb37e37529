//! The loop bodies every SQLite thread shares: run one job inside
//! `catch_unwind`, record its wait, hand the result to its completion; and
//! serve a scope (a transaction or read snapshot) that a job started.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crossbeam_channel::RecvTimeoutError;

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::job::{complete, Done, Job, Outcome, Request};
use crate::scope::{begin_sql, ScopeKind, ScopeStart};
use crate::stats::RoleCounters;
use crate::timing;

pub fn run_job(executor: &mut Executor, job: Job, counters: &RoleCounters) {
    run_job_then(executor, job, counters, |_| {});
}

/// `run_job`, calling `settled` with the executor after the job ran and
/// before its completion: what it publishes is seen by every call issued
/// once the job's caller hears back.
pub fn run_job_then(
    executor: &mut Executor,
    job: Job,
    counters: &RoleCounters,
    settled: impl FnOnce(&Executor),
) {
    let waited = job.enqueued.elapsed();
    counters.record(waited);
    let token = job.cancel.clone();
    if let Some(token) = &token {
        if !token.start(executor.interrupt_handle()) {
            // Cancelled while it waited: it never runs.
            job.fail(aborted());
            return;
        }
    }
    let (request, done) = job.take();
    if let Request::Scope(scope) = request {
        let served = catch_unwind(AssertUnwindSafe(|| {
            serve_scope(executor, scope, done, counters)
        }));
        if served.is_err() {
            // The scope's queue and completion went down with the panic
            // (dropped jobs report the database closed); the connection may
            // still hold the transaction open, or a read snapshot's mark.
            executor.set_snapshot(false);
            let _ = executor.execute(Request::Exec("ROLLBACK".into()));
        }
        settled(executor);
        return;
    }
    if let Some(token) = &token {
        executor.watch(Some(token.clone()));
    }
    timing::started(waited);
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

/// Serves one scope on `executor`'s thread, to its end. `done` is
/// the pinning job's completion: it hears whether BEGIN succeeded.
fn serve_scope(executor: &mut Executor, scope: ScopeStart, done: Done, counters: &RoleCounters) {
    // Cursors opened from here on belong to the scope and end with it;
    // older ones (parked on this thread) outlive it.
    let mark = executor.cursor_mark();
    executor.reset_savepoints();
    if let Err(error) = exec(executor, begin_sql(scope.kind)) {
        scope.end(error.clone());
        complete(done, Err(error));
        return;
    }
    complete(done, Ok(Outcome::Done));
    // A read snapshot's statements are judged before they run: nothing in
    // it may write, or end the transaction it reads in.
    let read = matches!(scope.kind, ScopeKind::Read);
    executor.set_snapshot(read);
    let ending = loop {
        match scope.jobs.recv_timeout(scope.idle) {
            Ok(job) => match job.request {
                Request::Commit | Request::Rollback => break Some(job),
                _ => {
                    if matches!(scope.kind, ScopeKind::Write(_))
                        && job.cursor().is_none()
                        && executor.has_live_cursors()
                    {
                        executor.park_cursors();
                    }
                    run_job(executor, job, counters);
                }
            },
            Err(RecvTimeoutError::Timeout) => {
                executor.set_snapshot(false);
                executor.close_cursors_from(mark);
                let _ = exec(executor, "ROLLBACK");
                scope.end(Error::invalid_state(format!(
                    "the transaction was rolled back after {} ms without a statement \
                     (transactionIdleTimeout); did the callback await a call on the \
                     database instead of on the transaction?",
                    scope.idle.as_millis()
                )));
                return;
            }
            Err(RecvTimeoutError::Disconnected) => break None,
        }
    };
    executor.set_snapshot(false);
    executor.close_cursors_from(mark);
    // A read snapshot ends with ROLLBACK: it has nothing to commit, and
    // however its callback ended, nothing in it may ever be committed.
    let commit = !read && matches!(&ending, Some(job) if matches!(job.request, Request::Commit));
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
    scope.end(Error::invalid_state("the transaction has ended"));
    if let Some(job) = ending {
        let (_, done) = job.take();
        complete(done, result.map(|_| Outcome::Done));
    }
}
