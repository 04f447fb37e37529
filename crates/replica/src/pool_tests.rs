//! The pool's own rules, with tasks that only count: a lane runs on one
//! thread at a time, a wake-up during a step runs it again, a deadline
//! runs it when due, and an ended lane is joined.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Lane, Next, Task};

#[derive(Default)]
struct Counts {
    inside: AtomicBool,
    overlapped: AtomicBool,
    steps: AtomicUsize,
}

/// Counts its steps, checks none overlaps another, and ends after `last`.
struct Counting {
    counts: Arc<Counts>,
    last: usize,
    then: Option<Duration>,
}

impl Task for Counting {
    fn step(&mut self) -> Next {
        if self.counts.inside.swap(true, Ordering::SeqCst) {
            self.counts.overlapped.store(true, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_micros(200));
        let n = self.counts.steps.fetch_add(1, Ordering::SeqCst) + 1;
        self.counts.inside.store(false, Ordering::SeqCst);
        if n >= self.last {
            return Next::Ended;
        }
        Next::Wait(self.then.map(|d| Instant::now() + d))
    }

    fn fail(&mut self) {}
}

fn start(last: usize, then: Option<Duration>) -> (Arc<Lane>, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let lane = Lane::new();
    let task = Counting {
        counts: counts.clone(),
        last,
        then,
    };
    lane.start(Box::new(task)).unwrap();
    (lane, counts)
}

#[test]
fn a_lane_never_runs_on_two_threads_at_once_and_a_wake_up_during_a_step_is_kept() {
    let (lane, counts) = start(usize::MAX, None);
    let wakers: Vec<_> = (0..4)
        .map(|_| {
            let lane = lane.clone();
            std::thread::spawn(move || {
                for _ in 0..500 {
                    lane.schedule();
                }
            })
        })
        .collect();
    for waker in wakers {
        waker.join().unwrap();
    }
    // The last wake-up came after the step before it started, or during
    // one: either way a step runs after it.
    let after = counts.steps.load(Ordering::SeqCst);
    lane.schedule();
    let deadline = Instant::now() + Duration::from_secs(10);
    while counts.steps.load(Ordering::SeqCst) == after {
        assert!(Instant::now() < deadline, "the last wake-up was lost");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        !counts.overlapped.load(Ordering::SeqCst),
        "two steps overlapped"
    );
}

#[test]
fn a_deadline_runs_the_next_step_when_due_and_an_ended_lane_is_joined() {
    let started = Instant::now();
    let (lane, counts) = start(3, Some(Duration::from_millis(50)));
    lane.join();
    assert_eq!(counts.steps.load(Ordering::SeqCst), 3);
    assert!(started.elapsed() >= Duration::from_millis(100));
}

/// Panics at its first step.
struct Panicking(Arc<AtomicBool>);

impl Task for Panicking {
    fn step(&mut self) -> Next {
        panic!("a step that panics");
    }

    fn fail(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_step_that_panics_ends_its_lane_and_the_pool_goes_on() {
    let failed = Arc::new(AtomicBool::new(false));
    let lane = Lane::new();
    lane.start(Box::new(Panicking(failed.clone()))).unwrap();
    lane.join();
    assert!(failed.load(Ordering::SeqCst), "fail() heard of it");
    let (other, counts) = start(2, Some(Duration::from_millis(1)));
    other.join();
    assert_eq!(counts.steps.load(Ordering::SeqCst), 2);
}
