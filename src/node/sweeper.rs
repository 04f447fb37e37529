//! The sweeper: one thread for the process, `offloop-sweeper`, that frees
//! the rows the JS thread has turned into JS values. A SQLite thread
//! allocates each row's values (a `String` per text, a `Vec` per blob);
//! freeing them on the JS thread after a drain took about a tenth of its
//! time for `all()` of 100 rows with glibc's malloc alone (which frees a
//! block into the arena of the thread that allocated it, under that
//! arena's lock), and the JS thread's time is offloop's ceiling. With
//! mimalloc for small blocks (src/alloc.rs) such a free takes no lock, but
//! still about 5% of an `all()`'s time on the JS thread, measured. So a
//! drain that converted many values hands its rows here; one with few
//! frees them itself, where the hand-off's wake-up would cost more than it
//! saves.
//!
//! The thread starts on a hand-off, sleeps on its channel between them,
//! and ends after `IDLE` with nothing to free, so a process that stopped
//! reading many rows keeps no thread of it. It knows nothing of JS.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{unbounded, SendError, Sender};
use offloop_engine::RowSet;

/// Values in a drain from which its rows go to the sweeper: freeing a
/// thousand values costs the JS thread tens of microseconds, waking the
/// sweeper a few.
const SWEEP_FROM_VALUES: usize = 1024;

/// How long the sweeper waits for more before it ends.
const IDLE: Duration = Duration::from_secs(1);

/// The running sweeper's channel, if one was started (it may have ended
/// since: a send then fails and a new one starts).
static SWEEPER: Mutex<Option<Sender<Vec<RowSet>>>> = Mutex::new(None);

fn start() -> Option<Sender<Vec<RowSet>>> {
    let (sender, receiver) = unbounded::<Vec<RowSet>>();
    thread::Builder::new()
        .name("offloop-sweeper".into())
        .spawn(move || {
            // Ends on a timeout (idle) or once every sender is gone.
            while let Ok(rows) = receiver.recv_timeout(IDLE) {
                // Dropping plain data does not panic; if it ever did, the
                // thread would go on with the next batch.
                drop(catch_unwind(AssertUnwindSafe(|| drop(rows))));
            }
        })
        .ok()
        .map(|_| sender)
}

/// Frees `rows` (a drain's converted rows, `values` values in all): on
/// the sweeper when they are many, else here. Any thread.
pub fn sweep(rows: Vec<RowSet>, values: usize) {
    if values < SWEEP_FROM_VALUES {
        drop(rows);
        return;
    }
    let mut sweeper = SWEEPER.lock().unwrap_or_else(|e| e.into_inner());
    let rows = match sweeper.as_ref() {
        Some(running) => match running.send(rows) {
            Ok(()) => return,
            // It ended (idle): start another.
            Err(SendError(rows)) => rows,
        },
        None => rows,
    };
    *sweeper = start();
    match sweeper.as_ref() {
        Some(sender) => drop(sender.send(rows)),
        // Its thread could not start: freed here, as before.
        None => drop(rows),
    }
}
