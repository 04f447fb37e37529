//! The writer lane: owns the one read-write connection and runs its queue
//! in arrival order, a scope's queue first while one is open. It opens the
//! connection at its first run, and closes it last of the database's, once
//! the queue's senders are all gone and every other lane finished. If the
//! lane itself dies, the database fails closed (see `failure`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, TryRecvError};

use crate::connection::open_writer;
use crate::error::Error;
use crate::executor::Executor;
use crate::failure::{writer_died, Failure};
use crate::faults::{self, Site};
use crate::job::Job;
use crate::lanes::Lanes;
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::CheckpointWrites;
use crate::pool::{Counted, Ran, Work};
use crate::role::Role;
use crate::schemas::Schemas;
use crate::settings::Settings;
use crate::stats::RoleCounters;
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
    /// Present when a checkpointer runs, until the connection opened.
    wal: Option<(Nudge, Arc<WalControl>)>,
}

enum State {
    Unopened,
    Serving(Box<Serving>),
    /// The connection could not open, or the lane died: every job is
    /// refused with this.
    Refusing(Error),
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
        }
    }

    fn open(&mut self) -> State {
        let c = &self.context;
        let latch = self.latch.take();
        let opened = match &c.settings.before_open {
            Some(before) => (before.0)().and_then(|()| open_writer(&c.settings)),
            None => open_writer(&c.settings),
        };
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
                // Counted from the open, before anyone hears of it.
                (conn, Counted::new())
            }
            Err(error) => {
                c.gate.open(Err(error.clone()));
                if let Some(latch) = latch {
                    latch.arrive(Err(error.clone()));
                }
                c.lanes.writer_opened();
                return State::Refusing(error);
            }
        };
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
        let wal = match self.wal.take() {
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
        State::Serving(Box::new(Serving {
            executor,
            _counted: counted,
            wal,
            row_hook: false,
            scope: None,
        }))
    }
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
            match &mut self.state {
                State::Unopened => self.state = self.open(),
                State::Serving(serving) => {
                    let c = &self.context;
                    match catch_unwind(AssertUnwindSafe(|| c.serve(serving))) {
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
        if let State::Serving(serving) = std::mem::replace(&mut self.state, State::Closed) {
            let Serving {
                mut executor,
                _counted: counted,
                wal,
                ..
            } = *serving;
            executor.finish();
            // Nothing commits after the writer, so the observer captures
            // the last frames now, before the connection closes.
            let permit = self
                .context
                .settings
                .observer
                .before_checkpoint(CheckpointWrites::Excluded);
            drop(wal);
            drop(executor);
            drop(counted);
            drop(permit);
        }
        self.state = State::Closed;
        self.context.lanes.finished();
        Ran::Finished
    }
}
