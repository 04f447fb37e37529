//! The writer lane: owns the one read-write connection and runs its queue
//! in arrival order, a scope's queue first while one is open. It opens the
//! connection at its first run, and closes it last of the database's, once
//! the queue's senders are all gone and every other lane finished. If the
//! lane itself dies, the database fails closed (see `failure`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::queue::{Receiver, TryRecvError};

use crate::connection::{open_writer, ran_out_of_descriptors};
use crate::doze::{self, Counted, Doze};
use crate::error::Error;
use crate::executor::Executor;
use crate::failure::{writer_died, Failure};
use crate::faults::{self, Site};
use crate::job::Job;
use crate::lanes::Lanes;
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::CheckpointWrites;
use crate::pool::{Ran, Work};
use crate::role::Role;
use crate::schemas::Schemas;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::timers::notify_at;
use crate::wal::{Nudge, WalControl};
use crate::worker::{panic_detail, run_job_then, ActiveScope, ScopeStep};
use crate::writer_wal::{RequestedCheckpoints, WriterWal};

/// The most jobs one run takes before the lane goes to the back of the
/// run queue, so a busy database leaves threads to the others.
pub const RUN_BUDGET: usize = 64;

pub struct WriterContext {
    pub settings: Arc<Settings>,
    pub queue: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub counters: Arc<RoleCounters>,
    /// The connection's schemas, refreshed after every job.
    pub schemas: Arc<Schemas>,
    /// True while the connection is inside a transaction (`BEGIN` or
    /// `SAVEPOINT` through `exec`): reads must come here to see its writes.
    pub in_transaction: Arc<AtomicBool>,
    /// Set when this lane dies: the database then refuses every call.
    pub failure: Arc<Failure>,
    pub lanes: Arc<Lanes>,
}

pub struct WriterLane {
    context: WriterContext,
    state: State,
    /// Until the connection opened.
    latch: Option<Arc<OpenLatch>>,
    /// Present when a checkpointer runs.
    wal: Option<(Nudge, Arc<WalControl>)>,
    /// Its idle close (see `doze.rs`).
    doze: Arc<Doze>,
    /// Why opening again after an idle close failed.
    reopen_error: Option<Error>,
    /// The replica's step before the first open (a restore) ran: a first
    /// open that waits for descriptors does not run it again.
    before_ran: bool,
    /// The job an open after an idle close waits for descriptors with: it
    /// runs first. The writer does not doze meanwhile, so a query routed
    /// now queues behind it.
    held: Option<Job>,
    /// Dozing, the connections the WAL observer still holds, counted: its
    /// rest did not take (another connection of the database held the
    /// WAL), and is tried again (see `retry_rest`).
    unrested: Option<Counted>,
}

enum State {
    Unopened,
    Serving(Box<Serving>),
    /// The connection could not open, or the lane died: every job is
    /// refused with this.
    Refusing(Error),
    /// Closed when idle (see `doze.rs`): the next job opens it again.
    Dozing,
    Closed,
}

struct Serving {
    executor: Executor,
    _counted: Counted,
    wal: Option<WriterWal>,
    row_hook: bool,
    scope: Option<ActiveScope>,
}

impl WriterLane {
    pub fn new(
        context: WriterContext,
        latch: Arc<OpenLatch>,
        wal: Option<(Nudge, Arc<WalControl>)>,
    ) -> WriterLane {
        WriterLane {
            context,
            state: State::Unopened,
            latch: Some(latch),
            wal,
            doze: Arc::default(),
            reopen_error: None,
            before_ran: false,
            held: None,
            unrested: None,
        }
    }

    /// Opens the connection. `may_wait`: when descriptors run out while
    /// other connections can close, the lane waits for them
    /// (`doze::make_room`) and stays as it was: `None`, and the run returns
    /// until it is notified, instead of failing.
    fn open(&mut self, may_wait: bool) -> Option<State> {
        let c = &self.context;
        let latch = self.latch.take();
        let before = match &c.settings.before_open {
            Some(before) if latch.is_some() && !self.before_ran => (before.0)(),
            _ => Ok(()),
        };
        self.before_ran |= before.is_ok();
        let opened = before.and_then(|()| open_writer(&c.settings));
        // The observer may refuse commits (a replica's writer that lost its
        // lease): SQLite then rolls the commit back.
        let observer = c.settings.observer.clone();
        let opened = opened.and_then(|(mut conn, settings)| {
            conn.commit_hook(Some(move || observer.refuses_commits()))?;
            Ok((conn, settings))
        });
        let (mut conn, counted) = match opened {
            Ok((conn, settings)) => {
                if let Some(latch) = &latch {
                    latch.record(settings);
                }
                // Counted from the open, before anyone hears of it, with
                // the connections a replicator keeps for it meanwhile.
                (conn, Counted::many(1 + c.settings.observer.connections()))
            }
            Err(error)
                if may_wait
                    && ran_out_of_descriptors(&error)
                    && doze::make_room(&c.lanes.writer.downgrade(), &self.doze) =>
            {
                self.latch = latch;
                return None;
            }
            Err(error) if latch.is_none() => {
                self.reopen_error = Some(error);
                return Some(State::Dozing);
            }
            Err(error) => {
                c.gate.open(Err(error.clone()));
                if let Some(latch) = latch {
                    latch.arrive(Err(error.clone()));
                }
                c.lanes.writer_opened();
                return Some(State::Refusing(error));
            }
        };
        self.doze.set_costly(c.settings.observer.is_set());
        self.doze.opened(&c.lanes.writer.downgrade());
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_string);
        if let Some(path) = &path {
            c.settings.observer.opened(path);
        }
        // SAFETY: the handle is live and used by this lane only, which runs
        // on one thread at a time.
        c.schemas.refresh(unsafe { conn.handle() });
        c.gate.open(Ok(()));
        if let Some(latch) = latch {
            latch.arrive(Ok(()));
        }
        c.lanes.writer_opened();
        let control = self.wal.as_ref().map(|(_, control)| control.clone());
        let wal = match self.wal.clone() {
            Some((nudge, control)) => WriterWal::install(
                &mut conn,
                nudge,
                control,
                &c.settings.checkpoint,
                c.settings.busy_timeout,
                c.settings.observer.clone(),
            )
            .ok(),
            None => None,
        };
        let executor = Executor::new(
            conn,
            Role::Writer,
            c.settings.registrations.clone(),
            c.settings.changes.clone(),
        )
        .with_checkpoints(RequestedCheckpoints {
            observer: c.settings.observer.clone(),
            busy_timeout: c.settings.busy_timeout,
            wal: control,
        })
        .following(c.settings.follower);
        Some(State::Serving(Box::new(Serving {
            executor,
            _counted: counted,
            wal,
            row_hook: false,
            scope: None,
        })))
    }
}

impl WriterLane {
    /// Whether the lane may go on to open its connection (see
    /// `doze::admit`): at once unless it is closed with work queued and the
    /// process is at its cap on connections.
    fn admitted(&self) -> bool {
        let needs = match self.state {
            State::Unopened => true,
            State::Dozing => self.held.is_some() || !self.context.queue.is_empty(),
            _ => false,
        };
        !needs || doze::admit(&self.context.lanes.writer.downgrade(), &self.doze)
    }

    /// The lane goes idle with its connection open: closes it if it has
    /// been idle long enough (or the process needs the descriptors) and it
    /// holds nothing the user could miss (see `keeps_connection`).
    fn doze(&mut self) {
        let lane = self.context.lanes.writer.downgrade();
        let State::Serving(serving) = &mut self.state else {
            return;
        };
        if !self.doze.settle(&lane) {
            return;
        }
        if keeps_connection(&self.context, serving) {
            self.doze.kept();
            return;
        }
        // A replica with something left to ship: the connection closes
        // once it has shipped, at a later look.
        if !self.context.settings.observer.may_rest() {
            if self.doze.is_evicted() {
                // Only the first hurry since the eviction looks again when
                // shipping is done (see `Doze::hurried`).
                let shipped: Box<dyn FnOnce() + Send> = if self.doze.hurried() {
                    let writer = lane.clone();
                    Box::new(move || writer.notify())
                } else {
                    Box::new(|| {})
                };
                self.context.settings.observer.hurry(shipped);
            }
            self.doze.look_again(&lane);
            return;
        }
        // Its close must be the database's last: the readers and the
        // checkpointer close theirs first (the last of them notifies
        // this lane, see `Lanes::other_closed`).
        if !self.context.lanes.writer_may_close() {
            if self.doze.is_evicted() {
                self.context.lanes.evict_others();
            }
            return;
        }
        // A replicated database's close captures the WAL's last frames,
        // as at `close()`, and its replicator then lets go of its files.
        // Its connections stay counted until it has: the count never dips
        // below what is open.
        let observer = &self.context.settings.observer;
        let observed = observer.is_set();
        let held = observed.then(|| Counted::many(observer.connections()));
        self.close_connection(State::Dozing, observed);
        self.context.lanes.set_writer_dozing(true);
        if observed && !self.context.settings.observer.rested() {
            self.unrested = held;
            self.retry_rest_later();
        }
    }

    /// Dozing, with the observer's rest not taken: tries again once the
    /// database's other connections have closed (the last of them
    /// notifies this lane, see `Lanes::other_closed`), or at the timer.
    fn retry_rest(&mut self) {
        if self.unrested.is_none() || !self.context.lanes.writer_may_close() {
            return;
        }
        if self.context.settings.observer.rested() {
            self.unrested = None;
        } else {
            self.retry_rest_later();
        }
    }

    /// What kept the rest from taking may pass with no connection closing
    /// (a reader's read, a shipping round): the lane looks again after
    /// another `idle_close()`.
    fn retry_rest_later(&self) {
        let lane = self.context.lanes.writer.downgrade();
        notify_at(Instant::now() + doze::idle_close(), lane);
    }

    /// Takes the next job while dozing, no longer dozing from just before
    /// (and dozing again when there is none).
    fn wake_for_job(&self) -> Result<Job, TryRecvError> {
        let lanes = &self.context.lanes;
        lanes.set_writer_dozing(false);
        let job = self.context.queue.try_recv();
        if job.is_err() {
            lanes.set_writer_dozing(true);
        }
        job
    }

    /// At the database's close, with the connection closed when idle: a
    /// reader that opened since may have left the WAL and the `-shm` (a
    /// read-only connection cannot remove them), so the connection opens
    /// to close last and remove them, as SQLite's last close does. A
    /// replicated database's replicator removes them as it stops.
    fn tidy_after_readers(&mut self) {
        let c = &self.context;
        if matches!(self.state, State::Dozing)
            && c.lanes.read_while_dozing()
            && !c.settings.observer.is_set()
        {
            // Never waits (`may_wait` is false): `None` cannot come.
            self.state = self.open(false).unwrap_or(State::Dozing);
        }
    }

    /// Closes the connection, its cursors and statements first; the lane
    /// goes to `next`. With `capture` (the database's last close), the WAL
    /// observer captures the last frames before it closes: nothing commits
    /// after the writer.
    fn close_connection(&mut self, next: State, capture: bool) {
        self.doze.closed();
        if let State::Serving(serving) = std::mem::replace(&mut self.state, next) {
            let Serving {
                mut executor,
                _counted: counted,
                wal,
                ..
            } = *serving;
            executor.finish();
            let permit = capture.then(|| {
                self.context
                    .settings
                    .observer
                    .before_checkpoint(CheckpointWrites::Excluded)
            });
            drop(wal);
            drop(executor);
            drop(counted);
            drop(permit);
        }
    }
}

/// Whether the writer's connection holds something that closing it would
/// lose or that a replica or follower needs: a transaction, a cursor, a
/// session, TEMP objects, an attached database, user functions, a pragma
/// of the connection's own set by a statement, a database that lives in
/// memory, a VFS of its own.
fn keeps_connection(c: &WriterContext, serving: &Serving) -> bool {
    let settings = &c.settings;
    if settings.is_private()
        || settings.follower
        || settings.vfs.is_some()
        || !settings.registrations.is_empty()
        || serving.scope.is_some()
        || serving.executor.has_live_cursors()
        || serving.executor.has_sessions()
        || serving.executor.holds_connection_state()
    {
        return true;
    }
    // TEMP objects and attached databases are seen as they are created
    // (`holds_connection_state`): no statement runs here, where the
    // caller's authorizer would see it.
    !serving.executor.connection().is_autocommit()
}

impl WriterContext {
    /// Published before a job's completion, so a read issued after a BEGIN
    /// (or COMMIT) resolved is routed by the new state.
    fn settle(&self, executor: &Executor) {
        self.counters.record_open_cursors(executor.open_cursors());
        let open = !executor.connection().is_autocommit();
        self.in_transaction.store(open, Ordering::Release);
        // SAFETY: the handle is live and used by this lane only.
        self.schemas
            .refresh(unsafe { executor.connection().handle() });
    }

    /// Runs what is queued, up to the budget; `None` once the queue is
    /// empty and closed.
    fn serve(&self, serving: &mut Serving) -> Option<Ran> {
        for _ in 0..RUN_BUDGET {
            if let Some(scope) = &mut serving.scope {
                match scope.step(&mut serving.executor, &self.counters) {
                    ScopeStep::Ran => continue,
                    ScopeStep::Waiting => return Some(Ran::Idle),
                    ScopeStep::Ended => {
                        serving.scope = None;
                        self.settle(&serving.executor);
                        if let Some(wal) = &mut serving.wal {
                            let idle = !serving.executor.has_live_cursors();
                            wal.after_job(serving.executor.connection(), idle);
                        }
                        continue;
                    }
                }
            }
            let job = match self.queue.try_recv() {
                Ok(job) => job,
                Err(TryRecvError::Empty) => return Some(Ran::Idle),
                Err(TryRecvError::Disconnected) => return None,
            };
            self.run(serving, job);
        }
        Some(Ran::More)
    }

    fn run(&self, serving: &mut Serving, job: Job) {
        faults::panic_point(Site::Writer);
        let executor = &mut serving.executor;
        self.settings
            .row_changes
            .sync_hook(executor.connection_mut(), &mut serving.row_hook);
        // An open statement keeps the connection inside a read of its own:
        // the cursor would mix this job's writes into the rows it has yet
        // to return, and SQLite documents that an implicit transaction
        // commits only when the last active statement ends.
        if job.cursor().is_none() && executor.has_live_cursors() {
            executor.park_cursors();
            self.counters.record_buffered();
        }
        if let Some(wal) = &mut serving.wal {
            wal.before_job(executor.connection_mut());
        }
        let scope = run_job_then(
            executor,
            job,
            &self.counters,
            Some(&self.lanes.writer),
            |executor| self.settle(executor),
        );
        if scope.is_some() {
            // The WAL is looked at again when the scope ends.
            serving.scope = scope;
            return;
        }
        if let Some(wal) = &mut serving.wal {
            wal.after_job(executor.connection(), !executor.has_live_cursors());
        }
    }
}

// SAFETY: the connection, its statements, cursors and sessions are used by
// one thread at a time: the lane's work sits behind the lane's lock and only
// the pool thread running the lane touches it (see `pool::Lane::run`).
// Connections are opened in SQLite's multi-thread mode, where a connection
// and its objects may move between threads as long as no two use them at
// once; nothing in them is tied to the thread that opened them.
unsafe impl Send for WriterLane {}

impl Work for WriterLane {
    fn run(&mut self) -> Ran {
        loop {
            let admitted = self.admitted();
            match &mut self.state {
                State::Unopened | State::Dozing if !admitted => return Ran::Idle,
                State::Unopened => match self.open(true) {
                    Some(state) => self.state = state,
                    None => return Ran::Idle,
                },
                // No longer dozing before a job leaves the queue: a query
                // routed from now on sees a job queued or the writer awake
                // (see `queues::route_sql`).
                State::Dozing => match self.held.take().map_or_else(|| self.wake_for_job(), Ok) {
                    Err(TryRecvError::Disconnected) => break,
                    Err(TryRecvError::Empty) => {
                        self.retry_rest();
                        return Ran::Idle;
                    }
                    // Opens again, then runs the job; if it cannot open
                    // (too many open files, say), the job hears why and
                    // the next one tries again.
                    Ok(job) => match self.open(true) {
                        Some(State::Serving(mut serving)) => {
                            // Counted with the writer's connection now.
                            self.unrested = None;
                            self.context.lanes.writer_reopened();
                            self.context.run(&mut serving, job);
                            self.state = State::Serving(serving);
                        }
                        None => {
                            self.held = Some(job);
                            return Ran::Idle;
                        }
                        Some(state) => {
                            let why = self.reopen_error.take();
                            job.fail(why.unwrap_or_else(Error::closed));
                            self.context.lanes.set_writer_dozing(true);
                            self.state = state;
                        }
                    },
                },
                State::Serving(serving) => {
                    let c = &self.context;
                    let before = c.counters.executed();
                    match catch_unwind(AssertUnwindSafe(|| c.serve(serving))) {
                        Ok(Some(Ran::Idle)) => {
                            if c.counters.executed() != before {
                                self.doze.worked();
                            }
                            self.doze();
                            return Ran::Idle;
                        }
                        Ok(Some(ran)) => return ran,
                        Ok(None) => break,
                        Err(panic) => {
                            // Fail closed: the database refuses everything
                            // from now on, and the connection closes (SQLite
                            // rolls back whatever it had open). The lane
                            // stays to refuse what is still queued, until
                            // the database is closed.
                            let error = writer_died(&panic_detail(&*panic));
                            c.failure.fail(error.clone());
                            c.in_transaction.store(false, Ordering::Release);
                            self.doze.closed();
                            self.state = State::Refusing(error);
                        }
                    }
                }
                State::Refusing(error) => match self.context.queue.try_recv() {
                    Ok(job) => job.fail(error.clone()),
                    Err(TryRecvError::Empty) => return Ran::Idle,
                    Err(TryRecvError::Disconnected) => break,
                },
                State::Closed => return Ran::Finished,
            }
        }
        // The queue is closed and empty. The connection closes last of the
        // database's, if it can write: the last to close checkpoints the
        // WAL and removes it. The readers, the checkpointer and any backup
        // close theirs first; the last of them notifies this lane.
        if !self.context.lanes.others_finished() {
            return Ran::Idle;
        }
        let writer = self.context.lanes.writer.downgrade();
        if !self
            .context
            .settings
            .close_order
            .clear_or_call(move || writer.notify())
        {
            return Ran::Idle;
        }
        self.tidy_after_readers();
        self.close_connection(State::Closed, true);
        self.state = State::Closed;
        // The replication's stop, which follows, closes what it holds.
        self.unrested = None;
        self.context.lanes.finished();
        Ran::Finished
    }
}
