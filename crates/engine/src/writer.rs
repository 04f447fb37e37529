//! The writer thread: owns the one read-write connection and runs its queue
//! in arrival order. Shutdown is the queue's senders all dropping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_channel::Receiver;

use crate::checkpoint::{Nudge, WalControl};
use crate::connection::open_writer;
use crate::job::{Job, Role};
use crate::latch::{OpenLatch, WriterGate};
use crate::observer::CheckpointWrites;
use crate::session::Session;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::worker::run_job_then;
use crate::writer_wal::WriterWal;

pub struct WriterThread {
    pub settings: Arc<Settings>,
    pub queue: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub latch: Arc<OpenLatch>,
    pub counters: Arc<RoleCounters>,
    pub location: Arc<OnceLock<Option<String>>>,
    /// Present when a checkpointer thread runs.
    pub wal: Option<(Nudge, Arc<WalControl>)>,
    /// True while the connection is inside a transaction (`BEGIN` or
    /// `SAVEPOINT` through `exec`): reads must come here to see its writes.
    pub in_transaction: Arc<AtomicBool>,
}

impl WriterThread {
    pub fn run(self) {
        let mut conn = match open_writer(&self.settings) {
            Ok((conn, settings)) => {
                self.latch.record(settings);
                conn
            }
            Err(error) => {
                self.gate.open(Err(error.clone()));
                self.latch.arrive(Err(error.clone()));
                for job in self.queue.iter() {
                    job.fail(error.clone());
                }
                return;
            }
        };
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_string);
        if let Some(path) = &path {
            self.settings.observer.opened(path);
        }
        let _ = self.location.set(path);
        self.gate.open(Ok(()));
        self.latch.arrive(Ok(()));
        drop(self.latch);
        let mut wal = match self.wal {
            Some((nudge, control)) => WriterWal::install(
                &mut conn,
                nudge,
                control,
                self.settings.checkpoint.backstop_frames,
                self.settings.busy_timeout,
                self.settings.observer.clone(),
            )
            .ok(),
            None => None,
        };
        let mut session =
            Session::new(conn, Role::Writer).with_observer(self.settings.observer.clone());
        for job in self.queue.iter() {
            // An open statement keeps the connection inside a read of its
            // own: the cursor would mix this job's writes into the rows it
            // has yet to return, and SQLite documents that an implicit
            // transaction commits only when the last active statement ends.
            if job.cursor().is_none() && session.has_live_cursors() {
                session.park_cursors();
            }
            // Published before the completion, so a read issued after a
            // BEGIN (or COMMIT) resolved is routed by the new state.
            run_job_then(&mut session, job, &self.counters, |session| {
                let open = !session.connection().is_autocommit();
                self.in_transaction.store(open, Ordering::Release);
            });
            if let Some(wal) = &mut wal {
                wal.after_job(session.connection(), !session.has_live_cursors());
            }
        }
        session.finish();
        // Closing the last connection checkpoints the WAL and deletes it;
        // nothing commits after the writer, so the observer captures the
        // last frames now, before the connection closes.
        let permit = self
            .settings
            .observer
            .before_checkpoint(CheckpointWrites::Excluded);
        drop(session);
        drop(permit);
    }
}
