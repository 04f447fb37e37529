//! Starting a database's threads: named, with the nice value the settings
//! ask for. Nothing here knows what a thread runs.

use std::thread::{self, JoinHandle};

use crate::error::{Error, Result};

pub fn spawn(name: String, nice: i32, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(name)
        .spawn(move || {
            lower_priority(nice);
            f()
        })
        .map_err(|e| Error::invalid_state(format!("could not start a database thread: {e}")))
}

/// Gives the calling thread nice value `nice` (if above 0), never lower
/// than the one it started with (its creator's, the JS thread's): the point
/// is a priority below the event loop's, and a privileged process (root)
/// could otherwise raise it above a niced event loop. On Linux, nice is per
/// thread and `setpriority(PRIO_PROCESS, 0, …)` sets the caller's; raising
/// it needs no privilege. Failure leaves the thread as it was.
#[cfg(target_os = "linux")]
fn lower_priority(nice: i32) {
    use std::os::raw::{c_int, c_uint};
    extern "C" {
        fn getpriority(which: c_int, who: c_uint) -> c_int;
        fn setpriority(which: c_int, who: c_uint, prio: c_int) -> c_int;
    }
    const PRIO_PROCESS: c_int = 0;
    if nice > 0 {
        // SAFETY: plain system calls on the calling thread; no memory is
        // passed. For the calling thread getpriority cannot fail, so its
        // -1 is the nice value -1, not an error.
        unsafe {
            let current = getpriority(PRIO_PROCESS, 0);
            let wanted = nice.min(19);
            if wanted > current {
                setpriority(PRIO_PROCESS, 0, wanted);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority(_nice: i32) {}
