//! The timing of the job the calling thread runs now: how long it waited
//! in its queue and when it started. Set by the worker loop around one
//! job's run and completion, so that the job's completion (which runs on
//! the same thread, right after) can report them per call. It knows
//! nothing of queues or roles; a completion outside a run reads `None`.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// One job's wait in its queue and the moment it started to run.
#[derive(Clone, Copy, Debug)]
pub struct JobTiming {
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

/// Marks the start of a job that waited `waited`; `finished` clears it.
pub(crate) fn started(waited: Duration) {
    RUNNING.with(|r| {
        r.set(Some(JobTiming {
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
        started(Duration::from_millis(3));
        let timing = current_job().expect("a job runs");
        assert_eq!(timing.waited, Duration::from_millis(3));
        finished();
        assert!(current_job().is_none());
    }

    #[test]
    fn each_thread_sees_only_its_own_job() {
        started(Duration::from_millis(1));
        let other = std::thread::spawn(|| current_job().is_none()).join();
        finished();
        assert!(other.expect("the thread ran"));
    }
}
