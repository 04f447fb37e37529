//! The one error type of the replica crate: what went wrong talking to the
//! replica, with the replica's data, or with the restore's output. Messages
//! name the file or object involved; nothing here retries.

use std::fmt;
use std::io;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// The replica URL or an S3 option cannot be used.
    Config(String),
    /// The replica store refused or failed an operation.
    Store { op: &'static str, message: String },
    /// An LTX file that should exist does not.
    NotFound(String),
    /// An LTX file is damaged or not what its name says.
    Ltx {
        file: String,
        source: offloop_ltx::Error,
    },
    /// The replica cannot reach the requested point (nothing there, a gap).
    Plan(String),
    /// The restored database is not what the replica describes.
    Verify(String),
    /// The output path already exists and overwriting was not asked for.
    Exists(PathBuf),
    /// A local file operation failed.
    Io { what: String, source: io::Error },
    /// A thread panicked; the message is the panic's.
    Panic(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) => write!(f, "replica: {m}"),
            Error::Store { op, message } => write!(f, "replica {op}: {message}"),
            Error::NotFound(m) => write!(f, "replica: {m} not found"),
            Error::Ltx { file, source } => write!(f, "replica file {file}: {source}"),
            Error::Plan(m) => write!(f, "restore: {m}"),
            Error::Verify(m) => write!(f, "restore: {m}"),
            Error::Exists(p) => write!(
                f,
                "restore: {} already exists (pass overwrite to replace it)",
                p.display()
            ),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Panic(m) => write!(f, "replica thread panicked: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Ltx { source, .. } => Some(source),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
