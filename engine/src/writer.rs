//! The writer thread: owns the one read-write connection and runs its queue
//! in arrival order. Shutdown is the queue's senders all dropping.

use std::sync::{Arc, OnceLock};

use crossbeam_channel::Receiver;

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
}

impl WriterThread {
    pub fn run(self) {
        let conn = match open_writer(&self.settings) {
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
        let mut session = Session::new(conn, Role::Writer);
        for job in self.queue.iter() {
            // An open statement would defer this job's autocommit until the
            // cursor ends, so a resolved write would not yet be committed.
            if job.cursor().is_none() && session.has_live_cursors() {
                session.park_cursors();
            }
            run_job(&mut session, job, &self.counters);
        }
        session.finish();
    }
}
