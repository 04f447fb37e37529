//! The queues of one database and how a job reaches its lane: the
//! senders (`Queues`), the queue a job goes to (`Target`), and the
//! notifications a burst of sends calls for (`Wakes`), made after the
//! queues' lock is released. Plain data and sends; it runs no job.

use crate::queue::{SendError, Sender};

use crate::job::{Job, Request};
use crate::lanes::Lanes;
use crate::sql::{Route, Sql};

/// The senders of a database's queues (dropped at close, which ends the
/// lanes once they have run what is queued).
pub struct Queues {
    pub writer: Sender<Job>,
    /// The queue every reader takes from; `None` when there are no readers.
    pub readers: Option<Sender<Job>>,
    /// One per reader, for jobs only that reader can run (its cursors).
    pub private: Vec<Sender<Job>>,
    /// `db.checkpoint()` requests, when a checkpointer runs.
    pub checkpointer: Option<Sender<Job>>,
}

/// Which queue a job goes to.
#[derive(Clone, Copy)]
pub enum Target {
    Writer,
    Shared,
    Private(usize),
    Checkpointer,
}

/// The notifications a burst of sends calls for, made once the queues'
/// lock is released.
#[derive(Default)]
pub struct Wakes {
    writer: bool,
    shared: usize,
    private: Vec<usize>,
    checkpointer: bool,
}

impl Wakes {
    pub fn add(&mut self, target: Target) {
        match target {
            Target::Writer => self.writer = true,
            Target::Shared => self.shared += 1,
            Target::Private(i) if !self.private.contains(&i) => self.private.push(i),
            Target::Private(_) => {}
            Target::Checkpointer => self.checkpointer = true,
        }
    }

    pub fn wake(self, lanes: &Lanes) {
        if self.writer {
            lanes.writer.notify();
        }
        for i in self.private {
            lanes.wake_reader(i);
        }
        if self.shared > 0 {
            lanes.wake_shared(self.shared);
        }
        if self.checkpointer {
            lanes.wake_checkpointer();
        }
    }
}

/// Where a statement runs (see `route`). One no connection has prepared yet
/// goes to the writer, which learns its route, unless it is a plain query
/// and the writer dozes with nothing queued: it then holds nothing of its
/// own that the query could name, a reader runs it as the writer would
/// (and learns nothing), and a tenant read after its idle close wakes no
/// writer (nor, replicated, its replicator).
///
/// The queue is looked at before the writer: the writer stops dozing before
/// it takes a job, so a job queued before this call is either still queued
/// or taken by a writer seen awake.
pub fn route_sql(queues: &Queues, sql: &Sql, writer_in_transaction: bool, lanes: &Lanes) -> Target {
    let learned = match sql.route() {
        Route::Unknown
            if sql.is_plain_query() && queues.writer.is_empty() && lanes.writer_dozing() =>
        {
            Route::Reader
        }
        learned => learned,
    };
    route(queues, learned, writer_in_transaction)
}

/// Read-only statements go to the readers, unless the writer is inside a
/// transaction: its uncommitted writes are visible on its connection only.
pub fn route(queues: &Queues, route: Route, writer_in_transaction: bool) -> Target {
    match (route, &queues.readers) {
        (Route::Reader, Some(_)) if !writer_in_transaction => Target::Shared,
        _ => Target::Writer,
    }
}

/// Sends `job` to `target`; returns the target whose thread needs waking,
/// `None` when the job did not go anywhere (it then completes as closed).
/// A checkpointer that stopped after the job was routed leaves checkpoints
/// to the writer.
pub fn deliver(queues: &Queues, target: Target, job: Job) -> Option<Target> {
    let sender = match target {
        Target::Writer => &queues.writer,
        Target::Shared => queues.readers.as_ref()?,
        Target::Private(i) => &queues.private[i],
        Target::Checkpointer => queues.checkpointer.as_ref()?,
    };
    match sender.send(job) {
        Ok(()) => Some(target),
        Err(SendError(job)) => {
            let fallback = matches!(
                job.request,
                Request::Checkpoint(_) | Request::StopCheckpointer
            );
            (fallback && queues.writer.send(job).is_ok()).then_some(Target::Writer)
        }
    }
}
