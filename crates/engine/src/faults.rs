//! Test-only fault injection, for the tests that prove what happens when
//! things break: I/O errors and a full disk (through the `offloop-faults`
//! VFS of `fault_vfs`), and panics that kill a writer, reader or
//! checkpointer loop outside the per-job `catch_unwind`.
//!
//! It ships in every build and is inert until [`enable`] is called, which
//! the Node addon does only when the environment variable
//! `OFFLOOP_FAULT_INJECTION` is `1` as it loads (read once): no option, no
//! call and no SQL can turn it on by accident. Until then the VFS is not
//! registered (a `vfs=offloop-faults` URI fails to open) and every control
//! here is refused; a panic point costs one relaxed atomic load.
//!
//! It never decides anything for a database: it only fails what a test
//! armed, where the test armed it.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

use crate::error::{Error, Result};

static ENABLED: AtomicBool = AtomicBool::new(false);
static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Turns fault injection on for the process and registers the
/// `offloop-faults` VFS (once; later calls only report how that went).
pub fn enable() -> Result<()> {
    let registered = REGISTERED.get_or_init(crate::fault_vfs::register);
    match registered {
        Ok(()) => {
            ENABLED.store(true, Ordering::Release);
            Ok(())
        }
        Err(message) => Err(Error::invalid_state(message.clone())),
    }
}

pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

fn check_enabled() -> Result<()> {
    if is_enabled() {
        Ok(())
    } else {
        Err(Error::invalid_state(
            "fault injection is off (it is for offloop's own tests)",
        ))
    }
}

/// The loops a panic can be injected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Writer,
    Reader,
    Checkpointer,
}

impl Site {
    pub fn parse(name: &str) -> Option<Site> {
        match name {
            "writer" => Some(Site::Writer),
            "reader" => Some(Site::Reader),
            "checkpointer" => Some(Site::Checkpointer),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Site::Writer => "writer",
            Site::Reader => "reader",
            Site::Checkpointer => "checkpointer",
        })
    }
}

/// Panics still to inject, per site.
static ARMED: [AtomicU32; 3] = [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)];

/// The next `count` times any database's `site` loop passes its panic
/// point, it panics.
pub fn arm_panic(site: Site, count: u32) -> Result<()> {
    check_enabled()?;
    ARMED[site.index()].store(count, Ordering::Release);
    Ok(())
}

/// Panics if a test armed a panic at `site`. Placed in the thread loops
/// outside the per-job `catch_unwind`, so it kills the loop itself.
pub(crate) fn panic_point(site: Site) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let taken =
        ARMED[site.index()].fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    if taken.is_ok() {
        panic!("fault injection: a panic in the {site} loop");
    }
}

pub use crate::fault_vfs::io;

/// Sets the I/O faults of every file opened through `offloop-faults`
/// (0 clears them). Takes effect on the next operation.
pub fn set_io_faults(mask: u32) -> Result<()> {
    check_enabled()?;
    crate::fault_vfs::set_faults(mask);
    Ok(())
}

/// How many operations the VFS has failed so far.
pub fn io_faults_injected() -> Result<u64> {
    check_enabled()?;
    Ok(crate::fault_vfs::injected())
}
