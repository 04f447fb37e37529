//! The writer thread: owns the one read-write connection and runs its queue
//! in arrival order, parked (see `wake`) while it is empty. Shutdown is the
//! queue's senders all dropping. If the loop itself dies, the database
//! fails closed (see `failure`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::connection::open_writer;
use crate::executor::Executor;
use crate::failure::{writer_died, Failure};
use crate::faults::{self, Site};
use crate::job::Job;
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::CheckpointWrites;
use crate::role::Role;
use crate::schemas::Schemas;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::wake::recv_parked;
use crate::wal::{Nudge, WalControl};
use crate::worker::{panic_detail, run_job_then};
use crate::writer_wal::{RequestedCheckpoints, WriterWal};

pub struct WriterThread {
    pub settings: Arc<Settings>,
    pub queue: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub latch: Arc<OpenLatch>,
    pub counters: Arc<RoleCounters>,
    /// The connection's schemas, refreshed after every job.
    pub schemas: Arc<Schemas>,
    /// Present when a checkpointer thread runs.
    pub wal: Option<(Nudge, Arc<WalControl>)>,
    /// True while the connection is inside a transaction (`BEGIN` or
    /// `SAVEPOINT` through `exec`): reads must come here to see its writes.
    pub in_transaction: Arc<AtomicBool>,
    /// Set when this thread dies: the database then refuses every call.
    pub failure: Arc<Failure>,
}

impl WriterThread {
    pub fn run(self) {
        let opened = match &self.settings.before_open {
            Some(before) => (before.0)().and_then(|()| open_writer(&self.settings)),
            None => open_writer(&self.settings),
        };
        // The observer may refuse commits (a replica's writer that lost its
        // lease): SQLite then rolls the commit back.
        let observer = self.settings.observer.clone();
        let opened = opened.and_then(|(mut conn, settings)| {
            conn.commit_hook(Some(move || observer.refuses_commits()))?;
            Ok((conn, settings))
        });
        let mut conn = match opened {
            Ok((conn, settings)) => {
                self.latch.record(settings);
                conn
            }
            Err(error) => {
                self.gate.open(Err(error.clone()));
                self.latch.arrive(Err(error.clone()));
                while let Some(job) = recv_parked(&self.queue) {
                    job.fail(error.clone());
                }
                return;
            }
        };
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_string);
        if let Some(path) = &path {
            self.settings.observer.opened(path);
        }
        // SAFETY: the handle is live and used on this thread only.
        self.schemas.refresh(unsafe { conn.handle() });
        self.gate.open(Ok(()));
        self.latch.arrive(Ok(()));
        drop(self.latch);
        let control = self.wal.as_ref().map(|(_, control)| control.clone());
        let mut wal = match self.wal {
            Some((nudge, control)) => WriterWal::install(
                &mut conn,
                nudge,
                control,
                &self.settings.checkpoint,
                self.settings.busy_timeout,
                self.settings.observer.clone(),
            )
            .ok(),
            None => None,
        };
        let mut executor = Executor::new(
            conn,
            Role::Writer,
            self.settings.registrations.clone(),
            self.settings.changes.clone(),
        )
        .with_checkpoints(RequestedCheckpoints {
            observer: self.settings.observer.clone(),
            busy_timeout: self.settings.busy_timeout,
            wal: control,
        })
        .following(self.settings.follower);
        // Each job runs under its own catch_unwind; this one catches a panic
        // that escapes them (in the loop itself), which leaves the
        // connection in an unknown state.
        let mut row_hook = false;
        let served = catch_unwind(AssertUnwindSafe(|| {
            while let Some(job) = recv_parked(&self.queue) {
                faults::panic_point(Site::Writer);
                self.settings
                    .row_changes
                    .sync_hook(executor.connection_mut(), &mut row_hook);
                // An open statement keeps the connection inside a read of its
                // own: the cursor would mix this job's writes into the rows it
                // has yet to return, and SQLite documents that an implicit
                // transaction commits only when the last active statement ends.
                if job.cursor().is_none() && executor.has_live_cursors() {
                    executor.park_cursors();
                    self.counters.record_buffered();
                }
                if let Some(wal) = &mut wal {
                    wal.before_job(executor.connection_mut());
                }
                // Published before the completion, so a read issued after a
                // BEGIN (or COMMIT) resolved is routed by the new state.
                run_job_then(&mut executor, job, &self.counters, |executor| {
                    self.counters.record_open_cursors(executor.open_cursors());
                    let open = !executor.connection().is_autocommit();
                    self.in_transaction.store(open, Ordering::Release);
                    // SAFETY: the handle is live and used on this thread only.
                    self.schemas
                        .refresh(unsafe { executor.connection().handle() });
                });
                if let Some(wal) = &mut wal {
                    wal.after_job(executor.connection(), !executor.has_live_cursors());
                }
            }
        }));
        match served {
            Ok(()) => {
                executor.finish();
                // Closing the last connection checkpoints the WAL and
                // deletes it, if that connection can write: the readers,
                // the checkpointer and any backup close theirs first.
                self.settings.close_order.wait_for_others();
                // Nothing commits after the writer, so the observer
                // captures the last frames now, before the connection
                // closes.
                let permit = self
                    .settings
                    .observer
                    .before_checkpoint(CheckpointWrites::Excluded);
                drop(executor);
                drop(permit);
            }
            Err(panic) => {
                // Fail closed: the database refuses everything from now on,
                // and the connection closes (SQLite rolls back whatever it
                // had open). The thread stays to refuse what is still
                // queued, until the database is closed.
                let error = writer_died(&panic_detail(&*panic));
                self.failure.fail(error.clone());
                self.in_transaction.store(false, Ordering::Release);
                drop(executor);
                while let Some(job) = recv_parked(&self.queue) {
                    job.fail(error.clone());
                }
            }
        }
    }
}
