//! The WAL observer: it hears where the database opened and every commit,
//! and is asked before every checkpoint — with concurrent writes on the
//! checkpointer's passes, with writes excluded on the writer's thread and at
//! close — and keeps its permit until the checkpoint ends.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use offloop_engine::{
    CheckpointMode, CheckpointPermit, CheckpointWrites, Outcome, Request, WalObserver,
};

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Opened(String),
    Committed,
    Permit(CheckpointWrites),
    Released,
}

#[derive(Default)]
struct Recorder(Mutex<Vec<Event>>);

impl Recorder {
    fn push(&self, event: Event) {
        self.0.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<Event> {
        self.0.lock().unwrap().clone()
    }

    fn permits(&self, writes: CheckpointWrites) -> usize {
        self.events()
            .iter()
            .filter(|e| **e == Event::Permit(writes))
            .count()
    }
}

/// Records the permit's end when the engine drops it.
struct Release(Arc<Recorder>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.push(Event::Released);
    }
}

struct Observer(Arc<Recorder>);

impl WalObserver for Observer {
    fn opened(&self, path: &str) {
        self.0.push(Event::Opened(path.to_string()));
    }

    fn committed(&self) {
        self.0.push(Event::Committed);
    }

    fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit {
        self.0.push(Event::Permit(writes));
        CheckpointPermit::holding(Box::new(Release(self.0.clone())))
    }
}

/// An observer that cannot hold the WAL still beside the writer: it
/// refuses every checkpoint that writes may run beside, and records as
/// `Observer` does otherwise.
struct Refusing(Observer);

impl WalObserver for Refusing {
    fn opened(&self, path: &str) {
        self.0.opened(path);
    }

    fn committed(&self) {
        self.0.committed();
    }

    fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit {
        let permit = self.0.before_checkpoint(writes);
        match writes {
            CheckpointWrites::Concurrent => CheckpointPermit::refused(),
            CheckpointWrites::Excluded => permit,
        }
    }
}

fn observed(adjust: impl FnOnce(&mut offloop_engine::Settings)) -> (TempDb, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let observer: Arc<dyn WalObserver> = Arc::new(Observer(recorder.clone()));
    let db = open_file_with(1, |s| {
        s.observer.set(Some(observer));
        adjust(s);
    });
    (db, recorder)
}

fn quiet(settings: &mut offloop_engine::Settings) {
    settings.checkpoint.threshold_frames = 1_000_000;
    settings.checkpoint.idle = Duration::from_secs(3600);
}

#[test]
fn an_observer_hears_where_the_database_opened_and_each_commit() {
    let (db, recorder) = observed(quiet);
    exec(&db, "CREATE TABLE t(v)");
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    run(&db, "INSERT INTO t VALUES (2)", vec![]);
    // The writer tells the observer after the job, which may be after its
    // caller heard back.
    let commits = || {
        let events = recorder.events();
        events.iter().filter(|e| **e == Event::Committed).count()
    };
    wait_until("three commits heard", || commits() >= 3);
    let path = db.location("main").expect("a file database");
    assert_eq!(recorder.events()[0], Event::Opened(path));
    run(&db, "SELECT 1", vec![]);
    assert_eq!(
        commits(),
        3,
        "one notification per commit; none for a job that commits nothing"
    );
}

#[test]
fn a_requested_checkpoint_runs_on_the_writer_and_holds_the_permit_while_it_copies() {
    let (db, recorder) = observed(quiet);
    exec(&db, "CREATE TABLE t(v)");
    let result = call(&db, Request::Checkpoint(CheckpointMode::Truncate));
    assert!(
        matches!(result, Ok(Outcome::Checkpoint { .. })),
        "{result:?}"
    );
    let events = recorder.events();
    let at = events
        .iter()
        .position(|e| *e == Event::Permit(CheckpointWrites::Excluded))
        .expect("the observer was asked");
    assert_eq!(events.get(at + 1), Some(&Event::Released), "{events:?}");
    assert_eq!(recorder.permits(CheckpointWrites::Concurrent), 0);
}

#[test]
fn the_checkpointers_passes_ask_the_observer_with_writes_concurrent() {
    let (db, recorder) = observed(|s| {
        s.checkpoint.threshold_frames = 1;
        s.checkpoint.idle = Duration::from_secs(3600);
    });
    exec(&db, "CREATE TABLE t(v)");
    for i in 0..20 {
        run(&db, "INSERT INTO t VALUES (?)", vec![int(i)]);
    }
    wait_until("a checkpointer pass asked the observer", || {
        recorder.permits(CheckpointWrites::Concurrent) > 0
    });
}

#[test]
fn a_refused_checkpoint_never_runs_beside_the_writer_which_copies_the_wal_itself() {
    let recorder = Arc::new(Recorder::default());
    let observer: Arc<dyn WalObserver> = Arc::new(Refusing(Observer(recorder.clone())));
    let db = open_file_with(1, |s| {
        s.observer.set(Some(observer));
        s.checkpoint.threshold_frames = 1;
        s.checkpoint.idle = Duration::from_secs(3600);
    });
    exec(&db, "CREATE TABLE t(v)");
    let mut i = 0;
    wait_until(
        "the writer copied the WAL in place of the checkpointer",
        || {
            run(&db, "INSERT INTO t VALUES (?)", vec![int(i)]);
            i += 1;
            recorder.permits(CheckpointWrites::Concurrent) > 0
                && db.stats().checkpoint.writer_catch_ups > 0
        },
    );
    let stats = db.stats().checkpoint;
    assert_eq!(
        (stats.runs, stats.frames_copied),
        (0, 0),
        "no checkpointer pass ran on a refused permit"
    );
    assert!(recorder.permits(CheckpointWrites::Excluded) > 0);
}

#[test]
fn an_observer_installed_on_an_open_database_hears_where_it_opened_at_once() {
    let db = open_file_with(1, quiet);
    exec(&db, "CREATE TABLE t(v)");
    // The writer tells the observer of a commit after the job, which may be
    // after its caller heard back: an observer installed then hears of the
    // CREATE too. A job after it puts the writer past that notification.
    run(&db, "SELECT 1", vec![]);
    let recorder = Arc::new(Recorder::default());
    db.set_observer(Some(Arc::new(Observer(recorder.clone()))));
    let path = db.location("main").expect("a file database");
    assert_eq!(recorder.events(), vec![Event::Opened(path.clone())]);
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    wait_until("the commit heard", || {
        recorder.events().contains(&Event::Committed)
    });
    run(&db, "SELECT 1", vec![]);
    assert_eq!(
        recorder.events(),
        vec![Event::Opened(path), Event::Committed],
        "where it opened once, then the one commit"
    );

    db.set_observer(None);
    run(&db, "INSERT INTO t VALUES (2)", vec![]);
    // A job after the insert: the writer is past the insert's notification.
    run(&db, "SELECT 1", vec![]);
    assert_eq!(
        recorder.events().len(),
        2,
        "a removed observer hears nothing"
    );
}

#[test]
fn closing_asks_the_observer_with_writes_excluded_before_the_connections_close() {
    let (db, recorder) = observed(quiet);
    exec(&db, "CREATE TABLE t(v)");
    let before = recorder.permits(CheckpointWrites::Excluded);
    assert_eq!(close(&db), Ok(Outcome::Done));
    assert!(recorder.permits(CheckpointWrites::Excluded) > before);
    let events = recorder.events();
    assert_eq!(events.last(), Some(&Event::Released), "{events:?}");
}

#[test]
fn with_an_observer_a_stopped_checkpointer_leaves_checkpoints_to_the_writer_which_asks_first() {
    let (db, recorder) = observed(quiet);
    exec(&db, "CREATE TABLE t(v)");
    assert_eq!(call(&db, Request::StopCheckpointer), Ok(Outcome::Done));
    wait_until("the checkpointer is inactive", || {
        !db.stats().checkpoint.active
    });
    // About 1,300 frames of 4 KiB in one commit: past SQLite's own
    // automatic-checkpoint threshold of 1,000.
    run(&db, "INSERT INTO t VALUES (zeroblob(5000000))", vec![]);
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    assert_ne!(
        scalar(&db, "PRAGMA wal_autocheckpoint"),
        1000,
        "SQLite's automatic checkpoint would bypass the observer"
    );
    assert!(recorder.permits(CheckpointWrites::Excluded) > 0);
}

#[test]
fn an_observer_installed_after_the_checkpointer_stopped_hears_each_commit_and_is_asked_before_each_checkpoint(
) {
    let db = open_file_with(1, quiet);
    exec(&db, "CREATE TABLE t(v)");
    assert_eq!(call(&db, Request::StopCheckpointer), Ok(Outcome::Done));
    wait_until("the checkpointer is inactive", || {
        !db.stats().checkpoint.active
    });
    // Without an observer the writer hands automatic checkpoints back to
    // SQLite, between two jobs.
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    assert_eq!(scalar(&db, "PRAGMA wal_autocheckpoint"), 1000);

    let recorder = Arc::new(Recorder::default());
    db.set_observer(Some(Arc::new(Observer(recorder.clone()))));
    // About 1,300 frames in one commit: past SQLite's automatic-checkpoint
    // threshold, which would checkpoint inside the commit unasked.
    run(&db, "INSERT INTO t VALUES (zeroblob(5000000))", vec![]);
    // A job after the insert: the writer is past the insert's notification.
    run(&db, "SELECT 1", vec![]);
    let events = recorder.events();
    assert!(events.contains(&Event::Committed), "{events:?}");
    assert!(
        recorder.permits(CheckpointWrites::Excluded) > 0,
        "the WAL past 1,000 frames was checkpointed without asking: {events:?}"
    );
    assert_ne!(scalar(&db, "PRAGMA wal_autocheckpoint"), 1000);

    // Removed again, the observer leaves automatic checkpoints to SQLite.
    db.set_observer(None);
    run(&db, "INSERT INTO t VALUES (2)", vec![]);
    assert_eq!(scalar(&db, "PRAGMA wal_autocheckpoint"), 1000);
}

#[test]
fn a_requested_checkpoint_waits_for_another_connections_checkpoint_to_end() {
    // With an observer the request runs on the writer, beside the
    // checkpointer's own passes and counts. SQLite answers BUSY at once,
    // without the busy handler, while another connection checkpoints.
    let (db, _recorder) = observed(quiet);
    exec(&db, "CREATE TABLE t(v)");
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    let held = hold_checkpoint_lock(&db.path);
    let waits = db.stats().checkpoint.lock_waits;
    let request = submit(&db, Request::Checkpoint(CheckpointMode::Passive));
    wait_until("the request waits for the checkpoint lock", || {
        if let Some(result) = request.poll() {
            panic!("answered while another checkpoint held the lock: {result:?}");
        }
        db.stats().checkpoint.lock_waits > waits
    });
    held.release();
    let result = request.wait();
    assert!(
        matches!(result, Ok(Outcome::Checkpoint { .. })),
        "{result:?}"
    );
}
