//! Counters each thread updates as it works, and the snapshot `stats()`
//! returns. Relaxed atomics: the numbers are for people and tests, not for
//! synchronisation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Default, Debug)]
pub struct RoleCounters {
    executed: AtomicU64,
    shared_reads: AtomicU64,
    buffered: AtomicU64,
    open_cursors: AtomicU64,
    wait_total_ns: AtomicU64,
    wait_max_ns: AtomicU64,
}

impl RoleCounters {
    pub fn record(&self, waited: Duration) {
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.executed.fetch_add(1, Ordering::Relaxed);
        self.wait_total_ns.fetch_add(ns, Ordering::Relaxed);
        self.wait_max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Jobs run so far.
    pub fn executed(&self) -> u64 {
        self.executed.load(Ordering::Relaxed)
    }

    /// `jobs` jobs ran inside one read transaction (a reader's batch).
    pub fn record_shared(&self, jobs: usize) {
        self.shared_reads.fetch_add(jobs as u64, Ordering::Relaxed);
    }

    /// The thread read its open cursors to the end into memory to run
    /// other work.
    pub fn record_buffered(&self) {
        self.buffered.fetch_add(1, Ordering::Relaxed);
    }

    /// Published after each job, before its caller hears back.
    pub fn record_open_cursors(&self, open: usize) {
        self.open_cursors.store(open as u64, Ordering::Relaxed);
    }

    pub fn snapshot(&self, queued: usize) -> RoleStats {
        let executed = self.executed.load(Ordering::Relaxed);
        let total = self.wait_total_ns.load(Ordering::Relaxed);
        RoleStats {
            executed,
            shared_reads: self.shared_reads.load(Ordering::Relaxed),
            buffered: self.buffered.load(Ordering::Relaxed),
            open_cursors: self.open_cursors.load(Ordering::Relaxed) as usize,
            queued,
            wait_mean: Duration::from_nanos(total.checked_div(executed).unwrap_or(0)),
            wait_max: Duration::from_nanos(self.wait_max_ns.load(Ordering::Relaxed)),
        }
    }
}

/// One thread's work so far.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleStats {
    /// Jobs this thread has run.
    pub executed: u64,
    /// Of those, jobs that ran inside a read transaction shared with other
    /// jobs (a reader's batch; always 0 on the writer).
    pub shared_reads: u64,
    /// Times this thread read its open cursors to the end into memory to
    /// run other work (a reader: when every reader was pinned by cursors
    /// and work waited; the writer: before any other job).
    pub buffered: u64,
    /// Cursors (half-read iterators) open on this thread's connection, as
    /// of the end of its last job.
    pub open_cursors: usize,
    /// Jobs waiting now in this thread's own queue (for readers: jobs only
    /// this reader can run, such as the next chunk of its open cursor).
    pub queued: usize,
    /// Time from submission until this thread started the job.
    pub wait_mean: Duration,
    pub wait_max: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub writer: RoleStats,
    pub readers: Vec<RoleStats>,
    /// Jobs waiting in the queue every reader takes from.
    pub reader_queue: usize,
    pub checkpoint: crate::wal::CheckpointStats,
}
