//! `Pace`: whether a thread about to wait for work (a job, a reply) spins
//! for a few microseconds first, learnt from how its recent waits went.
//! A thread whose waits are short spins through the next one and takes the
//! work without being woken, which on a VM whose idle vCPUs halt saves a
//! wake-up of tens of microseconds. A thread whose last wait was long does
//! not spin, so an idle database spins never. A spin that finds nothing
//! makes the thread skip spinning for its next 1, 3, 7, ... waits (doubling
//! up to 1023): where spins keep missing (work that comes just too slowly,
//! or a machine whose CPUs are all taken, where a spinning thread holds a
//! CPU the thread it waits for needs) they soon cost next to nothing.
//!
//! Plain state and a clock; it owns no thread and sleeps never.

use std::hint;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// Looks between clock reads: a clock read costs about as much as a few
/// dozen looks at a queue.
const LOOKS: u32 = 32;

/// Consecutive misses after which the skip stops doubling (1023 waits).
const MAX_MISSES: u32 = 10;

#[derive(Clone, Copy)]
pub struct Pace {
    /// Whether the last measured wait was short.
    short: bool,
    /// Spins in a row that found nothing.
    misses: u32,
    /// Waits left to go without spinning.
    skip: u32,
}

/// Spinning needs a CPU other than the one the thread it waits for runs
/// on: a process confined to one CPU (`taskset -c 0`) never spins.
fn spinning_helps() -> bool {
    cores() > 1
}

/// The CPUs this process may run on, read once: the standard library reads
/// the cgroup's files each time it is asked, a dozen system calls.
pub fn cores() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Default for Pace {
    fn default() -> Self {
        Pace::new()
    }
}

impl Pace {
    /// A thread that has not waited yet: it does not spin.
    pub const fn new() -> Pace {
        Pace {
            short: false,
            misses: 0,
            skip: 0,
        }
    }

    /// Starts a wait for work: spins for up to `limit` while `ready` says
    /// there is none, if spinning is worth it now. Returns whether the work
    /// came, and whether the wait is to be measured (`waited`): not after a
    /// spin that found nothing, which taught what there was to learn.
    pub fn spin(&mut self, limit: Duration, ready: impl Fn() -> bool) -> (bool, bool) {
        if !self.short || !spinning_helps() {
            return (false, true);
        }
        if self.skip > 0 {
            self.skip -= 1;
            return (false, true);
        }
        let started = Instant::now();
        loop {
            for _ in 0..LOOKS {
                if ready() {
                    self.misses = 0;
                    return (true, true);
                }
                hint::spin_loop();
            }
            if started.elapsed() >= limit {
                self.misses = (self.misses + 1).min(MAX_MISSES);
                self.skip = (1 << self.misses) - 1;
                return (false, false);
            }
        }
    }

    /// A measured wait ended after `waited`: short if under `short`.
    pub fn waited(&mut self, waited: Duration, short: Duration) {
        self.short = waited < short;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_micros(50);
    const SHORT: Duration = Duration::from_micros(100);

    #[test]
    fn a_thread_spins_only_after_a_short_wait() {
        if !spinning_helps() {
            return;
        }
        let mut pace = Pace::new();
        assert_eq!(
            pace.spin(LIMIT, || true),
            (false, true),
            "no wait measured yet"
        );
        pace.waited(Duration::from_millis(5), SHORT);
        assert_eq!(
            pace.spin(LIMIT, || true),
            (false, true),
            "after a long wait"
        );
        pace.waited(Duration::from_micros(20), SHORT);
        assert_eq!(
            pace.spin(LIMIT, || true),
            (true, true),
            "after a short wait"
        );
    }

    #[test]
    fn misses_in_a_row_skip_ever_more_waits_until_a_spin_finds_work() {
        if !spinning_helps() {
            return;
        }
        let mut pace = Pace::new();
        pace.waited(Duration::from_micros(20), SHORT);
        let mut skipped = Vec::new();
        for _ in 0..4 {
            assert_eq!(
                pace.spin(LIMIT, || false),
                (false, false),
                "a spin that missed"
            );
            let mut n = 0;
            while pace.skip > 0 {
                assert_eq!(pace.spin(LIMIT, || true), (false, true), "a skipped wait");
                n += 1;
            }
            skipped.push(n);
        }
        assert_eq!(skipped, vec![1, 3, 7, 15]);
        assert_eq!(
            pace.spin(LIMIT, || true),
            (true, true),
            "a spin that found work"
        );
        assert_eq!(pace.spin(LIMIT, || false), (false, false));
        assert_eq!(pace.skip, 1, "the doubling starts again");
    }
}
