//! `CloseOrder`: which of a database's connections closes last. SQLite
//! checkpoints the WAL and deletes the `-wal` and `-shm` files when the last
//! connection to a file closes, and only if that connection can write: a
//! read-only one cannot take the lock or reset the WAL, and leaves both
//! files behind. So every connection but the writer's that lives outside the
//! database's lanes (a backup's) holds a place here from before its thread
//! starts until its connection has closed, and the writer closes its own
//! only once no place is held, as the one connection that ends last. (The
//! readers and the checkpointer are counted by their lanes: see `lanes`.)
//!
//! It owns a count and what to call when it reaches zero; it opens, closes
//! and touches no connection or file itself, and never blocks a thread.

use std::sync::{Arc, Mutex};

/// Called once when the last place is given back: the writer's lane, told
/// to look again.
type OnClear = Box<dyn FnOnce() + Send>;

/// The connections of one database other than the writer's (and its
/// lanes') that are open, or about to be.
#[derive(Default)]
pub struct CloseOrder {
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    count: usize,
    on_clear: Option<OnClear>,
}

/// A place held by one connection other than the writer's: dropped after
/// that connection closed (or never opened).
pub struct OtherConnection(Arc<CloseOrder>);

impl CloseOrder {
    /// Holds a place for a connection about to open; taken on the thread
    /// that starts its owner, so that a close right after the start still
    /// counts it.
    pub fn hold(self: &Arc<Self>) -> OtherConnection {
        self.lock().count += 1;
        OtherConnection(self.clone())
    }

    /// Whether no place is held now. If one is, `on_clear` is called when
    /// the last is given back (replacing any call set before), on the
    /// thread that gives it back.
    pub fn clear_or_call(&self, on_clear: impl FnOnce() + Send + 'static) -> bool {
        let mut open = self.lock();
        if open.count == 0 {
            return true;
        }
        open.on_clear = Some(Box::new(on_clear));
        false
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for CloseOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloseOrder")
            .field("open", &self.lock().count)
            .finish()
    }
}

impl Drop for OtherConnection {
    fn drop(&mut self) {
        let on_clear = {
            let mut open = self.0.lock();
            open.count -= 1;
            if open.count == 0 {
                open.on_clear.take()
            } else {
                None
            }
        };
        // Called outside the lock: it may look at the order again.
        if let Some(on_clear) = on_clear {
            on_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn the_call_comes_only_after_every_place_is_given_back() {
        let order = Arc::new(CloseOrder::default());
        let first = order.hold();
        let second = order.hold();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        assert!(!order.clear_or_call(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        drop(first);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "one place is still held");
        drop(second);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(order.clear_or_call(|| unreachable!("clear already")));
    }

    #[test]
    fn with_no_place_held_it_is_clear_at_once() {
        assert!(CloseOrder::default().clear_or_call(|| unreachable!("clear already")));
    }
}
