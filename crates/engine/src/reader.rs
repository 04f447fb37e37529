//! A reader lane: one read-only connection serving the shared reader queue,
//! plus a private queue for the cursors it holds open, and a read snapshot's
//! queue while it serves one. It opens its connection at its first job
//! after the writer opened (at once, under `strict_settings`), and again
//! after an idle close. If its run dies, a fresh connection takes its
//! place on the same queues.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::queue::{Receiver, TryRecvError};

use crate::connection::{open_reader, ran_out_of_descriptors};
use crate::doze::{self, Counted, Doze};
use crate::error::Error;
use crate::executor::Executor;
use crate::failure::Failure;
use crate::faults::{self, Site};
use crate::job::{Job, Request};
use crate::lanes::{Departure, Lanes};
use crate::latch::{OpenLatch, WriterGate};
use crate::pool::{Ran, Work};
use crate::role::Role;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::worker::{run_job_then, ActiveScope, ScopeStep};
use crate::writer::RUN_BUDGET;

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

pub struct ReaderLane {
    pub index: usize,
    pub settings: Arc<Settings>,
    pub shared: Receiver<Job>,
    pub private: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub counters: Arc<RoleCounters>,
    /// Readers pinned by open cursors or a read snapshot (or gone for
    /// good): when it counts every reader, the shared queue has nobody to
    /// serve it.
    pub pinned: Arc<AtomicUsize>,
    /// Set when the writer dies: every job is refused from then on.
    pub failure: Arc<Failure>,
    pub lanes: Arc<Lanes>,
    pub state: ReaderState,
    /// Whether this reader counts in `pinned` now.
    pub held: bool,
    /// Its idle close (see `doze.rs`).
    pub doze: Arc<Doze>,
    /// A job taken while looking whether the queues are closed, run first.
    pub next: Option<Job>,
    /// Under `strict_settings`, until the first open: the database's open
    /// waits for this connection too (and reports its settings). Otherwise,
    /// and after that, it opens on demand.
    pub latch: Option<Arc<OpenLatch>>,
    pub _departure: Departure,
}

pub enum ReaderState {
    Unopened,
    Serving(Box<Serving>),
    /// The writer could not open: every job this reader would have run
    /// reports why, until the database is closed.
    Refusing(Error),
}

pub struct Serving {
    executor: Executor,
    _counted: Counted,
    scope: Option<ActiveScope>,
}

impl ReaderLane {
    fn pin(&mut self, held: bool) {
        if held != self.held {
            if held {
                self.pinned.fetch_add(1, Ordering::AcqRel);
            } else {
                self.pinned.fetch_sub(1, Ordering::AcqRel);
            }
            self.held = held;
            self.lanes.set_pinned(self.index, held);
        }
    }

    fn executor(&self, conn: rusqlite::Connection) -> Executor {
        Executor::new(
            conn,
            Role::Reader(self.index),
            self.settings.registrations.clone(),
            self.settings.changes.clone(),
        )
    }

    /// Opens the connection once the writer has opened and there is work
    /// for it (with a latch, at once); `None` until then.
    fn open(&mut self) -> Option<ReaderState> {
        if let Err(error) = self.gate.get()? {
            return Some(ReaderState::Refusing(error));
        }
        let idle = self.next.is_none() && self.private.is_empty() && self.shared.is_empty();
        if self.latch.is_none() && idle {
            return None;
        }
        let lane = self.lanes.readers[self.index].downgrade();
        if !doze::admit(&lane, &self.doze) {
            return None;
        }
        let latch = self.latch.take();
        Some(match open_reader(&self.settings, self.index) {
            Ok((conn, settings)) => {
                // Counted from the open, before anyone hears of it.
                let serving = ReaderState::Serving(Box::new(Serving {
                    executor: self.executor(conn),
                    _counted: Counted::new(),
                    scope: None,
                }));
                self.doze.opened(&lane);
                self.lanes.reader_opened();
                if let Some(latch) = latch {
                    latch.record(settings);
                    latch.arrive(Ok(()));
                }
                serving
            }
            // Out of descriptors while connections idle elsewhere can
            // close: it waits for one, and tries again.
            Err(error) if ran_out_of_descriptors(&error) && doze::make_room(&lane, &self.doze) => {
                self.latch = latch;
                return None;
            }
            Err(error) => {
                if let Some(latch) = latch {
                    latch.arrive(Err(error.clone()));
                }
                // The job that needed the connection hears why (too many
                // open files, say); the next one tries again.
                let job = self.next.take().map_or_else(
                    || self.private.try_recv().or_else(|_| self.shared.try_recv()),
                    Ok,
                );
                if let Ok(job) = job {
                    job.fail(error);
                }
                ReaderState::Unopened
            }
        })
    }

    /// The lane goes idle with its connection open: closes it if it has
    /// been idle long enough (or the process needs the descriptors) and
    /// holds nothing: no cursor, no read snapshot, no user function.
    /// Whether to close it (the caller closes it, then tells `closed`).
    fn doze(&mut self, serving: &Serving) -> bool {
        let lane = self.lanes.readers[self.index].downgrade();
        let keeps = self.held
            || serving.scope.is_some()
            || serving.executor.has_live_cursors()
            || !self.settings.registrations.is_empty();
        if keeps {
            self.doze.kept();
            return false;
        }
        self.doze.settle(&lane)
    }

    /// Runs what is queued, up to the budget; `None` once the shared
    /// queue is empty and closed (the database is closing).
    fn serve(&mut self, serving: &mut Serving) -> Option<Ran> {
        let readers = self.settings.reader_count();
        for _ in 0..RUN_BUDGET {
            if let Some(scope) = &mut serving.scope {
                match scope.step(&mut serving.executor, &self.counters) {
                    ScopeStep::Ran => continue,
                    ScopeStep::Waiting => return Some(self.idle()),
                    ScopeStep::Ended => {
                        serving.scope = None;
                        self.counters
                            .record_open_cursors(serving.executor.open_cursors());
                        continue;
                    }
                }
            }
            let executor = &mut serving.executor;
            self.pin(executor.has_live_cursors());
            let next = if self.held {
                // A connection with an open statement keeps its snapshot,
                // and a new query would read that old snapshot: serve only
                // the cursors' own queue while any is open.
                match self.private.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Disconnected) => {
                        // Closing: the cursors go, then the shared reads run.
                        executor.finish();
                        continue;
                    }
                    Err(TryRecvError::Empty) => {
                        // Work waits and every reader is pinned: buffer the
                        // cursors and help out, which turns a caller holding
                        // more half-read iterators than there are readers
                        // from a deadlock into memory use.
                        let stalled = !self.shared.is_empty()
                            && self.pinned.load(Ordering::Acquire) >= readers;
                        if stalled {
                            executor.park_cursors();
                            self.counters.record_buffered();
                            continue;
                        }
                        return Some(self.idle());
                    }
                }
            } else if let Some(job) = self.next.take() {
                job
            } else {
                match self.private.try_recv() {
                    Ok(job) => job,
                    Err(_) => match self.shared.try_recv() {
                        Ok(job) => job,
                        Err(TryRecvError::Empty) => return Some(Ran::Idle),
                        Err(TryRecvError::Disconnected) => return None,
                    },
                }
            };
            faults::panic_point(Site::Reader);
            self.doze.worked();
            // Busy until the job's reply (`run_one`).
            self.lanes.set_busy(self.index, true);
            serving.scope = if shares_snapshot(&next) {
                self.run_batch(executor, next)
            } else {
                self.run_one(executor, next)
            };
            // (Also for a job that never ran: refused, or cancelled.)
            self.lanes.set_busy(self.index, false);
            if serving.scope.is_some() {
                self.pin(true);
            }
        }
        Some(Ran::More)
    }

    /// Going idle while pinned: if work waits on the shared queue, the
    /// readers that can take it hear of it.
    fn idle(&self) -> Ran {
        if !self.shared.is_empty() {
            self.lanes.wake_unpinned();
        }
        Ran::Idle
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
    /// readers (notified for the same burst) run the rest in parallel.
    fn run_batch(&self, executor: &mut Executor, first: Job) -> Option<ActiveScope> {
        let waiting = self.shared.len();
        if waiting == 0 {
            // A lone call: nothing to share a transaction with.
            return self.run_one(executor, first);
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
        after.and_then(|job| self.run_one(executor, job))
    }

    /// Runs one job, unless the database has failed closed. A read
    /// snapshot's job begins the snapshot, which this reader then serves
    /// until it ends, pinned meanwhile as by a cursor.
    fn run_one(&self, executor: &mut Executor, job: Job) -> Option<ActiveScope> {
        match self.failure.error() {
            Some(error) => {
                job.fail(error);
                None
            }
            None => run_job_then(
                executor,
                job,
                &self.counters,
                Some(&self.lanes.readers[self.index]),
                |executor| {
                    self.counters.record_open_cursors(executor.open_cursors());
                    // Before the reply: the caller who hears it and calls
                    // again at once finds this reader free to take it.
                    self.lanes.set_busy(self.index, false);
                },
            ),
        }
    }
}

// SAFETY: as for `WriterLane`: one thread at a time, behind the lane's
// lock, on a connection in SQLite's multi-thread mode.
unsafe impl Send for ReaderLane {}

impl Work for ReaderLane {
    fn run(&mut self) -> Ran {
        loop {
            match std::mem::replace(&mut self.state, ReaderState::Unopened) {
                ReaderState::Unopened => match self.open() {
                    Some(state) => self.state = state,
                    // Before the writer opened, or nothing to do: unless
                    // the database closed (with this reader closed: done).
                    None if self.gate.get().is_none() => return Ran::Idle,
                    None => match self.closed_or_next() {
                        Ok(()) => return Ran::Finished,
                        Err(Some(job)) => self.next = Some(job),
                        Err(None) => return Ran::Idle,
                    },
                },
                ReaderState::Serving(mut serving) => {
                    let served = catch_unwind(AssertUnwindSafe(|| self.serve(&mut serving)));
                    match served {
                        Ok(Some(Ran::Idle)) => {
                            if self.doze(&serving) {
                                // Closed before the writer hears: its close
                                // must find no other connection open.
                                drop(serving);
                                self.doze.closed();
                                self.lanes.other_closed();
                            } else {
                                self.state = ReaderState::Serving(serving);
                            }
                            return Ran::Idle;
                        }
                        Ok(Some(ran)) => {
                            self.state = ReaderState::Serving(serving);
                            return ran;
                        }
                        Ok(None) => {
                            serving.executor.finish();
                            self.pin(false);
                            self.doze.closed();
                            self.lanes.other_closed();
                            return Ran::Finished;
                        }
                        Err(_) => {
                            // A panic escaped the per-job catch_unwind: the
                            // executor, its connection and its cursors go,
                            // and a fresh connection serves the same
                            // queues. The iterators it held reject their
                            // next chunk.
                            drop(serving);
                            self.pin(false);
                            self.lanes.set_busy(self.index, false);
                            self.doze.closed();
                            self.lanes.other_closed();
                        }
                    }
                }
                ReaderState::Refusing(error) => {
                    let private_closed = fail_all(&self.private, &error);
                    let closed = fail_all(&self.shared, &error) && private_closed;
                    self.state = ReaderState::Refusing(error);
                    return if closed { Ran::Finished } else { Ran::Idle };
                }
            }
        }
    }
}

impl Drop for ReaderLane {
    fn drop(&mut self) {
        self.pin(false);
    }
}

/// Fails every job queued on `queue`; whether it is closed.
fn fail_all(queue: &Receiver<Job>, error: &Error) -> bool {
    loop {
        match queue.try_recv() {
            Ok(job) => job.fail(error.clone()),
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => return true,
        }
    }
}

impl ReaderLane {
    /// With the connection closed and nothing queued: `Ok` if both queues
    /// are closed (the database is closing), else the job that came
    /// meanwhile, if one did.
    fn closed_or_next(&self) -> Result<(), Option<Job>> {
        for queue in [&self.private, &self.shared] {
            match queue.try_recv() {
                Ok(job) => return Err(Some(job)),
                Err(TryRecvError::Empty) => return Err(None),
                Err(TryRecvError::Disconnected) => {}
            }
        }
        Ok(())
    }
}
