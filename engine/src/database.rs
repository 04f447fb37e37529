//! `Database`: the handle a caller holds. It starts the threads, routes each
//! job to the writer, the shared reader queue or a reader's private queue,
//! and shuts the threads down. It never touches a connection itself, so
//! every method is safe to call from an event loop.

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};

use crossbeam_channel::{unbounded, Sender};

use crate::checkpoint::{nudge_channel, CheckpointerThread, WalControl};
use crate::error::{Error, Result};
use crate::job::{Done, Job, Outcome, Request, Role};
use crate::latch::{OpenLatch, WriterGate};
use crate::reader::ReaderThread;
use crate::settings::Settings;
use crate::sql::{Route, Sql, SqlRegistry};
use crate::stats::{RoleCounters, Stats};
use crate::writer::WriterThread;

struct Queues {
    writer: Sender<Job>,
    /// The queue every reader takes from; `None` when there are no readers.
    readers: Option<Sender<Job>>,
    /// One per reader, for jobs only that reader can run (its cursors).
    private: Vec<Sender<Job>>,
    /// `db.checkpoint()` requests, when a checkpointer runs.
    checkpointer: Option<Sender<Job>>,
}

pub struct Database {
    settings: Arc<Settings>,
    sqls: SqlRegistry,
    queues: Mutex<Option<Queues>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    writer_counters: Arc<RoleCounters>,
    reader_counters: Vec<Arc<RoleCounters>>,
    location: Arc<OnceLock<Option<String>>>,
    wal: Arc<WalControl>,
}

impl Database {
    /// Starts the threads and returns at once; `opened` is called when every
    /// connection is open, or with the first error. Jobs submitted before
    /// then wait in their queues.
    pub fn open(settings: Settings, opened: Done) -> Result<Database> {
        let settings = Arc::new(settings);
        let reader_count = settings.reader_count();
        let gate = Arc::new(WriterGate::default());
        let checkpointer = settings.runs_checkpointer();
        let latch = Arc::new(OpenLatch::new(
            1 + reader_count + usize::from(checkpointer),
            opened,
        ));
        let wal = Arc::new(WalControl::default());
        let (nudge, nudges) = nudge_channel();
        let (checkpoint_tx, checkpoint_rx) = unbounded();
        let writer_counters = Arc::new(RoleCounters::default());
        let reader_counters: Vec<_> = (0..reader_count)
            .map(|_| Arc::new(RoleCounters::default()))
            .collect();

        let location = Arc::new(OnceLock::new());
        let (writer_tx, writer_rx) = unbounded();
        let mut threads = Vec::with_capacity(1 + reader_count);
        threads.push(spawn("offloop-writer".to_string(), {
            let thread = WriterThread {
                settings: settings.clone(),
                queue: writer_rx,
                gate: gate.clone(),
                latch: latch.clone(),
                counters: writer_counters.clone(),
                location: location.clone(),
                wal: checkpointer.then(|| (nudge, wal.clone())),
            };
            move || thread.run()
        })?);

        let (readers_tx, readers_rx) = unbounded();
        let mut private = Vec::with_capacity(reader_count);
        for (index, counters) in reader_counters.iter().enumerate() {
            let (tx, rx) = unbounded();
            private.push(tx);
            let thread = ReaderThread {
                index,
                settings: settings.clone(),
                shared: readers_rx.clone(),
                private: rx,
                gate: gate.clone(),
                latch: latch.clone(),
                counters: counters.clone(),
            };
            threads.push(spawn(format!("offloop-reader-{index}"), move || {
                thread.run()
            })?);
        }

        if checkpointer {
            let thread = CheckpointerThread {
                settings: settings.clone(),
                control: wal.clone(),
                nudges,
                requests: checkpoint_rx,
                gate: gate.clone(),
                latch: latch.clone(),
            };
            threads.push(spawn("offloop-checkpointer".to_string(), move || {
                thread.run()
            })?);
        }

        Ok(Database {
            settings,
            sqls: SqlRegistry::default(),
            queues: Mutex::new(Some(Queues {
                writer: writer_tx,
                readers: (reader_count > 0).then_some(readers_tx),
                private,
                checkpointer: checkpointer.then_some(checkpoint_tx),
            })),
            threads: Mutex::new(threads),
            writer_counters,
            reader_counters,
            location,
            wal,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The shared handle for a SQL text, carrying its learned route.
    pub fn sql(&self, text: &str) -> Arc<Sql> {
        self.sqls.get(text)
    }

    /// The main database file's absolute path, `None` for an in-memory or
    /// temporary database; known once the writer has opened.
    pub fn location(&self) -> Option<&str> {
        self.location.get().and_then(|l| l.as_deref())
    }

    pub fn is_open(&self) -> bool {
        self.lock_queues().is_some()
    }

    fn lock_queues(&self) -> std::sync::MutexGuard<'_, Option<Queues>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a request. `done` runs on a SQLite thread with the result, or
    /// at once with `ERR_INVALID_STATE` when the database is closed.
    pub fn submit(&self, request: Request, done: Done) {
        let job = Job::new(request, done);
        let queues = self.lock_queues();
        let Some(queues) = queues.as_ref() else {
            drop(queues);
            job.fail(Error::closed());
            return;
        };
        let target = match &job.request {
            Request::NextChunk { cursor, .. } | Request::CloseCursor(cursor) => match cursor.role {
                Role::Writer => &queues.writer,
                Role::Reader(i) => &queues.private[i],
            },
            Request::Run(call)
            | Request::Get(call)
            | Request::All(call)
            | Request::Expand(call)
            | Request::Iterate { call, .. } => route(queues, call.sql.route()),
            Request::Columns(sql) => route(queues, sql.route()),
            Request::Exec(_) => &queues.writer,
            Request::Checkpoint(_) | Request::StopCheckpointer => match &queues.checkpointer {
                Some(checkpointer) if self.wal.is_active() => checkpointer,
                _ => &queues.writer,
            },
        };
        // A send fails only when the thread is gone; the returned job then
        // drops and reports the database closed.
        let _ = target.send(job);
    }

    /// Stops taking jobs, lets queued ones finish, closes every connection on
    /// its own thread, joins the threads, then calls `done`. A second call
    /// finds nothing to stop and completes at once.
    pub fn close(&self, done: Done) {
        drop(self.lock_queues().take());
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        if threads.is_empty() {
            done(Ok(Outcome::Done));
            return;
        }
        let slot = Arc::new(Mutex::new(Some(done)));
        let joiner_slot = slot.clone();
        let joiner = move || {
            let mut result = Ok(Outcome::Done);
            for thread in threads {
                if thread.join().is_err() {
                    result = Err(Error::Panic {
                        message: "offloop internal error: a database thread panicked".into(),
                    });
                }
            }
            if let Some(done) = take_done(&joiner_slot) {
                done(result);
            }
        };
        // Joining must not block the caller (an event loop); a thread of its
        // own does it. If even that cannot start, the threads still end on
        // their own, unjoined.
        let spawned = thread::Builder::new()
            .name("offloop-close".into())
            .spawn(joiner);
        if spawned.is_err() {
            if let Some(done) = take_done(&slot) {
                done(Ok(Outcome::Done));
            }
        }
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

fn route(queues: &Queues, route: Route) -> &Sender<Job> {
    match (route, &queues.readers) {
        (Route::Reader, Some(readers)) => readers,
        _ => &queues.writer,
    }
}

fn take_done(slot: &Mutex<Option<Done>>) -> Option<Done> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(name)
        .spawn(f)
        .map_err(|e| Error::invalid_state(format!("could not start a database thread: {e}")))
}

impl Drop for Database {
    /// Dropping without `close` (a garbage-collected handle): the queues'
    /// senders go, each thread finishes its queue, closes its connection and
    /// exits on its own. Nothing here waits or touches a file.
    fn drop(&mut self) {
        drop(self.lock_queues().take());
    }
}
