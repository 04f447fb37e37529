//! `IoRuntime`: the one tokio runtime under every replica store of the
//! process, shared by all of them and ended when the last store using it
//! is dropped.
//!
//! `object_store` is async; the stores block their callers on this
//! runtime's results. One runtime per store made every replicated
//! database cost two worker threads and a pool of blocking threads (a
//! folder's file operations run there), so a process with many databases
//! held threads in proportion to them. Shared, the process holds
//! [`WORKER_THREADS`] workers and at most [`BLOCKING_THREADS`] blocking
//! threads however many databases replicate; and once every store is gone
//! (every database closed), so are they.
//!
//! It never runs SQLite and never decides what a store does; it only
//! carries the requests.

use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio::runtime::Runtime;

/// Workers of the runtime: enough to keep requests and transfers moving
/// without taking cores from SQLite.
const WORKER_THREADS: usize = 2;
/// The most threads a folder's blocking file operations (and fsyncs) may
/// use at once, for the whole process: each is short, and more at once
/// would only queue on the disk.
const BLOCKING_THREADS: usize = 8;

/// The process's runtime while any store holds it.
static SHARED: Mutex<Weak<IoRuntime>> = Mutex::new(Weak::new());

#[derive(Debug)]
pub(crate) struct IoRuntime(Option<Runtime>);

impl IoRuntime {
    /// The process's runtime, started if no store holds one now.
    pub(crate) fn shared() -> std::io::Result<Arc<IoRuntime>> {
        let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(runtime) = slot.upgrade() {
            return Ok(runtime);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .max_blocking_threads(BLOCKING_THREADS)
            .thread_name("offloop-replica-io")
            .enable_all()
            .build()?;
        let runtime = Arc::new(IoRuntime(Some(runtime)));
        *slot = Arc::downgrade(&runtime);
        Ok(runtime)
    }
}

impl Deref for IoRuntime {
    type Target = Runtime;

    fn deref(&self) -> &Runtime {
        self.0.as_ref().expect("present until dropped")
    }
}

impl Drop for IoRuntime {
    /// Its threads end without this waiting for them: the last store may
    /// be dropped anywhere, an async context included, where dropping a
    /// runtime that waits would panic.
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_share_one_runtime_while_any_holds_it() {
        let first = IoRuntime::shared().unwrap();
        let second = IoRuntime::shared().unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(first.block_on(async { 7 }), 7);
        drop((first, second));
        let again = IoRuntime::shared().unwrap();
        assert_eq!(again.block_on(async { 8 }), 8);
    }
}
