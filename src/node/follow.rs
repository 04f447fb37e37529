//! The `follow` open option across the boundary: the options become a
//! `Follower` (crates/replica) set up before the threads start; once the
//! open has resolved, `followStart` starts its thread and hands it the
//! writer's queue and the call that hears each applied file;
//! `catchUp` completes on this environment's queue like any call;
//! `stats().follow` reads its counters.
//!
//! Nothing here touches the database or the replica: the follower polls
//! on its own thread and applies on the writer's.

use std::sync::Arc;

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine as engine;
use offloop_replica::{FollowSettings, FollowStats as Stats, Follower};

use super::completion::Completion;
use super::database::NativeDatabase;
use super::replica::{self, replica_error, S3Connection};

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
}

impl From<Stats> for FollowStats {
    fn from(s: Stats) -> Self {
        FollowStats {
            url: s.url,
            txid: s.txid as f64,
            staleness_ms: s.staleness.as_secs_f64() * 1000.0,
            last_check_at: s.last_check_at_ms.map(|ms| ms as f64),
            applied_at: s.applied_at_ms.map(|ms| ms as f64),
            list_requests: s.list_requests as f64,
            get_requests: s.get_requests as f64,
            bytes_fetched: s.bytes_fetched as f64,
            last_error: s.last_error,
        }
    }
}

/// Sets up `settings` to follow `options` for the database at `path`.
pub fn setup(
    path: &str,
    options: FollowOptions,
    settings: &mut engine::Settings,
) -> Result<Follower> {
    let follow = FollowSettings {
        url: options.url,
        s3: options.s3.into(),
        poll_interval: std::time::Duration::from_millis(options.poll_interval_ms.max(1.0) as u64),
    };
    Follower::setup(path, follow, replica_error, settings).map_err(|e| match e {
        offloop_replica::Error::Config(m) => Error::new(Status::InvalidArg, m),
        e => Error::new(Status::GenericFailure, e.to_string()),
    })
}

fn follower(db: &NativeDatabase) -> Result<&Follower> {
    db.follower().ok_or_else(|| {
        Error::new(
            Status::GenericFailure,
            "the database does not follow a replica",
        )
    })
}

/// Starts following once the open has resolved. Each applied file is
/// reported to call `watch_id` (lib/follow.js), which stays pending and
/// keeps nothing alive: `[txid, pages]` as a progress record.
#[napi(catch_unwind)]
pub fn follow_start(db: &NativeDatabase, watch_id: f64) -> Result<()> {
    let follower = follower(db)?;
    let Some(writer) = db.engine().writer_handle() else {
        return Ok(());
    };
    let queue = db.dispatcher.queue.clone();
    let report = Arc::new(move |txid: u64, pages: u64| {
        queue.report(Completion {
            id: watch_id,
            flags: 0,
            result: Ok(engine::Outcome::Progress {
                total_pages: txid,
                remaining_pages: pages,
            }),
        });
    });
    follower
        .start(writer, Box::new(move |txid, pages| report(txid, pages)))
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}

/// Completes `id` with the TXID the database is at, once it is at `txid`
/// or later, or (no `txid`) once a check of the replica found nothing
/// more to apply.
#[napi(catch_unwind)]
pub fn follow_catch_up(db: &NativeDatabase, id: f64, txid: Option<f64>) -> Result<()> {
    let follower = follower(db)?;
    let reply = replica::reply_to(&db.dispatcher.queue, id);
    follower.catch_up(id.to_bits(), txid.map(|t| t.max(0.0) as u64), reply);
    Ok(())
}

/// Drops the catch-up made as call `id` (a timeout or an abort).
#[napi(catch_unwind)]
pub fn follow_cancel(db: &NativeDatabase, id: f64) {
    if let Some(follower) = db.follower() {
        follower.cancel(id.to_bits());
    }
}

/// Ms since the follower last knew it held the replica's newest TXID.
#[napi(catch_unwind)]
pub fn follow_staleness(db: &NativeDatabase) -> f64 {
    db.follower()
        .map_or(0.0, |f| f.staleness().as_secs_f64() * 1000.0)
}

/// `stats().follow`: absent when the database does not follow.
#[napi(catch_unwind)]
pub fn follow_stats(db: &NativeDatabase) -> Option<FollowStats> {
    db.follower().map(|f| f.stats().into())
}
