//! The `offloop-faults` VFS: the default VFS of the platform with I/O
//! faults a test switches on and off (see `faults`). Every file it opens is
//! the default VFS's own file, wrapped; each method passes straight through
//! unless a fault armed for that kind of file says otherwise: reads, writes
//! and syncs fail with SQLITE_IOERR_*, and a "full disk" fails the writes
//! that would grow a file with SQLITE_FULL.
//!
//! It is registered only by `faults::enable` (never as the default VFS), so
//! only a connection opened with `vfs=offloop-faults` in a URI filename
//! ever uses it. It never changes the bytes that pass through it.

use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use offloop_file::wrap::{self, WrappedFile};
use rusqlite::ffi;

/// I/O faults, as bits of one mask: what fails, and on which files.
pub mod io {
    /// Reads fail with SQLITE_IOERR_READ.
    pub const READ: u32 = 1;
    /// Writes fail with SQLITE_IOERR_WRITE.
    pub const WRITE: u32 = 2;
    /// Syncs fail with SQLITE_IOERR_FSYNC.
    pub const SYNC: u32 = 4;
    /// The disk is full: a write that would grow a file fails with
    /// SQLITE_FULL (a write inside it still lands, as on a real disk).
    pub const FULL: u32 = 8;
    /// The files the faults above apply to.
    pub const MAIN_DB: u32 = 16;
    pub const WAL: u32 = 32;
    pub const JOURNAL: u32 = 64;
    pub const ALL_FILES: u32 = MAIN_DB | WAL | JOURNAL;
}

/// The name a URI filename gives (`file:app.db?vfs=offloop-faults`).
pub const VFS_NAME: &str = "offloop-faults";

static FAULTS: AtomicU32 = AtomicU32::new(0);
static INJECTED: AtomicU64 = AtomicU64::new(0);
/// The default VFS this one wraps; set once by `register`.
static INNER: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

pub fn set_faults(mask: u32) {
    FAULTS.store(mask, Ordering::Release);
}

pub fn injected() -> u64 {
    INJECTED.load(Ordering::Relaxed)
}

/// One open file: the wrapped file's head, then which kind of file it is
/// (one of the `io::MAIN_DB`, `io::WAL`, `io::JOURNAL` bits; 0 for
/// temporary and other files, which never fail). The default VFS's file
/// follows in the same allocation.
#[repr(C)]
struct FaultFile {
    head: WrappedFile,
    kind: u32,
}

/// The error `op` (an `io::READ`/`WRITE`/`SYNC` bit) fails with on a file
/// of `kind`, if a fault is armed for it.
fn fault(kind: u32, op: u32) -> Option<c_int> {
    let mask = FAULTS.load(Ordering::Acquire);
    if mask & op == 0 || mask & kind == 0 {
        return None;
    }
    INJECTED.fetch_add(1, Ordering::Relaxed);
    Some(match op {
        io::READ => ffi::SQLITE_IOERR_READ,
        io::WRITE => ffi::SQLITE_IOERR_WRITE,
        io::SYNC => ffi::SQLITE_IOERR_FSYNC,
        _ => ffi::SQLITE_FULL,
    })
}

/// # Safety
/// `file` is a `FaultFile` this VFS opened and SQLite has not closed.
unsafe fn kind(file: *mut ffi::sqlite3_file) -> u32 {
    // SAFETY: per the caller, `file` points to a live FaultFile.
    unsafe { (*(file as *const FaultFile)).kind }
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_close(file) }
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite calls this on a file this VFS opened.
    if let Some(rc) = fault(unsafe { kind(file) }, io::READ) {
        return rc;
    }
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_read(file, buf, amount, offset) }
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite calls this on a file this VFS opened.
    let kind = unsafe { kind(file) };
    if let Some(rc) = fault(kind, io::WRITE) {
        return rc;
    }
    if FAULTS.load(Ordering::Acquire) & io::FULL != 0 && kind != 0 {
        let mut size: ffi::sqlite3_int64 = 0;
        // SAFETY: passed on as SQLite called it, on a file this VFS opened.
        let rc = unsafe { wrap::x_file_size(file, &mut size) };
        if rc == ffi::SQLITE_OK && offset + ffi::sqlite3_int64::from(amount) > size {
            if let Some(rc) = fault(kind, io::FULL) {
                return rc;
            }
        }
    }
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_write(file, buf, amount, offset) }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_truncate(file, size) }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: SQLite calls this on a file this VFS opened.
    if let Some(rc) = fault(unsafe { kind(file) }, io::SYNC) {
        return rc;
    }
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_sync(file, flags) }
}

unsafe extern "C" fn x_fetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // A memory-mapped read bypasses xRead: while reads fail, hand out no
    // mapping, so SQLite falls back to xRead and meets the fault.
    if FAULTS.load(Ordering::Acquire) & io::READ != 0 {
        // SAFETY: `out` is SQLite's out-pointer for this call.
        unsafe { *out = ptr::null_mut() };
        return ffi::SQLITE_OK;
    }
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    unsafe { wrap::x_fetch(file, offset, amount, out) }
}

static METHODS: ffi::sqlite3_io_methods = wrap::io_methods(wrap::Overrides {
    close: x_close,
    read: x_read,
    write: x_write,
    truncate: x_truncate,
    sync: x_sync,
    fetch: x_fetch,
});

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let kind = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        io::MAIN_DB
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        io::WAL
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        io::JOURNAL
    } else {
        0
    };
    // SAFETY: SQLite hands us `szOsFile` bytes at `file` (see `register`),
    // which start as a FaultFile; the inner VFS is the default one.
    unsafe {
        (*(file as *mut FaultFile)).kind = kind;
        wrap::open_inner::<FaultFile>(
            INNER.load(Ordering::Acquire),
            name,
            file,
            flags,
            out_flags,
            &METHODS,
        )
    }
}

/// Registers `offloop-faults`, a copy of the default VFS whose files are
/// wrapped (see `offloop_file::wrap`).
pub fn register() -> std::result::Result<(), String> {
    let inner = wrap::register::<FaultFile>(VFS_NAME, x_open)?;
    INNER.store(inner, Ordering::Release);
    Ok(())
}
