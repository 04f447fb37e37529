//! The `follow` open option across the boundary: the options become a
//! `Follower` (crates/replica) set up before the threads start, and its
//! counters become `stats().follow` (the calls are in `following.rs`).
//!
//! Nothing here touches the database or the replica: the follower polls
//! on its own thread and applies on the writer's, and the old primary's
//! rejoin (`set_aside`) runs on the writer's thread before it opens.

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine as engine;
use offloop_replica::{set_aside, FollowSettings, FollowStats as Stats, Follower};
use std::sync::{Arc, Mutex};

use super::replica::{replica_error, S3Connection};

/// `options.follow`, validated by lib/options.js (which keeps
/// `maxStaleness` to itself: reads are refused on the JS side).
#[napi(object)]
pub struct FollowOptions {
    pub url: String,
    pub poll_interval_ms: f64,
    pub s3: S3Connection,
}

#[napi(object)]
pub struct FollowStats {
    pub url: String,
    pub txid: f64,
    pub staleness_ms: f64,
    pub last_check_at: Option<f64>,
    pub applied_at: Option<f64>,
    pub list_requests: f64,
    pub get_requests: f64,
    pub bytes_fetched: f64,
    pub last_error: Option<String>,
    /// Where the open set aside this path's earlier file, a writer's of
    /// this replica (the old primary's rejoin).
    pub kept_file: Option<String>,
}

impl From<Stats> for FollowStats {
    fn from(s: Stats) -> Self {
        FollowStats {
            url: s.url,
            txid: s.txid.map_or(0.0, |t| t.get() as f64),
            staleness_ms: s.staleness.as_secs_f64() * 1000.0,
            last_check_at: s.last_check_at_ms.map(|ms| ms as f64),
            applied_at: s.applied_at_ms.map(|ms| ms as f64),
            list_requests: s.list_requests as f64,
            get_requests: s.get_requests as f64,
            bytes_fetched: s.bytes_fetched as f64,
            last_error: s.last_error,
            kept_file: None,
        }
    }
}

/// Where a rejoin set the earlier file aside, once the open did.
pub type Kept = Arc<Mutex<Option<String>>>;

/// Sets up `settings` to follow `options` for the database at `path`;
/// `paged`: a missing file is restored page by page (`settings` holds that
/// restore's work already). Before the follower puts its file in place, a
/// file that was this replica's own writer's is set aside (`kept` hears
/// where).
pub fn setup(
    path: &str,
    options: FollowOptions,
    paged: bool,
    settings: &mut engine::Settings,
    kept: Kept,
) -> Result<Follower> {
    let url = options.url.clone();
    let follow = FollowSettings {
        url: options.url,
        s3: options.s3.into(),
        poll_interval: std::time::Duration::from_millis(options.poll_interval_ms.max(1.0) as u64),
        paged,
    };
    let follower = Follower::setup(path, follow, replica_error, settings).map_err(|e| match e {
        offloop_replica::Error::Config(m) => Error::new(Status::InvalidArg, m),
        e => Error::new(Status::GenericFailure, e.to_string()),
    })?;
    if let Some(put_in_place) = settings.before_open.take() {
        let db = std::path::PathBuf::from(path);
        settings.before_open = Some(engine::BeforeOpen(Arc::new(move || {
            let aside = || set_aside(&db, &url);
            let moved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(aside))
                .unwrap_or_else(|_| Err(std::io::Error::other("offloop internal error: a panic")))
                .map_err(|e| {
                    replica_error(format!(
                        "{} was this replica's writer and could not be set aside: {e}",
                        db.display()
                    ))
                })?;
            if let Some(at) = moved {
                *kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(at.display().to_string());
            }
            (put_in_place.0)()
        })));
    }
    Ok(follower)
}
