//! `db.backup(path, options)`: starts the engine's backup (its own thread
//! and connections, `offloop_engine::BackupRequest`) with its completion
//! and its progress reports addressed to this environment's completion
//! queue under the caller's call id. Progress reports do not wait for JS:
//! lib/calls.js hands each to the caller's callback as it drains. This file
//! never touches SQLite and never waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::External;
use napi_derive::napi;
use offloop_engine::{BackupRequest, Outcome};

use super::completion::Completion;
use super::database::NativeDatabase;
use super::dispatch::done_for;

/// Set to end a backup before its next step.
pub type BackupStop = Arc<AtomicBool>;

/// Starts copying `db` into `target_path` (schema `source` into schema
/// `target`, `rate` pages per step); `id` completes with the page count.
/// With `reports`, each step that leaves pages to copy sends a progress
/// record under `id` first. Returns the handle `stop_backup` takes.
#[napi(catch_unwind)]
pub fn backup(
    db: &NativeDatabase,
    id: f64,
    target_path: String,
    source: String,
    target: String,
    rate: i32,
    reports: bool,
) -> External<BackupStop> {
    let queue = db.dispatcher.queue.clone();
    db.dispatcher.release_held();
    let report = queue.clone();
    let progress: offloop_engine::Progress = Box::new(move |total, remaining| {
        if reports {
            report.report(Completion {
                id,
                flags: 0,
                result: Ok(Outcome::Progress {
                    total_pages: total,
                    remaining_pages: remaining,
                }),
                timing: None,
            });
        }
    });
    let stop = BackupStop::default();
    let request = BackupRequest {
        target_path,
        source,
        target,
        rate,
    };
    db.engine()
        .backup(request, progress, stop.clone(), done_for(&queue, id, 0));
    External::new(stop)
}

/// Ends a backup before its next step; it then rejects (lib/backup.js
/// replaces that error with the reason it stopped it for).
#[napi(catch_unwind)]
pub fn stop_backup(stop: &External<BackupStop>) {
    stop.store(true, Ordering::Release);
}
