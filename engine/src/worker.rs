//! The loop body every SQLite thread shares: run one job inside
//! `catch_unwind`, record its wait, hand the result to its completion.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::Error;
use crate::job::Job;
use crate::session::Session;
use crate::stats::RoleCounters;

pub fn run_job(session: &mut Session, job: Job, counters: &RoleCounters) {
    counters.record(job.enqueued.elapsed());
    let (request, done) = job.take();
    let result = catch_unwind(AssertUnwindSafe(|| session.execute(request)))
        .unwrap_or_else(|panic| Err(panic_error(panic)));
    // A completion that panics must not take the thread (and the connection
    // every later job needs) with it.
    let _ = catch_unwind(AssertUnwindSafe(|| done(result)));
}

pub fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    Error::Panic {
        message: format!("offloop internal error: {detail}"),
    }
}
