//! A follower's calls, as addon functions: `followStart` (once the open
//! has resolved) starts its thread and hands it the writer's queue and the
//! call that hears each applied file; `catchUp` completes on this
//! environment's queue like any call; `stats().follow` reads its counters.
//! `followPromote` and `followWatchLease` start a promotion and the lease
//! watch of `promote: 'auto'` (promote.rs). Each hands the call to the
//! database's `Follower` (crates/replica) or its promotion, which do the
//! work off the JS thread.

use std::sync::Arc;

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine as engine;
use offloop_replica::{Follower, Txid};

use super::completion::Completion;
use super::database::NativeDatabase;
use super::follow::FollowStats;
use super::promote;
use super::replica::{self, ReplicaOptions, S3Connection};

fn follower(db: &NativeDatabase) -> Result<&Follower> {
    db.follower().ok_or_else(not_following)
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
    let report = Arc::new(move |txid: Txid, pages: u64| {
        queue.report(Completion {
            id: watch_id,
            flags: 0,
            result: Ok(engine::Outcome::Progress {
                total_pages: txid.get(),
                remaining_pages: pages,
            }),
            timing: None,
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
    // TXID 0 asks for no more than any TXID does: the first.
    let txid = txid.map(|t| Txid::new(t.max(0.0) as u64).unwrap_or(Txid::FIRST));
    follower.catch_up(id.to_bits(), txid, reply);
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
    let mut stats: FollowStats = db.follower()?.stats().into();
    if let Some(promotion) = db.promotion() {
        // The lease watch's GETs count with the follower's.
        stats.get_requests += promotion.lease_gets() as f64;
        stats.last_error = stats.last_error.or_else(|| promotion.last_error());
        stats.kept_file = promotion.kept_file();
    }
    Some(stats)
}

/// Promotes the follower; completes `id` with the TXID it promoted at.
#[napi(catch_unwind)]
pub fn follow_promote(db: &NativeDatabase, id: f64, options: ReplicaOptions) -> Result<()> {
    let promotion = db.promotion().ok_or_else(not_following)?.clone();
    let reply = replica::reply_to(&db.dispatcher.queue, id);
    let Some(writer) = db.engine().writer_handle() else {
        reply(Err("the database is closed".into()));
        return Ok(());
    };
    promote::promote(promotion, writer, options, reply)
}

/// `follow: { promote: 'auto' }`: watches the replica's lease, reporting
/// to call `watch_id` (lib/promote.js) each time it may be taken.
#[napi(catch_unwind)]
pub fn follow_watch_lease(
    db: &NativeDatabase,
    watch_id: f64,
    url: String,
    poll_interval_ms: f64,
    s3: S3Connection,
) -> Result<()> {
    let promotion = db.promotion().ok_or_else(not_following)?.clone();
    let queue = db.dispatcher.queue.clone();
    let report = Box::new(move || {
        queue.report(Completion {
            id: watch_id,
            flags: 0,
            result: Ok(engine::Outcome::Progress {
                total_pages: 0,
                remaining_pages: 0,
            }),
            timing: None,
        })
    });
    let every = std::time::Duration::from_millis(poll_interval_ms.max(1.0) as u64);
    promote::watch_lease(promotion, url, s3.into(), every, report)
}

fn not_following() -> Error {
    Error::new(
        Status::GenericFailure,
        "the database does not follow a replica",
    )
}
