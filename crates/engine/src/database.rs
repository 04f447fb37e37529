//! `Database`: the handle a caller holds. It sets up the database's lanes
//! on the process's pool, routes each job to the writer, the shared reader
//! queue or a reader's private queue, notifies the lane that is to run it,
//! and closes the lanes. It never touches a connection itself, so every
//! method is safe to call from an event loop.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::queue::unbounded;

use crate::backup::{self, BackupRequest, Progress};
use crate::changes::Change;
use crate::checkpointer::{Checkpointer, CheckpointerState};
use crate::error::{Error, Result};
use crate::failure::Failure;
use crate::functions::FunctionDefinition;
use crate::job::{complete, Done, Job, Outcome, Request};
use crate::lanes::{Departure, Lanes};
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::WalObserver;
use crate::pool::{self, Lane};
use crate::queues::{deliver, route_sql, Queues, Target, Wakes};
use crate::reader::{ReaderLane, ReaderState};
use crate::role::Role;
use crate::schemas::Schemas;
use crate::scope::{Scope, ScopeKind};
use crate::settings::Settings;
use crate::settings::SettingsReport;
use crate::sql::{Sql, SqlRegistry};
use crate::stats::{RoleCounters, Stats};
use crate::timers;
use crate::wal::{nudge_channel, WalControl};
use crate::writer::{WriterContext, WriterLane};

/// The writer's queue, held by a thread of offloop's that is not the
/// caller's (see [`Database::writer_handle`]).
pub struct WriterHandle {
    sender: crate::queue::Sender<Job>,
    writer: Lane,
}

impl WriterHandle {
    /// Queues `job` for the writer; a closed database fails it at once.
    pub fn submit(&self, job: Job) {
        match self.sender.send(job) {
            Ok(()) => self.writer.notify(),
            Err(unsent) => unsent.0.fail(Error::closed()),
        }
    }
}

pub struct Database {
    settings: Arc<Settings>,
    sqls: SqlRegistry,
    queues: Mutex<Option<Queues>>,
    lanes: Arc<Lanes>,
    /// Set by the first `close`: a second one completes at once.
    closing: AtomicBool,
    writer_counters: Arc<RoleCounters>,
    reader_counters: Vec<Arc<RoleCounters>>,
    schemas: Arc<Schemas>,
    wal: Arc<WalControl>,
    /// Set by the writer while its connection is inside a transaction.
    writer_in_transaction: Arc<AtomicBool>,
    /// Set if the writer dies: every call is refused from then on.
    failure: Arc<Failure>,
}

impl Database {
    /// Sets up the database's lanes on the process's pool and returns at
    /// once; `opened` is called when the writer's connection is open (every
    /// connection, under `strict_settings`), or with the first error. Jobs
    /// submitted before then wait in their queues. The error: no pool
    /// thread runs and none can start.
    pub fn open(settings: Settings, opened: Done) -> Result<Database> {
        let settings = Arc::new(settings);
        // A pool whose threads all wait (a lock another database of this
        // process holds) asks the timer to look for a stall.
        pool::on_starved(timers::watch_pools);
        let pool = pool::pool(settings.thread_nice);
        pool.ensure_thread()?;
        let reader_count = settings.reader_count();
        let gate = Arc::new(WriterGate::default());
        let checkpointer = settings.runs_checkpointer();
        // Only the writer opens now; readers and the checkpointer open at
        // their first job, so an open costs one connection and an idle
        // database that only writes never opens the others. Under
        // `strict_settings` every connection opens now, so that a setting
        // refused anywhere fails the open.
        let eager = settings.strict_settings;
        let waited = if eager {
            reader_count + usize::from(checkpointer)
        } else {
            0
        };
        let latch = Arc::new(OpenLatch::new(1 + waited, opened));
        let wal = Arc::new(WalControl::default());
        if checkpointer && !eager {
            // It runs from now on, opening its connection at the first
            // nudge or request.
            wal.mark_active();
        }
        let (checkpoint_tx, checkpoint_rx) = unbounded();
        let writer_counters = Arc::new(RoleCounters::default());
        let reader_counters: Vec<_> = (0..reader_count)
            .map(|_| Arc::new(RoleCounters::default()))
            .collect();

        let schemas = Arc::new(Schemas::default());
        let (writer_tx, writer_rx) = unbounded();
        let (readers_tx, readers_rx) = unbounded();
        let (private, private_rx): (Vec<_>, Vec<_>) =
            (0..reader_count).map(|_| unbounded()).unzip();
        let queues = Queues {
            writer: writer_tx,
            readers: (reader_count > 0).then_some(readers_tx),
            private,
            checkpointer: checkpointer.then_some(checkpoint_tx),
        };
        let writer_in_transaction = Arc::new(AtomicBool::new(false));
        let failure = Arc::new(Failure::default());
        let lanes = Arc::new(Lanes::new(
            Lane::new(pool.clone()),
            (0..reader_count).map(|_| Lane::new(pool.clone())).collect(),
            checkpointer.then(|| Lane::new(pool.clone())),
            eager,
        ));
        let nudge = lanes.checkpointer.as_ref().map(|lane| {
            let (nudge, nudges) = nudge_channel(lane.clone());
            lane.start(Box::new(Checkpointer {
                settings: settings.clone(),
                control: wal.clone(),
                nudges,
                requests: checkpoint_rx,
                gate: gate.clone(),
                latch: eager.then(|| latch.clone()),
                lane: lane.downgrade(),
                state: CheckpointerState::Unopened,
                doze: lanes.dozes[reader_count].clone(),
                on_demand: !eager,
                departure: Departure(lanes.clone()),
            }));
            (nudge, wal.clone())
        });
        let pinned = Arc::new(AtomicUsize::new(0));
        for (index, (counters, rx)) in reader_counters.iter().zip(private_rx).enumerate() {
            lanes.readers[index].start(Box::new(ReaderLane {
                index,
                settings: settings.clone(),
                shared: readers_rx.clone(),
                private: rx,
                gate: gate.clone(),
                counters: counters.clone(),
                pinned: pinned.clone(),
                failure: failure.clone(),
                lanes: lanes.clone(),
                state: ReaderState::Unopened,
                held: false,
                doze: lanes.dozes[index].clone(),
                next: None,
                latch: eager.then(|| latch.clone()),
                _departure: Departure(lanes.clone()),
            }));
        }
        lanes.writer.start(Box::new(WriterLane::new(
            WriterContext {
                settings: settings.clone(),
                queue: writer_rx,
                gate,
                counters: writer_counters.clone(),
                schemas: schemas.clone(),
                in_transaction: writer_in_transaction.clone(),
                failure: failure.clone(),
                lanes: lanes.clone(),
            },
            latch,
            nudge,
        )));
        // The writer opens its connection on a pool thread now.
        lanes.writer.notify();

        Ok(Database {
            settings,
            sqls: SqlRegistry::default(),
            queues: Mutex::new(Some(queues)),
            lanes,
            closing: AtomicBool::new(false),
            writer_counters,
            reader_counters,
            schemas,
            wal,
            writer_in_transaction,
            failure,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Defines a user function or aggregate on every connection, those
    /// opened later included; it is in force for every job queued after
    /// this returns.
    pub fn define_function(&self, definition: FunctionDefinition) -> Result<()> {
        self.settings.registrations.define(definition)
    }

    /// Changes every connection (a limit, the defensive flag) before the
    /// next job it runs; in force for every job queued after this returns.
    pub fn change(&self, change: Change) {
        self.settings.changes.push(change)
    }

    /// Installs the WAL observer (the replicator), or removes it with
    /// `None`. It hears every commit from now on and is asked before every
    /// checkpoint.
    pub fn set_observer(&self, observer: Option<Arc<dyn WalObserver>>) {
        self.settings.observer.set(observer);
    }

    /// Copies the database into `request.target_path` on a thread of its
    /// own (see `backup.rs`); `done` hears the page count. Refused when the
    /// database is closed or its writer died.
    pub fn backup(
        &self,
        request: BackupRequest,
        progress: Progress,
        stop: Arc<AtomicBool>,
        done: Done,
    ) {
        if let Some(error) = self.failure.error() {
            return complete(done, Err(error));
        }
        if !self.is_open() {
            return complete(done, Err(Error::closed()));
        }
        backup::start(&self.settings, request, progress, stop, done);
    }

    /// The shared handle for a SQL text, carrying its learned route.
    pub fn sql(&self, text: &str) -> Arc<Sql> {
        self.sqls.get(text)
    }

    /// The absolute path of the file behind schema `name` of the writer's
    /// connection (`"main"`, or an ATTACHed database), `None` for an
    /// in-memory or temporary one, an unknown name, or before the writer
    /// opened. Current as of the last writer job whose caller heard back.
    pub fn location(&self, name: &str) -> Option<String> {
        self.schemas.location(name)
    }

    /// Whether the writer's connection is inside a transaction (one begun
    /// by `BEGIN` in `exec`, or a pinned one); set before the completion
    /// of the job that began or ended it.
    pub fn in_transaction(&self) -> bool {
        self.writer_in_transaction.load(Ordering::Acquire)
    }

    pub fn is_open(&self) -> bool {
        self.lock_queues().is_some()
    }

    fn lock_queues(&self) -> std::sync::MutexGuard<'_, Option<Queues>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A way for another of offloop's threads (a follower's) to queue jobs
    /// for the writer; `None` once the database is closed. The handle holds
    /// the writer's queue open while it lives: drop it before `close`, or
    /// the writer waits for it.
    pub fn writer_handle(&self) -> Option<WriterHandle> {
        let queues = self.lock_queues();
        Some(WriterHandle {
            sender: queues.as_ref()?.writer.clone(),
            writer: self.lanes.writer.clone(),
        })
    }

    /// Queues a request. `done` runs on a SQLite thread with the result, or
    /// at once with `ERR_INVALID_STATE` when the database is closed.
    pub fn submit(&self, request: Request, done: Done) {
        self.submit_job(Job::new(request, done));
    }

    /// `submit` for a job built by the caller (one that can be cancelled).
    pub fn submit_job(&self, job: Job) {
        self.submit_jobs(std::iter::once(job));
    }

    /// Queues several jobs in order, under one lock, then wakes the threads
    /// that are to run them: a reader per job for the shared queue, as long
    /// as some are idle, and the writer or a reader once for its own queue.
    pub fn submit_jobs(&self, jobs: impl IntoIterator<Item = Job>) {
        if let Some(error) = self.failure.error() {
            for job in jobs {
                job.fail(error.clone());
            }
            return;
        }
        let mut wakes = Wakes::default();
        let guard = self.lock_queues();
        let Some(queues) = guard.as_ref() else {
            drop(guard);
            for job in jobs {
                job.fail(Error::closed());
            }
            return;
        };
        for job in jobs {
            let target = self.route_job(queues, &job);
            if let Some(target) = deliver(queues, target, job) {
                wakes.add(target);
            }
        }
        drop(guard);
        wakes.wake(&self.lanes);
    }

    fn route_job(&self, queues: &Queues, job: &Job) -> Target {
        let in_transaction = self.writer_in_transaction.load(Ordering::Acquire);
        let route = |sql: &Sql| route_sql(queues, sql, in_transaction, &self.lanes);
        match &job.request {
            Request::NextChunk { cursor, .. } | Request::CloseCursor(cursor) => match cursor.role {
                Role::Reader(i) if i < queues.private.len() => Target::Private(i),
                // The checkpointer runs no statements, so no cursor names
                // it; the writer answers that such a cursor is unknown.
                Role::Reader(_) | Role::Writer | Role::Checkpointer => Target::Writer,
            },
            Request::Run(call)
            | Request::Get(call)
            | Request::All(call)
            | Request::Query(call)
            | Request::Expand(call)
            | Request::Iterate { call, .. } => route(&call.sql),
            Request::Columns(sql) => route(sql),
            Request::Exec(_)
            | Request::Batch(_)
            | Request::Commit
            | Request::Rollback
            | Request::Nest
            | Request::Unnest(_)
            | Request::LoadExtension { .. }
            | Request::Session(_)
            | Request::ApplyChangeset { .. }
            | Request::Serialize(_)
            | Request::Deserialize { .. }
            | Request::ReadSettings(_)
            | Request::Privileged(_)
            | Request::Promote => Target::Writer,
            Request::Scope(pinned) => match (pinned.kind(), &queues.readers) {
                (ScopeKind::Read, Some(_)) => Target::Shared,
                _ => Target::Writer,
            },
            // With an observer, requested checkpoints run on the writer,
            // where nothing commits during one: a FULL, RESTART or TRUNCATE
            // waits out every reader, the observer's pin included.
            Request::Checkpoint(_) if self.settings.observer.is_set() => Target::Writer,
            Request::Checkpoint(_) | Request::StopCheckpointer => match &queues.checkpointer {
                Some(_) if self.wal.is_active() => Target::Checkpointer,
                _ => Target::Writer,
            },
        }
    }

    /// Reads every connection's settings back, each on its own thread, and
    /// calls `done` once with all of them (`Outcome::Settings`). A
    /// connection busy with a job or held by a transaction answers when it
    /// is free; the checkpointer answers only while it runs.
    pub fn read_settings(&self, done: Done) {
        if let Some(error) = self.failure.error() {
            done(Err(error));
            return;
        }
        let guard = self.lock_queues();
        let Some(queues) = guard.as_ref() else {
            drop(guard);
            done(Err(Error::closed()));
            return;
        };
        let mut targets = vec![(Target::Writer, true)];
        targets.extend((0..queues.private.len()).map(|i| (Target::Private(i), true)));
        if queues.checkpointer.is_some() && self.wal.is_active() {
            // Optional: it may stop before it answers.
            targets.push((Target::Checkpointer, false));
        }
        let gather = Arc::new(SettingsGather {
            state: Mutex::new((targets.len(), Some(done), Ok(SettingsReport::default()))),
        });
        let mut wakes = Wakes::default();
        for (target, required) in targets {
            let gather = gather.clone();
            let request = Request::ReadSettings(self.settings.clone());
            let job = Job::new(
                request,
                Box::new(move |result| gather.arrive(result, required)),
            );
            // A failed send drops the job, which completes as closed.
            if let Some(target) = deliver(queues, target, job) {
                wakes.add(target);
            }
        }
        drop(guard);
        wakes.wake(&self.lanes);
    }

    /// Opens a scope: a write transaction (its BEGIN is queued on
    /// the writer now, and `begun` hears how it went) or a read snapshot
    /// (nothing happens until its first statement; `begun` then hears).
    pub fn begin_scope(&self, kind: ScopeKind, idle: Duration, begun: Done) -> Scope {
        let mut scope = Scope::new(kind, idle);
        match kind {
            ScopeKind::Write(_) => {
                if let Some(start) = scope.take_start() {
                    self.submit(Request::Scope(start), begun);
                }
            }
            ScopeKind::Read => scope.set_begun(begun),
        }
        scope
    }

    /// Queues a job on a scope. A read snapshot's first job goes
    /// into the scope's queue before the scope itself is routed, so the
    /// reader that takes it finds the statement waiting.
    pub fn submit_to(&self, scope: &mut Scope, job: Job) {
        if let Some(error) = self.failure.error() {
            job.fail(error);
            return;
        }
        scope.send(job);
        if let Some((start, begun)) = scope.take_start_with_begun() {
            self.submit(Request::Scope(start), begun);
        }
    }

    /// Stops taking jobs, lets queued ones finish, closes every connection
    /// (the writer's last), then calls `done`. A second call finds nothing
    /// to stop and completes at once. Nothing waits on the caller's thread.
    pub fn close(&self, done: Done) {
        if self.closing.swap(true, Ordering::AcqRel) {
            done(Ok(Outcome::Done));
            return;
        }
        self.lanes.on_closed(done);
        self.stop_taking_jobs();
    }

    /// Drops the queues' senders and notifies every lane, which finds its
    /// queues closed once they are empty, and finishes.
    fn stop_taking_jobs(&self) {
        drop(self.lock_queues().take());
        self.lanes.wake_all();
    }

    pub fn stats(&self) -> Stats {
        let queues = self.lock_queues();
        let writer_queued = queues.as_ref().map_or(0, |q| q.writer.len());
        let readers = self
            .reader_counters
            .iter()
            .enumerate()
            .map(|(i, c)| c.snapshot(queues.as_ref().map_or(0, |q| q.private[i].len())))
            .collect();
        Stats {
            writer: self.writer_counters.snapshot(writer_queued),
            readers,
            reader_queue: queues
                .as_ref()
                .and_then(|q| q.readers.as_ref())
                .map_or(0, |r| r.len()),
            checkpoint: self.wal.snapshot(),
        }
    }
}

/// Collects the connections' answers to `read_settings`: remaining answers,
/// the caller's completion, and the report so far (or the first error).
struct SettingsGather {
    state: Mutex<(usize, Option<Done>, Result<SettingsReport>)>,
}

impl SettingsGather {
    fn arrive(&self, result: Result<Outcome>, required: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (remaining, done, report) = &mut *state;
        match (result, report.as_mut()) {
            (Ok(Outcome::Settings(answer)), Ok(report)) => report.merge(*answer),
            (Ok(_), Ok(_)) => {
                *report = Err(Error::invalid_state("unexpected answer to a settings read"));
            }
            (Err(error), Ok(_)) if required => *report = Err(error),
            _ => {}
        }
        *remaining -= 1;
        if *remaining == 0 {
            let report = std::mem::replace(report, Ok(SettingsReport::default()));
            if let Some(done) = done.take() {
                drop(state);
                done(report.map(|r| Outcome::Settings(Box::new(r))));
            }
        }
    }
}

impl Drop for Database {
    /// Dropping without `close` (a garbage-collected handle): the queues'
    /// senders go, each lane finishes its queue and closes its connection
    /// on its own. Nothing here waits or touches a file.
    fn drop(&mut self) {
        self.stop_taking_jobs();
    }
}
