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

/// Gives the calling thread nice value `nice` (if above 0). On Linux, nice
/// is per thread and `setpriority(PRIO_PROCESS, 0, …)` sets the caller's;
/// raising it needs no privilege. Failure leaves the thread as it was.
#[cfg(target_os = "linux")]
fn lower_priority(nice: i32) {
    extern "C" {
        fn setpriority(
            which: std::os::raw::c_int,
            who: std::os::raw::c_uint,
            prio: std::os::raw::c_int,
        ) -> std::os::raw::c_int;
    }
    const PRIO_PROCESS: std::os::raw::c_int = 0;
    if nice > 0 {
        // SAFETY: a plain system call on the calling thread; no memory is
        // passed.
        unsafe {
            setpriority(PRIO_PROCESS, 0, nice.min(19));
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority(_nice: i32) {}
