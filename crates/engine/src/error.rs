//! The one error type the engine reports. It carries what a caller needs to
//! build a `node:sqlite`-shaped error: SQLite's extended result code and
//! message, or a misuse kind with Node's error code.

use std::fmt;

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

/// SQLite says only "disk I/O error" when a page of a database being
/// restored page by page could not be read: add why (offloop's paged VFS
/// recorded it on this thread).
fn with_read_detail(code: i32, message: String) -> String {
    if code != ffi::SQLITE_IOERR_READ {
        return message;
    }
    match offloop_vfs::take_read_error() {
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
