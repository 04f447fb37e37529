//! A backup stepped from JS (offloop/sqlite3's `Backup`): opens the
//! engine's stepped backup (`offloop_engine::SteppedBackup`, its own thread
//! and connections) and sends it steps and its finish, each answered on
//! this environment's completion queue under the caller's call id. A step
//! sends its progress first (a PROGRESS record: `pageCount, remaining`),
//! then its result: nothing (`SQLITE_OK`), the page count (`SQLITE_DONE`),
//! or the step's SQLite error. This file never touches SQLite and never
//! waits.

use std::sync::Arc;

use napi::bindgen_prelude::External;
use napi_derive::napi;
use offloop_engine::{self as engine, Outcome, SteppedBackup, SteppedRequest};

use super::completion::{Completion, CompletionQueue};
use super::database::NativeDatabase;
use super::dispatch::done_for;

/// The stepped backup and the queue its answers go to.
pub struct BackupSteps {
    backup: SteppedBackup,
    queue: Arc<CompletionQueue>,
}

/// Opens a backup between `db` and `other_path` (`source` schema into
/// `target` schema; the database into the file when `other_is_target`).
/// `id` completes with whether SQLite started the backup (false: the
/// schema names were refused; its steps then have nothing to step).
#[napi(catch_unwind)]
pub fn open_backup_steps(
    db: &NativeDatabase,
    id: f64,
    other_path: String,
    source: String,
    target: String,
    other_is_target: bool,
) -> External<BackupSteps> {
    let queue = db.dispatcher.queue.clone();
    db.dispatcher.release_held();
    let request = SteppedRequest {
        other_path,
        source,
        target,
        other_is_target,
    };
    let backup = engine::open_stepped(db.engine(), request, done_for(&queue, id, 0));
    External::new(BackupSteps { backup, queue })
}

/// Steps the backup by `pages` pages (all of them when negative); `id`
/// hears its progress, then its result.
#[napi(catch_unwind)]
pub fn step_backup(steps: &External<BackupSteps>, id: f64, pages: i32) {
    let report = steps.queue.clone();
    let done = done_for(&steps.queue, id, 0);
    steps.backup.step(
        pages,
        Box::new(move |result| match result {
            Ok(step) => {
                report.report(Completion {
                    id,
                    flags: 0,
                    result: Ok(Outcome::Progress {
                        total_pages: step.page_count.max(0) as u64,
                        remaining_pages: step.remaining.max(0) as u64,
                    }),
                    timing: None,
                });
                done(step.outcome());
            }
            Err(error) => done(Err(error)),
        }),
    );
}

/// Finishes the backup and closes its connections; `id` completes then.
#[napi(catch_unwind)]
pub fn finish_backup_steps(steps: &External<BackupSteps>, id: f64) {
    steps.backup.finish(done_for(&steps.queue, id, 0));
}
