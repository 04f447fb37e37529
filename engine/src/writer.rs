//! The writer thread: owns the one read-write connection and runs its queue
//! in arrival order. Shutdown is the queue's senders all dropping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_channel::Receiver;

use crate::checkpoint::{checkpoint, CheckpointMode, Nudge, WalControl};
use crate::connection::open_writer;
use crate::job::{Job, Role};
use crate::latch::{OpenLatch, WriterGate};
use crate::session::Session;
use crate::settings::Settings;
use crate::stats::RoleCounters;
use crate::worker::run_job;

pub struct WriterThread {
    pub settings: Arc<Settings>,
    pub queue: Receiver<Job>,
    pub gate: Arc<WriterGate>,
    pub latch: Arc<OpenLatch>,
    pub counters: Arc<RoleCounters>,
    pub location: Arc<OnceLock<Option<String>>>,
    /// Present when a checkpointer thread runs.
    pub wal: Option<(Nudge, Arc<WalControl>)>,
}

/// SQLite's default `wal_autocheckpoint`, restored when the checkpointer
/// stops so the WAL stays bounded without it.
const SQLITE_DEFAULT_AUTOCHECKPOINT: i64 = 1000;

impl WriterThread {
    pub fn run(self) {
        let mut conn = match open_writer(&self.settings) {
            Ok(conn) => conn,
            Err(error) => {
                self.gate.open(false);
                self.latch.arrive(Err(error.clone()));
                for job in self.queue.iter() {
                    job.fail(error.clone());
                }
                return;
            }
        };
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_string);
        let _ = self.location.set(path);
        self.gate.open(true);
        self.latch.arrive(Ok(()));
        drop(self.latch);
        let committed = Arc::new(AtomicBool::new(false));
        if self.wal.is_some() {
            let flag = committed.clone();
            // Only sets a flag: the nudge goes out after the job, once the
            // commit is complete. Registering a hook cannot fail.
            let _ = conn.commit_hook(Some(move || {
                flag.store(true, Ordering::Relaxed);
                false
            }));
        }
        let mut session = Session::new(conn, Role::Writer);
        let mut handed_back = false;
        for job in self.queue.iter() {
            // An open statement would defer this job's autocommit until the
            // cursor ends, so a resolved write would not yet be committed.
            if job.cursor().is_none() && session.has_live_cursors() {
                session.park_cursors();
            }
            run_job(&mut session, job, &self.counters);
            let Some((nudge, control)) = &self.wal else {
                continue;
            };
            if committed.swap(false, Ordering::Relaxed) {
                nudge.send();
            }
            if control.take_catch_up_request() && !session.has_live_cursors() {
                // Copy the frames that arrived during the checkpointer's last
                // pass, so the next commit can restart the WAL. Busy means a
                // checkpoint is running already; it will ask again.
                if checkpoint(session.connection(), Some(CheckpointMode::Passive)).is_ok() {
                    control.record_writer_catch_up();
                }
            }
            if !handed_back && control.is_stopped() {
                handed_back = true;
                let _ = session.connection().pragma_update(
                    None,
                    "wal_autocheckpoint",
                    SQLITE_DEFAULT_AUTOCHECKPOINT,
                );
            }
        }
        session.finish();
    }
}
