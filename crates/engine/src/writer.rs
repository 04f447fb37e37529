//! The writer thread: owns the one read-write connection and runs its queue
//! in arrival order, parked (see `wake`) while it is empty. Shutdown is the
//! queue's senders all dropping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_channel::Receiver;

use crate::connection::open_writer;
use crate::executor::Executor;
use crate::job::Job;
use crate::latch::{OpenLatch, WriterGate};
use crate::role::Role;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::wake::recv_parked;
use crate::wal::{Nudge, WalControl};
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
                while let Some(job) = recv_parked(&self.queue) {
                    job.fail(error.clone());
                }
                return;
            }
        };
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_string);
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
            )
            .ok(),
            None => None,
        };
        let mut executor = Executor::new(conn, Role::Writer);
        while let Some(job) = recv_parked(&self.queue) {
            // An open statement keeps the connection inside a read of its
            // own: the cursor would mix this job's writes into the rows it
            // has yet to return, and SQLite documents that an implicit
            // transaction commits only when the last active statement ends.
            if job.cursor().is_none() && executor.has_live_cursors() {
                executor.park_cursors();
            }
            // Published before the completion, so a read issued after a
            // BEGIN (or COMMIT) resolved is routed by the new state.
            run_job_then(&mut executor, job, &self.counters, |executor| {
                let open = !executor.connection().is_autocommit();
                self.in_transaction.store(open, Ordering::Release);
            });
            if let Some(wal) = &mut wal {
                wal.after_job(executor.connection(), !executor.has_live_cursors());
            }
        }
        executor.finish();
    }
}
