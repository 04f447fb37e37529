//! A reader thread: one read-only connection serving the shared reader queue,
//! plus a private queue for the cursors it holds open. It sleeps parked
//! (see `wake`) while both are empty. If its loop dies, a fresh connection
//! takes its place on the same queues.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::connection::open_reader;
use crate::executor::Executor;
use crate::failure::Failure;
use crate::faults::{self, Site};
use crate::job::{Job, Request};
use crate::latch::{OpenLatch, WriterGate};
use crate::role::Role;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::wake::{recv_or_idle, recv_parked_timeout, IdleReaders, Taken};
use crate::worker::run_job_then;

/// How long a reader pinned by an open cursor waits on its own queue before
/// checking whether the shared queue is starving: work waits there and
/// every reader is pinned (by cursors, or serving a read snapshot), so no
/// reader would take it until a caller moves. Then it buffers
/// its cursors and helps out, which turns a caller holding more half-read
/// iterators than there are readers from a deadlock into memory use. While
/// any reader is not pinned (busy, descheduled or parked), that reader takes
/// the work in time, and the cursor stays live and streams: the decision
/// depends on what the readers hold, never on how fast they run.
const PINNED_POLL: Duration = Duration::from_millis(20);

/// The most jobs one read transaction serves. It holds its snapshot until
/// the last of them ran, which keeps the checkpointer from passing it; 64
/// one-row reads take well under a millisecond.
const READ_BATCH_MAX: usize = 64;

/// Whether `job` is a plain statement call that can run inside a read
/// transaction shared with others. Cursors (which keep their statement open
/// past the job), read snapshots (which open a transaction of their own) and
/// the rest run alone.
fn shares_snapshot(job: &Job) -> bool {
    matches!(
        job.request,
        Request::Get(_) | Request::All(_) | Request::Query(_) | Request::Run(_)
    )
}

pub struct ReaderThread {
    pub index: usize,
    pub settings: Arc<Settings>,
    pub shared: Receiver<Job>,
    pub private: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub latch: Arc<OpenLatch>,
    pub counters: Arc<RoleCounters>,
    /// Readers pinned by open cursors or a read snapshot (or gone for
    /// good): when it counts every reader, the shared queue has nobody to
    /// serve it.
    pub pinned: Arc<AtomicUsize>,
    /// Set when the writer dies: every job is refused from then on.
    pub failure: Arc<Failure>,
    /// Where this reader says it is parked with nothing to do.
    pub idle: Arc<IdleReaders>,
}

impl ReaderThread {
    pub fn run(self) {
        if let Err(error) = self.gate.wait() {
            // The writer could not open: every job this reader would have
            // run reports why, until the database is closed.
            while let Some(Taken::Private(job) | Taken::Shared(job)) = self.next_idle() {
                job.fail(error.clone());
            }
            return;
        }
        let mut conn = match open_reader(&self.settings, self.index) {
            Ok((conn, settings)) => {
                self.latch.record(settings);
                conn
            }
            Err(error) => {
                self.latch.arrive(Err(error));
                return;
            }
        };
        self.latch.arrive(Ok(()));
        loop {
            let executor = Executor::new(
                conn,
                Role::Reader(self.index),
                self.settings.registrations.clone(),
                self.settings.changes.clone(),
            );
            // Each job runs under its own catch_unwind; this one catches a
            // panic that escapes them (in the loop itself). The executor,
            // its connection and its cursors went down with it; the job it
            // held rejected as it dropped.
            if catch_unwind(AssertUnwindSafe(|| self.serve(executor))).is_ok() {
                return;
            }
            // Replace the dead reader: a fresh connection serves the same
            // queues. The iterators it held reject their next chunk.
            conn = match open_reader(&self.settings, self.index) {
                Ok((conn, _)) => conn,
                Err(error) => {
                    // Other readers take the shared queue; this one's own
                    // jobs (its cursors') report why it is gone. It will
                    // never take a shared job again: counted as pinned.
                    self.pinned.fetch_add(1, Ordering::AcqRel);
                    for job in self.private.iter() {
                        job.fail(error.clone());
                    }
                    return;
                }
            };
        }
    }

    /// Serves the queues on `executor` until the database closes.
    fn serve(&self, mut executor: Executor) {
        // Counts this reader in `pinned` while it holds cursors; let go
        // however serving ends (a panic included).
        let mut pin = Pin {
            pinned: &self.pinned,
            held: false,
        };
        let readers = self.settings.reader_count();
        loop {
            pin.set(executor.has_live_cursors());
            let next = if pin.held {
                // A connection with an open statement keeps its snapshot, and
                // a new query would read that old snapshot: serve only the
                // cursors' own queue while any is open.
                match recv_parked_timeout(&self.private, PINNED_POLL) {
                    Ok(job) => Some(job),
                    Err(RecvTimeoutError::Timeout) => {
                        let stalled = !self.shared.is_empty()
                            && self.pinned.load(Ordering::Acquire) >= readers;
                        if stalled {
                            executor.park_cursors();
                            self.counters.record_buffered();
                        }
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            } else {
                match self.next_idle() {
                    Some(Taken::Private(job) | Taken::Shared(job)) => Some(job),
                    None => None,
                }
            };
            match next {
                Some(job) => {
                    faults::panic_point(Site::Reader);
                    if shares_snapshot(&job) {
                        self.run_batch(&mut executor, job);
                    } else {
                        self.run_one(&mut executor, job);
                    }
                }
                None => break,
            }
        }
        // The database is closing. Queued work still runs (close lets queued
        // work finish); the senders are gone, so this ends when it is empty.
        // First the cursors' own jobs, then, with the cursors gone (they
        // would pin an old snapshot), the shared reads.
        for job in self.private.try_iter() {
            self.run_one(&mut executor, job);
        }
        executor.finish();
        for job in self.shared.iter() {
            self.run_one(&mut executor, job);
        }
        executor.finish();
    }

    /// Runs `first` and the statement jobs queued behind it inside one
    /// read transaction: one pair of WAL read locks, one look at the
    /// WAL index, for the batch instead of for each job.
    ///
    /// Every job of the batch is taken from the queue before the batch's
    /// BEGIN, and BEGIN is deferred, so the snapshot starts after the last
    /// of them was queued: each sees every write that resolved before it
    /// was called. Nothing is taken from the queue while the transaction
    /// is open. A job that fails completes with its own error; the others
    /// run on (if the failure ended the transaction, they run in their own).
    ///
    /// A reader takes its share of the queue, not all of it, so the other
    /// readers (woken for the same burst) run the rest in parallel.
    fn run_batch(&self, executor: &mut Executor, first: Job) {
        let waiting = self.shared.len();
        if waiting == 0 {
            // A lone call: nothing to share a transaction with.
            self.run_one(executor, first);
            return;
        }
        let share = 1 + waiting / self.settings.reader_count().max(1);
        let mut batch = Vec::with_capacity(share.min(READ_BATCH_MAX));
        batch.push(first);
        let mut after = None;
        while batch.len() < share.min(READ_BATCH_MAX) {
            match self.shared.try_recv() {
                Ok(job) => {
                    if shares_snapshot(&job) {
                        batch.push(job);
                    } else {
                        after = Some(job);
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        let shared = batch.len() > 1 && executor.begin_shared_read().is_ok();
        if shared {
            self.counters.record_shared(batch.len());
        }
        for job in batch {
            self.run_one(executor, job);
        }
        if shared {
            executor.end_shared_read();
        }
        if let Some(job) = after {
            self.run_one(executor, job);
        }
    }

    /// Runs one job, unless the database has failed closed. A read
    /// snapshot's job serves only that snapshot until it ends, which may
    /// wait on its caller: pinned meanwhile, as by a cursor.
    fn run_one(&self, executor: &mut Executor, job: Job) {
        let mut pin = Pin {
            pinned: &self.pinned,
            held: false,
        };
        pin.set(matches!(job.request, Request::Scope(_)));
        match self.failure.error() {
            Some(error) => job.fail(error),
            None => run_job_then(executor, job, &self.counters, |executor| {
                self.counters.record_open_cursors(executor.open_cursors());
            }),
        }
    }

    /// The next job of either queue, parked and marked idle while there is
    /// none.
    fn next_idle(&self) -> Option<Taken<Job>> {
        recv_or_idle(&self.private, &self.shared, &self.idle, self.index)
    }
}

/// A reader's place in `ReaderThread::pinned`, released when it drops.
struct Pin<'a> {
    pinned: &'a AtomicUsize,
    held: bool,
}

impl Pin<'_> {
    fn set(&mut self, held: bool) {
        if held != self.held {
            if held {
                self.pinned.fetch_add(1, Ordering::AcqRel);
            } else {
                self.pinned.fetch_sub(1, Ordering::AcqRel);
            }
            self.held = held;
        }
    }
}

impl Drop for Pin<'_> {
    fn drop(&mut self) {
        self.set(false);
    }
}
