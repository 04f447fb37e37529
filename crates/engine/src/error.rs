//! The one error type the engine reports. It carries what a caller needs to
//! build a `node:sqlite`-shaped error: SQLite's extended result code and
//! message, or a misuse kind with Node's error code.

use std::fmt;
use std::sync::OnceLock;

use rusqlite::ffi;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// SQLite said no. `code` is the extended result code.
    Sqlite { code: i32, message: String },
    /// The caller did something `node:sqlite` reports with a Node error code
    /// (`ERR_INVALID_STATE`, `ERR_INVALID_ARG_TYPE`, ...).
    Misuse { code: &'static str, message: String },
    /// The call was cancelled before or while it ran.
    Aborted { message: String },
    /// Work panicked on a SQLite thread; the thread survived.
    Panic { message: String },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn sqlite(code: i32, message: impl Into<String>) -> Self {
        Error::Sqlite {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_state(message: impl Into<String>) -> Self {
        Error::Misuse {
            code: "ERR_INVALID_STATE",
            message: message.into(),
        }
    }

    pub fn closed() -> Self {
        Error::invalid_state("database is not open")
    }

    /// Reads the connection's last error. Call it right after the failing
    /// call, on the thread that owns the connection.
    ///
    /// # Safety
    /// `db` must be a live connection handle used only by this thread.
    pub unsafe fn from_handle(db: *mut ffi::sqlite3) -> Self {
        // SAFETY: the caller guarantees `db` is live and ours; errmsg returns
        // a NUL-terminated string owned by the connection, copied at once.
        let (code, message) = unsafe {
            let code = ffi::sqlite3_extended_errcode(db);
            let msg = ffi::sqlite3_errmsg(db);
            (code, cstr_to_string(msg))
        };
        Error::Sqlite {
            code,
            message: with_read_detail(code, message),
        }
    }

    /// The short English text SQLite gives a result code (`sqlite3_errstr`).
    pub fn errstr(code: i32) -> String {
        // SAFETY: sqlite3_errstr returns a static NUL-terminated string for
        // any code, known or not.
        unsafe { cstr_to_string(ffi::sqlite3_errstr(code)) }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Self {
        match err {
            rusqlite::Error::SqliteFailure(e, msg) => Error::Sqlite {
                code: e.extended_code,
                message: with_read_detail(
                    e.extended_code,
                    msg.unwrap_or_else(|| Error::errstr(e.extended_code)),
                ),
            },
            other => Error::Sqlite {
                code: ffi::SQLITE_ERROR,
                message: other.to_string(),
            },
        }
    }
}

/// The read-error detail hook: see `explain_read_errors`.
static READ_DETAIL: OnceLock<fn() -> Option<String>> = OnceLock::new();

/// Lets a VFS say why a read failed. SQLite reports only "disk I/O error"
/// (`SQLITE_IOERR_READ`); when a connection gets one, the engine calls
/// `detail` on that connection's thread and appends what it returns to
/// the message. `detail` takes what the VFS recorded on the calling thread
/// (so a detail is reported once), or returns `None`.
///
/// The VFS's user installs it (for offloop, the paged restore in
/// offloop-replica, with the paged VFS's); the engine knows nothing of the
/// VFS behind it. The first registration stays for the process.
pub fn explain_read_errors(detail: fn() -> Option<String>) {
    // A second registration is the same function again, or a mistake the
    // first keeps working through: either way nothing to report.
    let _ = READ_DETAIL.set(detail);
}

/// A read error's message, with the VFS's detail if it left one.
fn with_read_detail(code: i32, message: String) -> String {
    if code != ffi::SQLITE_IOERR_READ {
        return message;
    }
    match READ_DETAIL.get().and_then(|detail| detail()) {
        Some(why) => format!("{message}: {why}"),
        None => message,
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sqlite { message, .. }
            | Error::Misuse { message, .. }
            | Error::Aborted { message }
            | Error::Panic { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

/// # Safety
/// `ptr` is null or points to a NUL-terminated string alive for this call.
pub(crate) unsafe fn cstr_to_string(ptr: *const std::os::raw::c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated per the caller's contract.
    unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    thread_local! {
        static WHY: RefCell<Option<String>> = const { RefCell::new(None) };
    }

    fn take_why() -> Option<String> {
        WHY.with(|w| w.borrow_mut().take())
    }

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), None)
    }

    #[test]
    fn a_read_error_carries_the_detail_the_registered_hook_gives_once() {
        explain_read_errors(take_why);
        WHY.with(|w| *w.borrow_mut() = Some("page 7 is not local yet".into()));
        let err = Error::from(failure(ffi::SQLITE_IOERR_READ));
        assert_eq!(err.to_string(), "disk I/O error: page 7 is not local yet");
        let again = Error::from(failure(ffi::SQLITE_IOERR_READ));
        assert_eq!(
            again.to_string(),
            "disk I/O error",
            "a detail is reported once"
        );

        WHY.with(|w| *w.borrow_mut() = Some("not for writes".into()));
        let write = Error::from(failure(ffi::SQLITE_IOERR_WRITE));
        assert_eq!(write.to_string(), "disk I/O error");
    }
}
