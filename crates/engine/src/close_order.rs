//! `CloseOrder`: which of a database's connections closes last. SQLite
//! checkpoints the WAL and deletes the `-wal` and `-shm` files when the last
//! connection to a file closes, and only if that connection can write: a
//! read-only one cannot take the lock or reset the WAL, and leaves both
//! files behind. So every connection but the writer's (readers, the
//! checkpointer, backups) holds a place here from before its thread starts
//! until its connection has closed, and the writer closes its own only once
//! no place is held, as the one connection that ends last.
//!
//! It owns a count and the wait for it to reach zero; it opens, closes and
//! touches no connection or file itself.

use std::sync::{Arc, Condvar, Mutex};

/// The connections of one database other than the writer's that are open,
/// or about to be.
#[derive(Debug, Default)]
pub struct CloseOrder {
    open: Mutex<usize>,
    closed: Condvar,
}

/// A place held by one connection other than the writer's: dropped after
/// that connection closed (or never opened).
pub struct OtherConnection(Arc<CloseOrder>);

impl CloseOrder {
    /// Holds a place for a connection about to open; taken on the thread
    /// that starts its owner, so that a close right after the start still
    /// counts it.
    pub fn hold(self: &Arc<Self>) -> OtherConnection {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        OtherConnection(self.clone())
    }

    /// Blocks until every place is given back: the writer's thread, before
    /// closing its connection.
    pub fn wait_for_others(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while *open > 0 {
            open = self.closed.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for OtherConnection {
    fn drop(&mut self) {
        let mut open = self.0.open.lock().unwrap_or_else(|e| e.into_inner());
        *open -= 1;
        if *open == 0 {
            self.0.closed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;
    use std::time::Duration;

    #[test]
    fn the_wait_ends_only_after_every_place_is_given_back() {
        let order = Arc::new(CloseOrder::default());
        let first = order.hold();
        let second = order.hold();
        let waited = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (order, waited) = (order.clone(), waited.clone());
            thread::spawn(move || {
                order.wait_for_others();
                waited.store(true, Ordering::SeqCst);
            })
        };
        drop(first);
        thread::sleep(Duration::from_millis(20));
        assert!(!waited.load(Ordering::SeqCst), "one place is still held");
        drop(second);
        waiter.join().unwrap();
        assert!(waited.load(Ordering::SeqCst));
    }

    #[test]
    fn with_no_place_held_the_wait_returns_at_once() {
        CloseOrder::default().wait_for_others();
    }
}
