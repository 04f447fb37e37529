//! The `offloop-paged` VFS: the platform's default VFS, with the main
//! database files that are being filled (`paged::install`) read through
//! their `Paged`. Every other file, and every file once filled, passes
//! straight through.
//!
//! For a file being filled:
//! - a read first brings its missing pages in (on the thread that reads:
//!   one of offloop's, never the event loop's);
//! - a write marks its pages local, so the fill never overwrites them;
//! - a sync also makes the map of local pages durable;
//! - memory-mapped reads are refused (they would bypass xRead), so SQLite
//!   reads those pages with xRead.
//!
//! It never changes the bytes that pass through it and never decides
//! where a page comes from.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::mem::size_of;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::ffi;

use crate::paged::Paged;

/// The name connections give to use this VFS.
pub const VFS_NAME: &str = "offloop-paged";

thread_local! {
    /// Why this thread's last read of a page failed, for the error SQLite
    /// reports next (it knows only "disk I/O error").
    static READ_ERROR: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Takes why the last page read on this thread failed, if one did since
/// the last call: the detail of the `SQLITE_IOERR_READ` SQLite returns.
pub fn take_read_error() -> Option<String> {
    READ_ERROR.with(|e| e.borrow_mut().take())
}

/// The default VFS this one wraps; set once by `register`.
static INNER: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

/// One open file: SQLite's header (our methods), the `Paged` it is read
/// through (an `Arc` turned raw, null for a file that passes through), and
/// the default VFS's file, in the same allocation right after this struct.
#[repr(C)]
struct PagedFile {
    base: ffi::sqlite3_file,
    paged: *const Paged,
    inner: *mut ffi::sqlite3_file,
}

const INNER_OFFSET: usize = size_of::<PagedFile>().div_ceil(8) * 8;

/// # Safety
/// `file` is a `PagedFile` this VFS opened and SQLite has not closed.
unsafe fn parts<'a>(file: *mut ffi::sqlite3_file) -> (Option<&'a Paged>, *mut ffi::sqlite3_file) {
    // SAFETY: per the caller, `file` points to a live PagedFile whose
    // `paged`, when set, is an Arc this file holds until xClose.
    unsafe {
        let f = &*(file as *const PagedFile);
        (f.paged.as_ref(), f.inner)
    }
}

/// The `Paged` of a file still being filled.
///
/// # Safety
/// As `parts`.
unsafe fn filling<'a>(file: *mut ffi::sqlite3_file) -> Option<&'a Paged> {
    // SAFETY: per the caller.
    unsafe { parts(file) }.0.filter(|p| !p.is_filled())
}

/// # Safety
/// `inner` is a live file the default VFS opened successfully.
unsafe fn methods(inner: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    // SAFETY: a successfully opened file has a non-null, static method
    // table (SQLite's own VFS keeps them in statics).
    unsafe { &*(*inner).pMethods }
}

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

/// The pages a byte range touches, 1-based and inclusive.
fn pages_of(paged: &Paged, offset: i64, amount: c_int) -> (u32, u32) {
    let size = i64::from(paged.page_size());
    let first = offset / size + 1;
    let last = (offset + i64::from(amount.max(1)) - 1) / size + 1;
    (
        u32::try_from(first).unwrap_or(u32::MAX),
        u32::try_from(last).unwrap_or(u32::MAX),
    )
}

/// Runs `f`, turning a panic into `fallback` (no unwinding into SQLite).
fn guarded(fallback: c_int, f: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let rc = forward!(file, xClose);
    // SAFETY: the file is live until this call returns; the Arc was made
    // raw by x_open and is released exactly once, here.
    unsafe {
        let f = file as *mut PagedFile;
        if !(*f).paged.is_null() {
            drop(Arc::from_raw((*f).paged));
            (*f).paged = ptr::null();
        }
    }
    rc
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see `forward!`.
    if let Some(paged) = unsafe { filling(file) } {
        let rc = guarded(ffi::SQLITE_IOERR_READ, || {
            let (first, last) = pages_of(paged, offset, amount);
            match paged.ensure(first, last) {
                Ok(()) => ffi::SQLITE_OK,
                Err(why) => {
                    READ_ERROR.with(|e| *e.borrow_mut() = Some(why));
                    ffi::SQLITE_IOERR_READ
                }
            }
        });
        if rc != ffi::SQLITE_OK {
            return rc;
        }
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
    let Some(paged) = (unsafe { filling(file) }) else {
        return forward!(file, xWrite, buf, amount, offset);
    };
    guarded(ffi::SQLITE_IOERR_WRITE, || {
        let (first, last) = pages_of(paged, offset, amount);
        let size = i64::from(paged.page_size());
        // A page written in part keeps the rest of its bytes: bring it in
        // first.
        let end = offset + i64::from(amount);
        let partial_first = offset % size != 0;
        let partial_last = end % size != 0;
        for (partial, pgno) in [(partial_first, first), (partial_last, last)] {
            if partial && paged.ensure(pgno, pgno).is_err() {
                return ffi::SQLITE_IOERR_WRITE;
            }
        }
        paged.written(first, last, || {
            let rc = forward!(file, xWrite, buf, amount, offset);
            (rc, rc == ffi::SQLITE_OK)
        })
    })
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let rc = forward!(file, xTruncate, size);
    // SAFETY: see `forward!`.
    if let (ffi::SQLITE_OK, Some(paged)) = (rc, unsafe { filling(file) }) {
        let pages = size.div_euclid(i64::from(paged.page_size()));
        paged.truncated(u32::try_from(pages).unwrap_or(u32::MAX));
    }
    rc
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let rc = forward!(file, xSync, flags);
    // SAFETY: see `forward!`.
    if let (ffi::SQLITE_OK, Some(paged)) = (rc, unsafe { filling(file) }) {
        return guarded(ffi::SQLITE_IOERR_FSYNC, || match paged.save() {
            Ok(()) => ffi::SQLITE_OK,
            Err(_) => ffi::SQLITE_IOERR_FSYNC,
        });
    }
    rc
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
    // A mapped page would bypass xRead and show a hole: while the file is
    // being filled, map nothing, so SQLite reads with xRead.
    // SAFETY: see `forward!`; `out` is SQLite's out-pointer for this call.
    if unsafe { filling(file) }.is_some() {
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
    let paged = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 && !name.is_null() {
        // SAFETY: SQLite passes a NUL-terminated full path for a named file.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        installed(&name).filter(|p| !p.is_filled())
    } else {
        None
    };
    // SAFETY: SQLite hands us `szOsFile` bytes at `file`: a PagedFile, then
    // the inner file at INNER_OFFSET (szOsFile counts both, see
    // `register`). The inner VFS is the default one, live for the process.
    unsafe {
        let inner = (file as *mut u8).add(INNER_OFFSET) as *mut ffi::sqlite3_file;
        let f = file as *mut PagedFile;
        (*f).base.pMethods = ptr::null();
        (*f).paged = ptr::null();
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
            if let Some(paged) = paged {
                (*f).paged = Arc::into_raw(paged);
            }
        }
        rc
    }
}

/// Registers `offloop-paged` once per process (never as the default VFS);
/// later calls report the first one's result.
pub fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED.get_or_init(register_once).clone()
}

fn register_once() -> Result<(), String> {
    // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS, which lives
    // for the process; the copy is leaked so it lives as long, as
    // sqlite3_vfs_register requires, and its name is leaked with it. Every
    // VFS-level method but xOpen is the default VFS's own, which reads
    // only the fields copied with it.
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
        let name = CString::new(VFS_NAME).map_err(|e| e.to_string())?;
        vfs.zName = name.into_raw();
        vfs.pNext = ptr::null_mut();
        vfs.szOsFile = INNER_OFFSET as c_int + (*inner).szOsFile;
        vfs.xOpen = Some(x_open);
        INNER.store(inner, Ordering::Release);
        let vfs = Box::into_raw(Box::new(vfs));
        let rc = ffi::sqlite3_vfs_register(vfs, 0);
        if rc != ffi::SQLITE_OK {
            return Err(format!("the paged VFS could not register: {rc}"));
        }
    }
    Ok(())
}

/// The full path SQLite opens `path` by (symbolic links resolved as the
/// default VFS resolves them), which names the file in `install`.
fn full_pathname(path: &Path) -> Result<String, String> {
    register()?;
    let inner = INNER.load(Ordering::Acquire);
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
    // SAFETY: the default VFS is live for the process; the buffer holds
    // mxPathname + 1 bytes as xFullPathname requires, and is NUL-terminated
    // by it on success.
    unsafe {
        let size = (*inner).mxPathname.max(1) as usize + 1;
        let mut out = vec![0 as c_char; size];
        let Some(full) = (*inner).xFullPathname else {
            return Err("the default VFS has no xFullPathname".into());
        };
        let rc = full(inner, c_path.as_ptr(), size as c_int, out.as_mut_ptr());
        if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_OK_SYMLINK {
            return Err(format!(
                "cannot resolve {}: SQLite error {rc}",
                path.display()
            ));
        }
        Ok(CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The files being filled, by the full path SQLite opens them with.
static REGISTRY: Mutex<Option<HashMap<String, Arc<Paged>>>> = Mutex::new(None);

/// Makes connections opened with the paged VFS on `paged`'s file read
/// through it. Fails when that file is being filled already.
pub fn install(paged: &Arc<Paged>) -> Result<(), String> {
    let key = full_pathname(paged.db_path())?;
    let mut registry = lock(&REGISTRY);
    let map = registry.get_or_insert_with(HashMap::new);
    if map.contains_key(&key) {
        return Err(format!(
            "{} is being restored already",
            paged.db_path().display()
        ));
    }
    map.insert(key, paged.clone());
    Ok(())
}

/// Whether the file at `path` is being filled (installed and not yet
/// uninstalled).
pub fn is_installed(path: &Path) -> bool {
    full_pathname(path).is_ok_and(|key| installed(&key).is_some())
}

/// Forgets `paged` (connections open on it keep it until they close).
pub fn uninstall(paged: &Arc<Paged>) {
    let mut registry = lock(&REGISTRY);
    if let Some(map) = registry.as_mut() {
        map.retain(|_, p| !Arc::ptr_eq(p, paged));
    }
}

fn installed(full_path: &str) -> Option<Arc<Paged>> {
    lock(&REGISTRY).as_ref()?.get(full_path).cloned()
}
