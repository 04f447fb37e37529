//! The timing of the job the calling thread runs now: which of its
//! database's connections runs it, how long it waited in its queue and when
//! it started. Set around one job's run and completion, so that the job's
//! completion (which runs on the same pool thread, right after) can report
//! them per call. It knows nothing of queues or lanes; a completion outside
//! a run reads `None`.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::role::Role;

/// One job's connection, its wait in its queue and the moment it started
/// to run.
#[derive(Clone, Copy, Debug)]
pub struct JobTiming {
    pub role: Role,
    pub waited: Duration,
    pub started: Instant,
}

thread_local! {
    static RUNNING: Cell<Option<JobTiming>> = const { Cell::new(None) };
}

/// The job this thread runs now (from its start until its completion
/// returned), if any.
pub fn current_job() -> Option<JobTiming> {
    RUNNING.with(Cell::get)
}

/// Marks the start of a job that waited `waited` and runs on `role`'s
/// connection; `finished` clears it.
pub(crate) fn started(role: Role, waited: Duration) {
    RUNNING.with(|r| {
        r.set(Some(JobTiming {
            role,
            waited,
            started: Instant::now(),
        }))
    });
}

pub(crate) fn finished() {
    RUNNING.with(|r| r.set(None));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_current_from_its_start_until_it_finished() {
        assert!(current_job().is_none());
        started(Role::Reader(2), Duration::from_millis(3));
        let timing = current_job().expect("a job runs");
        assert_eq!(timing.waited, Duration::from_millis(3));
        assert_eq!(timing.role, Role::Reader(2));
        finished();
        assert!(current_job().is_none());
    }

    #[test]
    fn each_thread_sees_only_its_own_job() {
        started(Role::Writer, Duration::from_millis(1));
        let other = std::thread::spawn(|| current_job().is_none()).join();
        finished();
        assert!(other.expect("the thread ran"));
    }
}
