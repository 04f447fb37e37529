//! The switch and controls of the engine's test-only fault injection (see
//! `offloop_engine::faults`). The switch is the environment variable
//! `OFFLOOP_FAULT_INJECTION=1`, read once, when the addon is initialised;
//! without it every control here throws. Nothing in lib/ calls these: only
//! offloop's own tests reach them, through native.js.

use std::sync::OnceLock;

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine::faults::{self, Site};

/// The environment variable that turns fault injection on.
const SWITCH: &str = "OFFLOOP_FAULT_INJECTION";

static ON: OnceLock<bool> = OnceLock::new();

/// Reads the switch (the first call only) and, when it is on, enables the
/// engine's faults, which registers the `offloop-faults` VFS.
pub fn read_switch() -> bool {
    *ON.get_or_init(|| std::env::var(SWITCH).as_deref() == Ok("1") && faults::enable().is_ok())
}

fn refused(error: offloop_engine::Error) -> Error {
    Error::new(Status::GenericFailure, error.to_string())
}

/// Whether fault injection is on in this process.
#[napi(catch_unwind)]
pub fn fault_injection() -> bool {
    read_switch()
}

/// The next `count` times a `site` loop ('writer', 'reader',
/// 'checkpointer') of any database passes its panic point, it panics.
#[napi(catch_unwind)]
pub fn fault_panic(site: String, count: u32) -> Result<()> {
    let site = Site::parse(&site)
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("unknown site '{site}'")))?;
    faults::arm_panic(site, count).map_err(refused)
}

/// Sets the I/O faults of the `offloop-faults` VFS (a mask of
/// `offloop_engine::faults::io` bits; 0 clears them).
#[napi(catch_unwind)]
pub fn fault_io(mask: u32) -> Result<()> {
    faults::set_io_faults(mask).map_err(refused)
}

/// How many I/O operations the VFS has failed so far.
#[napi(catch_unwind)]
pub fn fault_io_injected() -> Result<f64> {
    faults::io_faults_injected()
        .map(|n| n as f64)
        .map_err(refused)
}

/// The bits of `fault_io`'s mask, named once here for the tests.
#[napi(object)]
pub struct FaultIoBits {
    pub read: u32,
    pub write: u32,
    pub sync: u32,
    pub full: u32,
    pub main_db: u32,
    pub wal: u32,
    pub journal: u32,
}

#[napi(catch_unwind)]
pub fn fault_io_bits() -> FaultIoBits {
    use faults::io;
    FaultIoBits {
        read: io::READ,
        write: io::WRITE,
        sync: io::SYNC,
        full: io::FULL,
        main_db: io::MAIN_DB,
        wal: io::WAL,
        journal: io::JOURNAL,
    }
}
