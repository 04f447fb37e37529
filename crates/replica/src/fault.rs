//! `StoreError`: a failed replica operation, with its [`Fault`], the one
//! thing callers look at to decide whether to retry, give up or treat the
//! answer as a fact (a file that is not there, a name already taken).
//!
//! The backend's error is sorted into a fault here and nowhere else, from
//! `object_store`'s error variants and, where S3 reports a fault only in its
//! error code (`NoSuchBucket`, `InvalidAccessKeyId`, ...), from that code.
//! The message keeps naming the operation, the object and the backend's
//! cause, as users read it in `lastError`.

use std::fmt;

/// What kind of failure a store operation met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The file (or object) does not exist.
    NotFound,
    /// The bucket does not exist.
    NoBucket,
    /// The credentials were refused or do not allow the operation.
    Denied,
    /// A conditional write found the name taken, or the object changed
    /// since it was read (S3 412, a folder's existing file).
    Conflict,
    /// The replica cannot be used as configured (an operation the backend
    /// does not support, a path that is not a folder).
    Config,
    /// The replica answered with something that cannot be right (a file
    /// that changed size while it was read).
    Corrupt,
    /// A local file the operation reads or writes failed.
    Local,
    /// The replica is down, slow or failed for a reason that may pass.
    Unavailable,
}

impl Fault {
    /// Whether retrying the same operation can never help: the replica's
    /// configuration or credentials must change first.
    pub fn is_permanent(self) -> bool {
        matches!(self, Fault::NoBucket | Fault::Denied | Fault::Config)
    }
}

/// A failed store operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    pub fault: Fault,
    /// What was being done: `list`, `read`, `write`, `delete`, ...
    pub op: &'static str,
    /// The object or folder it was done to.
    pub object: String,
    /// The backend's own words.
    pub cause: String,
}

impl StoreError {
    pub fn new(
        fault: Fault,
        op: &'static str,
        object: impl Into<String>,
        cause: impl Into<String>,
    ) -> Self {
        StoreError {
            fault,
            op,
            object: object.into(),
            cause: cause.into(),
        }
    }

    /// A failure of this machine's own file `path` (the file to upload),
    /// not of the replica.
    pub(crate) fn local(op: &'static str, path: &std::path::Path, e: std::io::Error) -> Self {
        let cause = offloop_engine::explain_os_error(&e);
        StoreError::new(Fault::Local, op, path.display().to_string(), cause)
    }

    /// An `object_store` error, sorted into its fault.
    pub(crate) fn from_backend(op: &'static str, object: &str, e: object_store::Error) -> Self {
        let cause = offloop_engine::explain_os_error(&e);
        let has = |codes: &[&str]| codes.iter().any(|c| cause.contains(c));
        let fault = if has(&["NoSuchBucket"]) {
            Fault::NoBucket
        } else {
            match e {
                object_store::Error::NotFound { .. } => Fault::NotFound,
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. } => Fault::Conflict,
                object_store::Error::PermissionDenied { .. }
                | object_store::Error::Unauthenticated { .. } => Fault::Denied,
                object_store::Error::NotSupported { .. }
                | object_store::Error::NotImplemented { .. }
                | object_store::Error::InvalidPath { .. } => Fault::Config,
                _ if has(&[
                    "InvalidAccessKeyId",
                    "SignatureDoesNotMatch",
                    "AccessDenied",
                ]) =>
                {
                    Fault::Denied
                }
                _ => Fault::Unavailable,
            }
        };
        StoreError::new(fault, op, object, cause)
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let StoreError {
            op, object, cause, ..
        } = self;
        match self.fault {
            Fault::NotFound => write!(f, "replica: {object} not found"),
            Fault::NoBucket => write!(
                f,
                "replica {op}: the bucket does not exist ({object}): {cause}"
            ),
            Fault::Denied => write!(
                f,
                "replica {op}: access denied, check the credentials ({object}): {cause}"
            ),
            Fault::Conflict if *op == "replace" => {
                write!(f, "replica {op}: {object} changed: {cause}")
            }
            Fault::Conflict => write!(f, "replica {op}: {object} already exists: {cause}"),
            _ => write!(f, "replica {op}: {object}: {cause}"),
        }
    }
}

impl std::error::Error for StoreError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(text: &str) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: text.into(),
        }
    }

    #[test]
    fn faults_come_from_the_backends_error_not_from_our_message() {
        let sort = |e| StoreError::from_backend("read", "b/x", e).fault;
        assert_eq!(
            sort(object_store::Error::NotFound {
                path: "x".into(),
                source: "404".into()
            }),
            Fault::NotFound
        );
        assert_eq!(
            sort(object_store::Error::NotFound {
                path: "x".into(),
                source: "NoSuchBucket".into()
            }),
            Fault::NoBucket
        );
        assert_eq!(
            sort(object_store::Error::Precondition {
                path: "x".into(),
                source: "412".into()
            }),
            Fault::Conflict
        );
        assert_eq!(
            sort(object_store::Error::AlreadyExists {
                path: "x".into(),
                source: "exists".into()
            }),
            Fault::Conflict
        );
        assert_eq!(sort(generic("InvalidAccessKeyId")), Fault::Denied);
        assert_eq!(sort(generic("connection refused")), Fault::Unavailable);
    }

    /// What a folder replica's store wraps the file's own error in: its
    /// local error, whose source is the OS's.
    #[derive(Debug)]
    struct UnableToOpenFile(std::io::Error);

    impl fmt::Display for UnableToOpenFile {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Unable to open file b/x: {}", self.0)
        }
    }

    impl std::error::Error for UnableToOpenFile {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_store_out_of_descriptors_says_what_to_change() {
        const EMFILE: i32 = 24;
        let emfile = || std::io::Error::from_raw_os_error(EMFILE);
        for source in [
            Box::new(UnableToOpenFile(emfile())) as Box<dyn std::error::Error + Send + Sync>,
            Box::new(std::io::Error::other(emfile())),
        ] {
            let error = StoreError::from_backend(
                "write",
                "b/x",
                object_store::Error::Generic {
                    store: "LocalFileSystem",
                    source,
                },
            );
            assert_eq!(error.fault, Fault::Unavailable);
            let text = error.to_string();
            assert!(
                text.contains("lower Database.configure({ connections }), or raise the limit"),
                "{text}"
            );
        }
        let other = StoreError::from_backend("write", "b/x", generic("connection refused"));
        assert!(!other.to_string().contains("Database.configure"));
    }

    #[test]
    fn only_configuration_and_credentials_are_permanent() {
        for fault in [Fault::NoBucket, Fault::Denied, Fault::Config] {
            assert!(fault.is_permanent(), "{fault:?}");
        }
        for fault in [
            Fault::NotFound,
            Fault::Conflict,
            Fault::Corrupt,
            Fault::Local,
            Fault::Unavailable,
        ] {
            assert!(!fault.is_permanent(), "{fault:?}");
        }
    }
}
