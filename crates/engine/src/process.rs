//! The process-wide view `Database.stats()` reports: databases and
//! connections open, the pool's threads and the timer's, lanes waiting for
//! a thread. It only reads counts; it starts and stops nothing.

use crate::pool;
use crate::timers;

/// The process-wide view: what is open, and what runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessStats {
    /// Databases open (from `Database::open` until their last connection
    /// closed).
    pub databases: usize,
    /// SQLite connections open, every database together.
    pub connections: usize,
    /// offloop's SQLite threads alive: the pool's, and the timer's.
    pub threads: usize,
    /// Lanes (a database's writer, a reader, a checkpointer) with work,
    /// waiting for a pool thread.
    pub queued: usize,
    /// The bound on pool threads in force.
    pub thread_limit: usize,
    /// The cap on open connections in force (see `doze.rs`).
    pub connection_limit: usize,
}

pub fn process_stats() -> ProcessStats {
    let (threads, queued) = pool::threads_and_queued();
    ProcessStats {
        databases: pool::databases_open(),
        connections: crate::doze::connections_open(),
        threads: threads + usize::from(timers::running()),
        queued,
        thread_limit: pool::thread_limit(),
        connection_limit: crate::doze::connection_limit(),
    }
}
