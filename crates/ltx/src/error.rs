//! The one error type of the format crate. It says what was wrong with the
//! bytes or with the caller's use of the encoder; it never retries or logs.

use std::fmt;
use std::io;

#[derive(Debug)]
pub enum Error {
    /// The reader or writer underneath failed.
    Io(io::Error),
    /// The bytes are not a valid LTX file (bad magic, flags, sizes, order).
    Format(String),
    /// The file checksum in the trailer does not match the file's contents.
    ChecksumMismatch { stored: u64, computed: u64 },
    /// The encoder was used against the format's rules (page out of order,
    /// wrong size, a lock page, a missing checksum).
    Usage(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn format(message: impl Into<String>) -> Self {
        Error::Format(message.into())
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "ltx: {e}"),
            Error::Format(m) => write!(f, "invalid ltx file: {m}"),
            Error::ChecksumMismatch { stored, computed } => write!(
                f,
                "ltx file checksum mismatch: trailer says {stored:016x}, contents give {computed:016x}"
            ),
            Error::Usage(m) => write!(f, "ltx encoder: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        // A file cut short reads as an unexpected end: that is a format fault.
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::Format("file ends early".into())
        } else {
            Error::Io(e)
        }
    }
}
