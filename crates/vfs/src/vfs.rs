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
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::ffi;

use crate::paged::Paged;
use offloop_file::wrap::{self, WrappedFile};

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

/// One open file: the wrapped file's head, then the `Paged` it is read
/// through (an `Arc` turned raw, null for a file that passes through); the
/// default VFS's file follows in the same allocation.
#[repr(C)]
struct PagedFile {
    head: WrappedFile,
    paged: *const Paged,
}

/// The `Paged` of a file still being filled.
///
/// # Safety
/// `file` is a `PagedFile` this VFS opened and SQLite has not closed.
unsafe fn filling<'a>(file: *mut ffi::sqlite3_file) -> Option<&'a Paged> {
    // SAFETY: per the caller, `file` points to a live PagedFile whose
    // `paged`, when set, is an Arc this file holds until xClose.
    unsafe { (*(file as *const PagedFile)).paged.as_ref() }.filter(|p| !p.is_filled())
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
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    let rc = unsafe { wrap::x_close(file) };
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
    // SAFETY: SQLite calls this on a file this VFS opened.
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
    let Some(paged) = (unsafe { filling(file) }) else {
        // SAFETY: passed on as SQLite called it, on a file this VFS opened.
        return unsafe { wrap::x_write(file, buf, amount, offset) };
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
            // SAFETY: passed on as SQLite called it, on a file this VFS opened.
            let rc = unsafe { wrap::x_write(file, buf, amount, offset) };
            (rc, rc == ffi::SQLITE_OK)
        })
    })
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: SQLite calls this on a file this VFS opened.
    let Some(paged) = (unsafe { filling(file) }) else {
        // SAFETY: passed on as SQLite called it, on a file this VFS opened.
        return unsafe { wrap::x_truncate(file, size) };
    };
    let pages = size.div_euclid(i64::from(paged.page_size()));
    guarded(ffi::SQLITE_IOERR_TRUNCATE, || {
        paged.truncated(u32::try_from(pages).unwrap_or(u32::MAX), || {
            // SAFETY: passed on as SQLite called it, on a file this VFS opened.
            let rc = unsafe { wrap::x_truncate(file, size) };
            (rc, rc == ffi::SQLITE_OK)
        })
    })
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: passed on as SQLite called it, on a file this VFS opened.
    let rc = unsafe { wrap::x_sync(file, flags) };
    // SAFETY: SQLite calls this on a file this VFS opened.
    if let (ffi::SQLITE_OK, Some(paged)) = (rc, unsafe { filling(file) }) {
        return guarded(ffi::SQLITE_IOERR_FSYNC, || match paged.save() {
            Ok(()) => ffi::SQLITE_OK,
            Err(_) => ffi::SQLITE_IOERR_FSYNC,
        });
    }
    rc
}

unsafe extern "C" fn x_fetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // A mapped page would bypass xRead and show a hole: while the file is
    // being filled, map nothing, so SQLite reads with xRead.
    // SAFETY: SQLite calls this on a file this VFS opened; `out` is its
    // out-pointer for this call.
    if unsafe { filling(file) }.is_some() {
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
    let paged = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 && !name.is_null() {
        // SAFETY: SQLite passes a NUL-terminated full path for a named file.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        installed(&name).filter(|p| !p.is_filled())
    } else {
        None
    };
    // SAFETY: SQLite hands us `szOsFile` bytes at `file` (see `register`),
    // which start as a PagedFile; the inner VFS is the default one.
    unsafe {
        (*(file as *mut PagedFile)).paged = ptr::null();
        let rc = wrap::open_inner::<PagedFile>(
            INNER.load(Ordering::Acquire),
            name,
            file,
            flags,
            out_flags,
            &METHODS,
        );
        if !(*file).pMethods.is_null() {
            if let Some(paged) = paged {
                (*(file as *mut PagedFile)).paged = Arc::into_raw(paged);
            }
        }
        rc
    }
}

/// Registers `offloop-paged` once per process (never as the default VFS);
/// later calls report the first one's result.
pub fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let inner = wrap::register::<PagedFile>(VFS_NAME, x_open)?;
            INNER.store(inner, Ordering::Release);
            Ok(())
        })
        .clone()
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
