//! The one error type of the replica crate: what went wrong talking to the
//! replica, with the replica's data, or with the restore's output. Messages
//! name the file or object involved; nothing here retries.

use std::fmt;
use std::io;
use std::path::PathBuf;

use offloop_engine::explain_os_error;

use crate::fault::{Fault, StoreError};

#[derive(Debug)]
pub enum Error {
    /// The replica URL or an S3 option cannot be used.
    Config(String),
    /// The replica store refused or failed an operation; its fault says
    /// whether retrying can help.
    Store(StoreError),
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
    /// The replicator's local state cannot be used (it failed to open, or
    /// the thread that owns it is gone).
    State(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether retrying cannot help until something outside changes: the
    /// URL, the credentials, the bucket, or the local state.
    pub fn is_permanent(&self) -> bool {
        match self {
            Error::Config(_) | Error::State(_) => true,
            Error::Store(e) => e.fault.is_permanent(),
            _ => false,
        }
    }

    /// The store's fault behind this error, if the store failed.
    pub fn fault(&self) -> Option<Fault> {
        match self {
            Error::Store(e) => Some(e.fault),
            _ => None,
        }
    }

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
            Error::Store(e) => e.fmt(f),
            Error::Ltx { file, source } => write!(f, "replica file {file}: {source}"),
            Error::Plan(m) => write!(f, "restore: {m}"),
            Error::Verify(m) => write!(f, "restore: {m}"),
            Error::Exists(p) => write!(
                f,
                "restore: {} already exists (pass overwrite to replace it)",
                p.display()
            ),
            Error::Io { what, source } => write!(f, "{what}: {}", explain_os_error(source)),
            Error::Panic(m) => write!(f, "replica thread panicked: {m}"),
            Error::State(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Ltx { source, .. } => Some(source),
            Error::Io { source, .. } => Some(source),
            Error::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}
