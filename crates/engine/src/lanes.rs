//! `Lanes`: one database's lanes (writer, readers, checkpointer) and the
//! rules between them: readers and the checkpointer run only once the
//! writer has opened; a job on the shared reader queue notifies a reader
//! that is not pinned; the writer closes its connection last, after every
//! other lane of the database finished; `close()` hears back then. It runs
//! no job and holds no connection.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::job::{complete, Done, Outcome};
use crate::pool::{self, Lane};
use crate::timers;

pub struct Lanes {
    pub writer: Lane,
    pub readers: Vec<Lane>,
    pub checkpointer: Option<Lane>,
    /// Per reader: pinned by open cursors or a read snapshot, or gone.
    pinned: Vec<AtomicBool>,
    /// Where the next search for a reader to notify starts.
    next_reader: AtomicUsize,
    /// Per reader: running a job now (from taking it to its reply).
    busy: Vec<AtomicBool>,
    /// The reader that took a job from the shared queue last.
    last_reader: AtomicUsize,
    /// Set once the writer's open is decided: readers and the checkpointer
    /// are notified only from then on, so none waits for it on a thread.
    opened: AtomicBool,
    /// Set when one of them was to be notified before that: then they all
    /// are, once it is decided (none otherwise: they open on demand).
    early: AtomicBool,
    /// Readers and checkpointer not finished yet.
    others: AtomicUsize,
    closing: Mutex<Closing>,
    /// The idle close of each reader, then of the checkpointer: whether
    /// its connection is open (the writer closes its own when idle only
    /// once none is: its close is then the last, which checkpoints and
    /// removes the WAL, as at `close()`), and an evicted writer asks them
    /// to close too.
    pub dozes: Vec<std::sync::Arc<crate::doze::Doze>>,
    /// Set once the database's queues are closed (`wake_all`): a lane whose
    /// connection is closed finishes once nothing is queued for it.
    stopping: AtomicBool,
    /// The writer's connection is closed after an idle close, so it holds
    /// nothing of its own (a TEMP object, an attached database, a
    /// transaction would have kept it open): a query it has not prepared
    /// yet runs on a reader as it would on the writer opened afresh.
    writer_dozing: AtomicBool,
    /// A reader opened while the writer dozed. A read-only connection
    /// cannot remove the WAL and the `-shm` it made; the writer's last
    /// close opens its connection to remove them.
    read_while_dozing: AtomicBool,
}

#[derive(Default)]
struct Closing {
    done: Option<Done>,
    finished: bool,
}

impl Lanes {
    /// `eager`: the readers and the checkpointer open as soon as the writer
    /// has (else at their first job).
    pub fn new(writer: Lane, readers: Vec<Lane>, checkpointer: Option<Lane>, eager: bool) -> Lanes {
        pool::database_opened();
        let dozes = readers
            .iter()
            .chain(&checkpointer)
            .map(|_| std::sync::Arc::default())
            .collect();
        Lanes {
            pinned: readers.iter().map(|_| AtomicBool::new(false)).collect(),
            busy: readers.iter().map(|_| AtomicBool::new(false)).collect(),
            last_reader: AtomicUsize::new(0),
            others: AtomicUsize::new(readers.len() + usize::from(checkpointer.is_some())),
            writer,
            readers,
            checkpointer,
            next_reader: AtomicUsize::new(0),
            opened: AtomicBool::new(false),
            early: AtomicBool::new(eager),
            closing: Mutex::new(Closing::default()),
            stopping: AtomicBool::new(false),
            writer_dozing: AtomicBool::new(false),
            read_while_dozing: AtomicBool::new(false),
            dozes,
        }
    }

    /// The writer's open is decided (either way): every other lane runs,
    /// if it opens at once or work was queued for one of them meanwhile.
    pub fn writer_opened(&self) {
        self.opened.store(true, Ordering::SeqCst);
        if self.early.load(Ordering::SeqCst) {
            for lane in self.readers.iter().chain(&self.checkpointer) {
                lane.notify();
            }
        }
    }

    /// Whether the writer's open is decided, so that the other lanes may
    /// be notified; if not, `writer_opened` notifies them all. (Either this
    /// sees `opened`, or `writer_opened` sees `early`.)
    fn may_notify(&self) -> bool {
        if self.is_opened() {
            return true;
        }
        self.early.store(true, Ordering::SeqCst);
        self.is_opened()
    }

    /// Whether the database's queues are closed.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// A reader or the checkpointer closed its connection when idle (or
    /// lost it): the last one lets an idle writer close too.
    pub fn other_closed(&self) {
        if self.writer_may_close() {
            self.writer.notify();
        }
    }

    /// The writer was asked to close (the process is over its cap) while
    /// the database's other connections are open: they are asked too.
    pub fn evict_others(&self) {
        for (doze, lane) in self
            .dozes
            .iter()
            .zip(self.readers.iter().chain(&self.checkpointer))
        {
            if doze.evict() {
                lane.notify();
            }
        }
    }

    /// Whether the idle writer may close its connection: no other is open.
    /// A reader opening meanwhile is no harm: its close would leave the
    /// empty WAL behind until the writer's next open and close.
    pub fn writer_may_close(&self) -> bool {
        self.dozes.iter().all(|doze| !doze.is_open())
    }

    fn is_opened(&self) -> bool {
        self.opened.load(Ordering::SeqCst)
    }

    /// The writer's connection closed when idle (`true`), or the writer
    /// takes a job to open it again (`false`, before it takes the job).
    pub fn set_writer_dozing(&self, dozing: bool) {
        self.writer_dozing.store(dozing, Ordering::SeqCst);
    }

    /// The writer's connection opened again: its close will be the last
    /// and remove what a reader left.
    pub fn writer_reopened(&self) {
        self.read_while_dozing.store(false, Ordering::SeqCst);
    }

    /// Whether the writer's connection is closed after an idle close (see
    /// `writer_dozing`).
    pub fn writer_dozing(&self) -> bool {
        self.writer_dozing.load(Ordering::SeqCst)
    }

    /// A reader opened its connection.
    pub fn reader_opened(&self) {
        if self.writer_dozing() {
            self.read_while_dozing.store(true, Ordering::SeqCst);
        }
    }

    /// Whether a reader opened since the writer's connection closed when
    /// idle (and may have left the WAL behind).
    pub fn read_while_dozing(&self) -> bool {
        self.read_while_dozing.load(Ordering::SeqCst)
    }

    /// Reader `reader` runs a job from now until `set_busy(reader, false)`.
    pub fn set_busy(&self, reader: usize, busy: bool) {
        if busy {
            self.last_reader.store(reader, Ordering::Relaxed);
        }
        self.busy[reader].store(busy, Ordering::Release);
    }

    pub fn set_pinned(&self, reader: usize, pinned: bool) {
        self.pinned[reader].store(pinned, Ordering::Release);
    }

    /// `jobs` jobs went to the shared reader queue: notifies as many
    /// sleeping readers that are not pinned, and the busy ones too when
    /// there are not enough (each looks at the queue again before it
    /// sleeps); when every reader is pinned, all of them, to see whether
    /// the queue is starving (see `reader.rs`).
    pub fn wake_shared(&self, jobs: usize) {
        if self.readers.is_empty() || !self.may_notify() {
            return;
        }
        let count = self.readers.len();
        let free = |i: usize| !self.pinned[i].load(Ordering::Acquire);
        // One job, and the reader that ran the last one is not pinned and
        // not in a job: it takes this one too. Idle, its thread is still
        // looking at the run queue (a caller awaiting one call after
        // another); still running, it looks at the shared queue again
        // before it sleeps. Either way no other thread wakes for it.
        let last = self.last_reader.load(Ordering::Relaxed);
        if jobs == 1 && free(last) && !self.busy[last].load(Ordering::Acquire) {
            self.readers[last].notify();
            return;
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let mut woken = 0;
        for i in (0..count).map(|k| (start + k) % count) {
            if woken < jobs && free(i) && self.readers[i].is_idle() {
                self.readers[i].notify();
                woken += 1;
            }
        }
        if woken == jobs {
            return;
        }
        // Not enough sleeping: the busy ones look again before they sleep
        // (notifying one that runs costs one atomic operation).
        let mut any_free = woken > 0;
        for i in 0..count {
            if free(i) {
                any_free = true;
                self.readers[i].notify();
            }
        }
        if !any_free {
            self.wake_all_readers();
        }
    }

    /// A pinned reader leaves work on the shared queue: the readers that
    /// are not pinned hear of it. Never the pinned ones: a reader pinned by
    /// a read snapshot cannot help, and one pinned by cursors decides for
    /// itself when it runs (so a pinned reader never wakes itself in a loop).
    pub fn wake_unpinned(&self) {
        for (lane, pinned) in self.readers.iter().zip(&self.pinned) {
            if !pinned.load(Ordering::Acquire) {
                lane.notify();
            }
        }
    }

    pub fn wake_all_readers(&self) {
        for lane in &self.readers {
            lane.notify();
        }
    }

    pub fn wake_reader(&self, reader: usize) {
        if self.may_notify() {
            self.readers[reader].notify();
        }
    }

    pub fn wake_checkpointer(&self) {
        if let Some(lane) = &self.checkpointer {
            if self.may_notify() {
                lane.notify();
            }
        }
    }

    /// Stops: every lane looks at its queues (closed by now) and finishes.
    pub fn wake_all(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.writer.notify();
        if self.may_notify() {
            self.wake_all_readers();
            self.wake_checkpointer();
        }
    }

    /// A reader or the checkpointer finished: the last one lets the writer
    /// close.
    pub fn departed(&self) {
        if self.others.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.writer.notify();
        }
    }

    /// Whether the writer may close its connection: every other is closed.
    pub fn others_finished(&self) -> bool {
        self.others.load(Ordering::Acquire) == 0
    }

    /// `close()`'s completion, called when the writer finished (at once if
    /// it has).
    pub fn on_closed(&self, done: Done) {
        let mut closing = self.closing.lock().unwrap_or_else(|e| e.into_inner());
        if closing.finished {
            drop(closing);
            complete(done, Ok(Outcome::Done));
        } else {
            closing.done = Some(done);
        }
    }

    /// The writer closed its connection, the database's last.
    pub fn finished(&self) {
        let done = {
            let mut closing = self.closing.lock().unwrap_or_else(|e| e.into_inner());
            closing.finished = true;
            closing.done.take()
        };
        if pool::database_closed() {
            timers::clear(&self.writer);
            timers::trim_now();
        }
        if let Some(done) = done {
            complete(done, Ok(Outcome::Done));
        }
    }
}

/// A reader's or the checkpointer's place in `Lanes::others`, given up when
/// its work drops (however its lane ended).
pub struct Departure(pub std::sync::Arc<Lanes>);

impl Drop for Departure {
    fn drop(&mut self) {
        self.0.departed();
    }
}
