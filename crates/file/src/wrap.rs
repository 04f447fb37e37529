//! What every offloop VFS that wraps the platform's default VFS shares:
//! the head of a wrapped file (SQLite's header, then a pointer to the
//! default VFS's own file, which lives in the same allocation), the
//! methods that pass straight through to that file, the common part of
//! `xOpen`, and registration under a name of its own.
//!
//! A VFS built on it (offloop-vfs's paged VFS, the engine's fault VFS)
//! writes only the methods it changes. Nothing here ever changes a byte or a
//! result on its way through.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

pub use rusqlite::ffi;

/// How every wrapped file starts; a VFS's own file struct puts it first
/// (`#[repr(C)]`) and its own fields after.
#[repr(C)]
pub struct WrappedFile {
    pub base: ffi::sqlite3_file,
    /// The default VFS's file, at `inner_offset::<F>()` in the same
    /// allocation.
    pub inner: *mut ffi::sqlite3_file,
}

/// Where the inner file starts after a file struct `F`: 8-byte aligned, as
/// SQLite aligns its own allocations.
pub const fn inner_offset<F>() -> usize {
    std::mem::size_of::<F>().div_ceil(8) * 8
}

/// The inner file of a wrapped file.
///
/// # Safety
/// `file` is a file a wrapping VFS opened (its struct starts with a
/// `WrappedFile`) and SQLite has not closed.
pub unsafe fn inner(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    // SAFETY: per the caller, `file` starts with a live WrappedFile.
    unsafe { (*(file as *const WrappedFile)).inner }
}

/// The inner file's method table.
///
/// # Safety
/// `inner` is a live file the default VFS opened successfully.
pub unsafe fn methods(inner: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    // SAFETY: a successfully opened file has a non-null, static method
    // table (SQLite's own VFS keeps them in statics).
    unsafe { &*(*inner).pMethods }
}

/// Forwards a method call to the inner file: `forward!(file, xName, args)`.
macro_rules! forward {
    ($file:expr, $method:ident $(, $arg:expr)*) => {{
        // SAFETY: SQLite calls these methods only on files the wrapping VFS
        // opened and has not closed; the inner file is the default VFS's,
        // opened in the same allocation, and takes the same arguments.
        unsafe {
            let inner = inner($file);
            match methods(inner).$method {
                Some(method) => method(inner $(, $arg)*),
                None => ffi::SQLITE_OK,
            }
        }
    }};
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xClose)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    forward!(file, xRead, buf, amount, offset)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    forward!(file, xWrite, buf, amount, offset)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_truncate(
    file: *mut ffi::sqlite3_file,
    size: ffi::sqlite3_int64,
) -> c_int {
    forward!(file, xTruncate, size)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    forward!(file, xSync, flags)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_fetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    forward!(file, xFetch, offset, amount, out)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    forward!(file, xFileSize, size)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xLock, level)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xUnlock, level)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_check_reserved_lock(
    file: *mut ffi::sqlite3_file,
    out: *mut c_int,
) -> c_int {
    forward!(file, xCheckReservedLock, out)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    forward!(file, xFileControl, op, arg)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xSectorSize)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xDeviceCharacteristics)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    forward!(file, xShmMap, region, size, extend, out)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    forward!(file, xShmLock, offset, n, flags)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: see `forward!`.
    unsafe {
        let inner = inner(file);
        if let Some(barrier) = methods(inner).xShmBarrier {
            barrier(inner);
        }
    }
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    forward!(file, xShmUnmap, delete)
}

/// Passes the call straight to the inner file.
///
/// # Safety
/// Only SQLite calls it, as a method of a file a wrapping VFS opened.
pub unsafe extern "C" fn x_unfetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    page: *mut c_void,
) -> c_int {
    forward!(file, xUnfetch, offset, page)
}

/// The methods a wrapping VFS changes; every other one passes through.
pub struct Overrides {
    pub close: unsafe extern "C" fn(*mut ffi::sqlite3_file) -> c_int,
    pub read: unsafe extern "C" fn(
        *mut ffi::sqlite3_file,
        *mut c_void,
        c_int,
        ffi::sqlite3_int64,
    ) -> c_int,
    pub write: unsafe extern "C" fn(
        *mut ffi::sqlite3_file,
        *const c_void,
        c_int,
        ffi::sqlite3_int64,
    ) -> c_int,
    pub truncate: unsafe extern "C" fn(*mut ffi::sqlite3_file, ffi::sqlite3_int64) -> c_int,
    pub sync: unsafe extern "C" fn(*mut ffi::sqlite3_file, c_int) -> c_int,
    pub fetch: unsafe extern "C" fn(
        *mut ffi::sqlite3_file,
        ffi::sqlite3_int64,
        c_int,
        *mut *mut c_void,
    ) -> c_int,
}

/// A wrapped file's method table: version 3 (the default VFS on every
/// platform offloop ships has shared memory for WAL and memory-mapped
/// I/O), `o`'s methods, and the pass-through ones above.
pub const fn io_methods(o: Overrides) -> ffi::sqlite3_io_methods {
    ffi::sqlite3_io_methods {
        iVersion: 3,
        xClose: Some(o.close),
        xRead: Some(o.read),
        xWrite: Some(o.write),
        xTruncate: Some(o.truncate),
        xSync: Some(o.sync),
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
        xFetch: Some(o.fetch),
        xUnfetch: Some(x_unfetch),
    }
}

/// Opens the inner file of a wrapped file of type `F` with the default VFS
/// `inner_vfs`, and gives the wrapped file `our_methods` when it opened
/// (SQLite calls xClose on a file whose methods are set, even when the
/// open failed: the wrapped file mirrors the inner one exactly).
///
/// # Safety
/// `file` is SQLite's allocation of the wrapping VFS's `szOsFile` bytes
/// (`register`), whose first bytes the caller has set up as an `F`
/// starting with a `WrappedFile`; `inner_vfs` is the default VFS (or
/// null before registration finished: the open fails).
pub unsafe fn open_inner<F>(
    inner_vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
    our_methods: &'static ffi::sqlite3_io_methods,
) -> c_int {
    // SAFETY: per the caller; the inner file is at inner_offset::<F>().
    unsafe {
        let inner = (file as *mut u8).add(inner_offset::<F>()) as *mut ffi::sqlite3_file;
        let head = file as *mut WrappedFile;
        (*head).base.pMethods = ptr::null();
        (*head).inner = inner;
        (*inner).pMethods = ptr::null();
        if inner_vfs.is_null() {
            return ffi::SQLITE_CANTOPEN;
        }
        let Some(open) = (*inner_vfs).xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        let rc = open(inner_vfs, name, inner, flags, out_flags);
        if !(*inner).pMethods.is_null() {
            (*head).base.pMethods = our_methods;
        }
        rc
    }
}

/// Registers a VFS named `name` (never the default) whose files are `F`s
/// wrapping the default VFS's, opened by `x_open`; returns the default VFS
/// it wraps. Every VFS-level method but xOpen is the default VFS's own,
/// which reads only the fields copied with it.
pub fn register<F>(
    name: &str,
    x_open: unsafe extern "C" fn(
        *mut ffi::sqlite3_vfs,
        *const c_char,
        *mut ffi::sqlite3_file,
        c_int,
        *mut c_int,
    ) -> c_int,
) -> Result<*mut ffi::sqlite3_vfs, String> {
    let name = CString::new(name).map_err(|e| e.to_string())?;
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
        vfs.zName = name.into_raw();
        vfs.pNext = ptr::null_mut();
        vfs.szOsFile = inner_offset::<F>() as c_int + (*inner).szOsFile;
        vfs.xOpen = Some(x_open);
        let vfs = Box::into_raw(Box::new(vfs));
        let rc = ffi::sqlite3_vfs_register(vfs, 0);
        if rc != ffi::SQLITE_OK {
            return Err(format!("the VFS could not register: {rc}"));
        }
        Ok(inner)
    }
}
