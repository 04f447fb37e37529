//! The `restore` open option across the boundary: the options become a
//! `RestoreAtOpen` (crates/replica), which puts a missing file in place
//! before the first connection opens and fills a paged restore in the
//! background; `stats().restore` is its `FillStats` as a JS object.
//!
//! Nothing here touches a file or the replica: the restore runs on the
//! writer's thread, the fill on a thread of its own.

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine as engine;
use offloop_replica::{FillStats, RestoreAtOpen, RestoreMode, RestoreSource};

use super::replica::{replica_error, S3Connection};

#[napi(object)]
pub struct RestoreStats {
    pub pages_local: f64,
    pub pages_total: f64,
    pub bytes_fetched: f64,
    pub requests: f64,
    pub filled: bool,
    pub last_error: Option<String>,
}

impl From<FillStats> for RestoreStats {
    fn from(s: FillStats) -> Self {
        RestoreStats {
            pages_local: f64::from(s.pages_local),
            pages_total: f64::from(s.pages_total),
            bytes_fetched: s.bytes_fetched as f64,
            requests: s.requests as f64,
            filled: s.filled,
            last_error: s.last_error,
        }
    }
}

/// Sets up `settings` for the database at `path` with `restore` ('paged'
/// or 'full', validated by lib/options.js) from the replica at `from` (the
/// `replica` option's, or a `follower`'s `follow` option's).
pub fn setup(
    path: &str,
    restore: Option<&str>,
    from: Option<(&str, &S3Connection)>,
    follower: bool,
    settings: &mut engine::Settings,
) -> Result<RestoreAtOpen> {
    let source = match (restore, from) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(Error::new(
                Status::InvalidArg,
                "`restore` needs the `replica` option".to_string(),
            ))
        }
        (Some(mode), Some((url, s3))) => Some(RestoreSource {
            mode: if mode == "full" {
                RestoreMode::Full
            } else {
                RestoreMode::Paged
            },
            url: url.to_string(),
            s3: s3.clone().into(),
            follower,
        }),
    };
    RestoreAtOpen::setup(path, source, replica_error, settings).map_err(|e| match e {
        offloop_replica::Error::Config(m) => Error::new(Status::InvalidArg, m),
        e => Error::new(Status::GenericFailure, e.to_string()),
    })
}

/// `stats().restore`: `None` when the database was not opened paged.
pub fn stats(restore: &RestoreAtOpen) -> Option<RestoreStats> {
    restore.stats().map(RestoreStats::from)
}

/// Starts the background fill, once.
pub fn start(restore: &RestoreAtOpen) -> Result<()> {
    restore
        .start()
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}
