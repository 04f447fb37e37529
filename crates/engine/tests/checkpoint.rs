//! The checkpointer: it runs for a writable WAL file, answers checkpoint
//! requests with SQLite's counts, and once stopped hands automatic
//! checkpoints back to the writer (SQLite's default of 1000 frames).

mod common;

use std::time::Duration;

use common::*;
use offloop_engine::{CheckpointMode, Database, Outcome, Request, Settings};

/// A checkpointer that never checkpoints on its own during a test.
fn quiet(settings: &mut Settings) {
    settings.checkpoint.threshold_frames = 1_000_000;
    settings.checkpoint.idle = Duration::from_secs(3600);
}

/// Creates table `t` and commits `rows` rows into it, one per commit.
fn write_rows(db: &Database, rows: i64) {
    exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
    for i in 0..rows {
        run(db, "INSERT INTO t(v) VALUES (?)", vec![int(i)]);
    }
}

#[track_caller]
fn counts(result: offloop_engine::Result<Outcome>) -> (u64, u64) {
    match result {
        Ok(Outcome::Checkpoint {
            log_frames,
            checkpointed_frames,
        }) => (log_frames, checkpointed_frames),
        other => panic!("expected checkpoint counts, got {other:?}"),
    }
}

fn autocheckpoint(db: &Database) -> i64 {
    scalar(db, "PRAGMA wal_autocheckpoint")
}

/// Stops the checkpointer and waits until `stats()` says so.
fn stop(db: &Database) {
    assert_eq!(call(db, Request::StopCheckpointer), Ok(Outcome::Done));
    wait_until("the checkpointer is inactive", || {
        !db.stats().checkpoint.active
    });
}

#[test]
fn the_checkpointer_runs_for_a_file_database_only() {
    let db = open_file(1);
    let stats = db.stats().checkpoint;
    assert!(stats.active);
    assert_eq!(stats.error, None);

    let memory = open(Settings::new(":memory:"));
    assert!(!memory.stats().checkpoint.active);

    let disabled = open_file_with(1, |s| s.checkpoint.enabled = false);
    assert!(!disabled.stats().checkpoint.active);
    assert_eq!(disabled.stats().checkpoint.error, None);
}

#[test]
fn a_checkpoint_request_returns_the_wal_counts() {
    let db = open_file_with(1, quiet);
    write_rows(&db, 5);
    let runs = db.stats().checkpoint.runs;
    let (log, copied) = counts(call(&db, Request::Checkpoint(CheckpointMode::Passive)));
    assert!(log > 0, "the writes are in the WAL");
    assert_eq!(copied, log, "nothing holds the WAL back");
    let stats = db.stats().checkpoint;
    assert_eq!(stats.runs, runs + 1);
    assert!(stats.frames_copied >= copied);
}

#[test]
fn stopping_the_checkpointer_makes_it_inactive_and_gives_the_writer_automatic_checkpoints() {
    let db = open_file_with(1, quiet);
    write_rows(&db, 5);
    // While the checkpointer runs, the writer does not checkpoint by itself
    // at SQLite's default.
    assert_ne!(autocheckpoint(&db), 1000);

    stop(&db);
    let error = db.stats().checkpoint.error.expect("why it stopped");
    assert!(error.contains("stopped by request"), "{error}");
    // The writer takes over between two jobs.
    run(&db, "INSERT INTO t(v) VALUES (99)", vec![]);
    assert_eq!(autocheckpoint(&db), 1000);
}

#[test]
fn once_the_checkpointer_stopped_checkpoint_requests_run_on_the_writer() {
    let db = open_file_with(1, quiet);
    write_rows(&db, 5);
    stop(&db);
    let runs = db.stats().checkpoint.runs;
    let (log, copied) = counts(call(&db, Request::Checkpoint(CheckpointMode::Passive)));
    assert_eq!(copied, log);
    assert!(log > 0);
    // Not the checkpointer's.
    assert_eq!(db.stats().checkpoint.runs, runs);
    // A second stop has nothing to stop.
    assert_eq!(call(&db, Request::StopCheckpointer), Ok(Outcome::Done));
}

#[test]
fn without_a_checkpointer_checkpoint_requests_run_on_the_writer() {
    let db = open_file_with(1, |s| s.checkpoint.enabled = false);
    write_rows(&db, 5);
    let (log, copied) = counts(call(&db, Request::Checkpoint(CheckpointMode::Full)));
    assert!(log > 0);
    assert_eq!(copied, log);
    assert_eq!(autocheckpoint(&db), 1000);
}

#[test]
fn a_checkpoint_requested_right_behind_a_stop_still_runs() {
    let db = open_file_with(1, quiet);
    write_rows(&db, 5);
    // A FULL checkpoint waits for the write lock a transaction holds, which
    // keeps the checkpointer busy while the next two requests queue up.
    let mut tx = begin_write(&db, NEVER_IDLE);
    let full = submit(&db, Request::Checkpoint(CheckpointMode::Full));
    let stopped = submit(&db, Request::StopCheckpointer);
    let behind = submit(&db, Request::Checkpoint(CheckpointMode::Passive));
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    counts(full.wait());
    assert_eq!(stopped.wait(), Ok(Outcome::Done));
    let (log, copied) = counts(behind.wait());
    assert_eq!(copied, log);
}

/// Submits a checkpoint in `mode` while another connection holds the
/// checkpoint lock; once the request is seen waiting for it (never
/// answered first), releases the lock and returns the request's counts.
fn checkpoint_beside_a_held_lock(db: &TempDb, mode: CheckpointMode) -> (u64, u64) {
    let held = hold_checkpoint_lock(&db.path);
    let waits = db.stats().checkpoint.lock_waits;
    let request = submit(db, Request::Checkpoint(mode));
    wait_until("the request waits for the checkpoint lock", || {
        if let Some(result) = request.poll() {
            panic!("answered while another checkpoint held the lock: {result:?}");
        }
        db.stats().checkpoint.lock_waits > waits
    });
    held.release();
    counts(request.wait())
}

#[test]
fn a_requested_checkpoint_waits_for_another_connections_checkpoint_then_runs_in_full() {
    // The checkpointer's own connection meets the lock: the writer's
    // backstop or catch-up, or another process, holding it for a pass.
    for mode in [
        CheckpointMode::Passive,
        CheckpointMode::Full,
        CheckpointMode::Restart,
        CheckpointMode::Truncate,
    ] {
        let db = open_file_with(1, quiet);
        write_rows(&db, 5);
        let (log, copied) = checkpoint_beside_a_held_lock(&db, mode);
        assert_eq!(copied, log, "{mode:?} copied the whole WAL");
        if mode == CheckpointMode::Truncate {
            assert_eq!(log, 0, "the TRUNCATE emptied the WAL");
            let wal = std::fs::metadata(format!("{}-wal", db.path.display())).unwrap();
            assert_eq!(wal.len(), 0, "the WAL file is truncated");
        }
        assert_eq!(db.stats().checkpoint.error, None);
    }
}

#[test]
fn commits_below_the_threshold_nudge_the_checkpointer_once_per_quarter_idle() {
    // An idle of an hour: a nudge every 15 minutes at most below the
    // threshold, so 200 back-to-back commits wake the checkpointer once.
    let db = open_file_with(1, quiet);
    write_rows(&db, 200);
    wait_until("the first commit's nudge is heard", || {
        db.stats().checkpoint.nudges >= 1
    });
    assert_eq!(db.stats().checkpoint.nudges, 1);
    assert_eq!(db.stats().checkpoint.runs, 0, "nothing was due");
}

#[test]
fn past_the_threshold_every_commit_nudges_and_a_pause_still_copies_the_rest() {
    let db = open_file_with(1, |s| {
        s.checkpoint.threshold_frames = 20;
        s.checkpoint.idle = Duration::from_secs(3600);
    });
    write_rows(&db, 100);
    // Past 20 frames each commit nudges, so the checkpointer copies.
    wait_until("a pass copied the WAL", || db.stats().checkpoint.runs >= 1);
    assert!(db.stats().checkpoint.nudges > 1);

    // Below the threshold, with a short idle: the pause after the last
    // commit still ends in a pass that copies everything.
    let db = open_file_with(1, |s| {
        s.checkpoint.threshold_frames = 1_000_000;
        s.checkpoint.idle = Duration::from_millis(40);
    });
    write_rows(&db, 50);
    wait_until("the idle pass copied every frame", || {
        let s = db.stats().checkpoint;
        s.runs >= 1 && s.frames_copied >= s.wal_frames && s.wal_frames > 0
    });
}
