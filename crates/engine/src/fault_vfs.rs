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

use std::ffi::CString;
use std::mem::size_of;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

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

/// One open file: SQLite's header (our methods), which kind of file it is,
/// and the default VFS's file, which lives in the same allocation right
/// after this struct (SQLite allocates `szOsFile` bytes for both).
#[repr(C)]
struct FaultFile {
    base: ffi::sqlite3_file,
    /// One of the `io::MAIN_DB`, `io::WAL`, `io::JOURNAL` bits; 0 for
    /// temporary and other files, which never fail.
    kind: u32,
    inner: *mut ffi::sqlite3_file,
}

/// Where the inner file starts: after `FaultFile`, 8-byte aligned as
/// SQLite aligns its own allocations.
const INNER_OFFSET: usize = size_of::<FaultFile>().div_ceil(8) * 8;

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
unsafe fn parts(file: *mut ffi::sqlite3_file) -> (u32, *mut ffi::sqlite3_file) {
    // SAFETY: per the caller, `file` points to a live FaultFile.
    let f = unsafe { &*(file as *const FaultFile) };
    (f.kind, f.inner)
}

/// The inner file's method table.
///
/// # Safety
/// `inner` is a live file the default VFS opened successfully.
unsafe fn methods(inner: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    // SAFETY: a successfully opened file has a non-null, static method
    // table (SQLite's own VFS keeps them in statics).
    unsafe { &*(*inner).pMethods }
}

/// Forwards a method call to the inner file: `forward!(file, xName, args)`.
macro_rules! forward {
    ($file:expr, $method:ident $(, $arg:expr)*) => {{
        // SAFETY: SQLite calls these methods only on files this VFS opened
        // and has not closed; the inner file is the default VFS's, opened
        // in the same allocation, and takes the same arguments.
        unsafe {
            let (_, inner) = parts($file);
            match methods(inner).$method {
                Some(method) => method(inner $(, $arg)*),
                None => ffi::SQLITE_OK,
            }
        }
    }};
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xClose)
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see `forward!`.
    if let Some(rc) = fault(unsafe { parts(file) }.0, io::READ) {
        return rc;
    }
    forward!(file, xRead, buf, amount, offset)
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see `forward!`.
    let kind = unsafe { parts(file) }.0;
    if let Some(rc) = fault(kind, io::WRITE) {
        return rc;
    }
    if FAULTS.load(Ordering::Acquire) & io::FULL != 0 && kind != 0 {
        let mut size: ffi::sqlite3_int64 = 0;
        let rc = forward!(file, xFileSize, &mut size);
        if rc == ffi::SQLITE_OK && offset + ffi::sqlite3_int64::from(amount) > size {
            if let Some(rc) = fault(kind, io::FULL) {
                return rc;
            }
        }
    }
    forward!(file, xWrite, buf, amount, offset)
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    forward!(file, xTruncate, size)
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: see `forward!`.
    if let Some(rc) = fault(unsafe { parts(file) }.0, io::SYNC) {
        return rc;
    }
    forward!(file, xSync, flags)
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    forward!(file, xFileSize, size)
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xLock, level)
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xUnlock, level)
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    forward!(file, xCheckReservedLock, out)
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    forward!(file, xFileControl, op, arg)
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xSectorSize)
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xDeviceCharacteristics)
}

unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    forward!(file, xShmMap, region, size, extend, out)
}

unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    forward!(file, xShmLock, offset, n, flags)
}

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: see `forward!`.
    unsafe {
        let (_, inner) = parts(file);
        if let Some(barrier) = methods(inner).xShmBarrier {
            barrier(inner);
        }
    }
}

unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    forward!(file, xShmUnmap, delete)
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
    forward!(file, xFetch, offset, amount, out)
}

unsafe extern "C" fn x_unfetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    page: *mut c_void,
) -> c_int {
    forward!(file, xUnfetch, offset, page)
}

/// Version 3 methods: the default VFS on every platform offloop ships
/// has shared memory (WAL) and memory-mapped I/O.
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let inner_vfs = INNER.load(Ordering::Acquire);
    let kind = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        io::MAIN_DB
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        io::WAL
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        io::JOURNAL
    } else {
        0
    };
    // SAFETY: SQLite hands us `szOsFile` bytes at `file`: a FaultFile, then
    // the inner file at INNER_OFFSET (szOsFile counts both, see
    // `register`). The inner VFS is the default one, live for the process.
    unsafe {
        let inner = (file as *mut u8).add(INNER_OFFSET) as *mut ffi::sqlite3_file;
        let f = file as *mut FaultFile;
        (*f).base.pMethods = ptr::null();
        (*f).kind = kind;
        (*f).inner = inner;
        (*inner).pMethods = ptr::null();
        let Some(open) = (*inner_vfs).xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        let rc = open(inner_vfs, name, inner, flags, out_flags);
        // SQLite calls xClose on a file whose methods are set, even when
        // the open failed: mirror the inner file exactly.
        if !(*inner).pMethods.is_null() {
            (*f).base.pMethods = &METHODS;
        }
        rc
    }
}

/// Registers `offloop-faults`, a copy of the default VFS whose files are
/// wrapped. Every VFS-level method (delete, access, full path, time,
/// randomness) is the default VFS's own, which ignores the VFS pointer it
/// is given or reads only the fields copied with it.
pub fn register() -> std::result::Result<(), String> {
    // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS, which lives
    // for the process; the copy is leaked so it lives as long, as
    // sqlite3_vfs_register requires, and its name is leaked with it.
    unsafe {
        let rc = ffi::sqlite3_initialize();
        if rc != ffi::SQLITE_OK {
            return Err(format!("SQLite could not initialise: {rc}"));
        }
        let inner = ffi::sqlite3_vfs_find(ptr::null());
        if inner.is_null() {
            return Err("SQLite has no default VFS".into());
        }
        let mut vfs = ptr::read(inner);
        let name = CString::new(VFS_NAME).expect("no NUL in the name");
        vfs.zName = name.into_raw();
        vfs.pNext = ptr::null_mut();
        vfs.szOsFile = INNER_OFFSET as c_int + (*inner).szOsFile;
        vfs.xOpen = Some(x_open);
        INNER.store(inner, Ordering::Release);
        let vfs = Box::into_raw(Box::new(vfs));
        let rc = ffi::sqlite3_vfs_register(vfs, 0);
        if rc != ffi::SQLITE_OK {
            return Err(format!("the fault VFS could not register: {rc}"));
        }
    }
    Ok(())
}
