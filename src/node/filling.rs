//! `db.filled`, `stats().restore` and the start of a paged restore's
//! fill, as addon functions: each hands the call to the database's
//! `RestoreAtOpen` (crates/replica), which does the work off the JS thread.

use napi::Result;
use napi_derive::napi;

use super::database::NativeDatabase;
use super::paged::{self, RestoreStats};
use super::replica;

/// Starts the background fill of a database opened with `restore:
/// 'paged'` (lib/restore.js calls it once the open has resolved).
#[napi(catch_unwind)]
pub fn start_fill(db: &NativeDatabase) -> Result<()> {
    paged::start(db.restore())
}

/// Completes `id` when every page is local (at once when the file was
/// never paged), or with why the fill ended without them.
#[napi(catch_unwind)]
pub fn fill_wait(db: &NativeDatabase, id: f64) {
    db.restore()
        .wait(replica::reply_to(&db.dispatcher.queue, id));
}

/// `stats().restore`: absent when the database was not opened paged.
#[napi(catch_unwind)]
pub fn restore_stats(db: &NativeDatabase) -> Option<RestoreStats> {
    paged::stats(db.restore())
}
