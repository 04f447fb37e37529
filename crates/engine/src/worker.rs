//! The loop body every SQLite thread shares: run one job inside
//! `catch_unwind`, record its wait, hand the result to its completion.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::Error;
use crate::job::{complete, Job, Request};
use crate::session::Session;
use crate::stats::RoleCounters;

pub fn run_job(session: &mut Session, job: Job, counters: &RoleCounters) {
    run_job_then(session, job, counters, |_| {});
}

/// `run_job`, calling `settled` with the session after the job ran and
/// before its completion: what it publishes is seen by every call issued
/// once the job's caller hears back.
pub fn run_job_then(
    session: &mut Session,
    job: Job,
    counters: &RoleCounters,
    settled: impl FnOnce(&Session),
) {
    counters.record(job.enqueued.elapsed());
    let token = job.cancel.clone();
    if let Some(token) = &token {
        if !token.start(session.interrupt_handle()) {
            // Cancelled while it waited: it never runs.
            job.fail(aborted());
            return;
        }
    }
    let (request, done) = job.take();
    if let Request::Pinned(pinned) = request {
        let served = catch_unwind(AssertUnwindSafe(|| {
            crate::pinned::serve(session, pinned, done, counters)
        }));
        if served.is_err() {
            // The session's queue and completion went down with the panic
            // (dropped jobs report the database closed); the connection may
            // still hold the transaction open, or a read snapshot's mark.
            session.set_snapshot(false);
            let _ = session.execute(Request::Exec("ROLLBACK".into()));
        }
        settled(session);
        return;
    }
    let mut result = catch_unwind(AssertUnwindSafe(|| session.execute(request)))
        .unwrap_or_else(|panic| Err(panic_error(panic)));
    if let Some(token) = &token {
        if token.finish() && result.is_err() {
            result = Err(aborted());
        }
    }
    settled(session);
    // A completion that panics must not take the thread (and the connection
    // every later job needs) with it.
    complete(done, result);
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
