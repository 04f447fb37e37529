//! Scopes: a write transaction holds the writer and serves only its
//! own queue until COMMIT or ROLLBACK (or its idle timeout); a read snapshot
//! holds one reader and sees one snapshot; an unused snapshot costs nothing.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use offloop_engine::{Database, Done, Outcome, Request, ScopeKind, TransactionMode};

const COUNT: &str = "SELECT count(*) FROM t";
const VALUES: &str = "SELECT v FROM t ORDER BY id";

fn insert(db: &Database, v: &str) -> Request {
    Request::Run(stmt(db, "INSERT INTO t(v) VALUES (?)", vec![text(v)]))
}

fn count(db: &Database) -> Request {
    Request::All(stmt(db, COUNT, vec![]))
}

fn values(db: &Database) -> Vec<String> {
    all(db, VALUES, vec![])
        .into_iter()
        .map(|row| match row.as_slice() {
            [offloop_engine::Value::Text(v)] => v.clone(),
            other => panic!("expected text, got {other:?}"),
        })
        .collect()
}

/// A completion that records `name` in `log` when it runs, then reports.
fn logged(log: &Arc<Mutex<Vec<&'static str>>>, name: &'static str) -> (Done, Pending) {
    let (done, pending) = callback();
    let log = log.clone();
    let done: Done = Box::new(move |result| {
        log.lock().unwrap().push(name);
        done(result);
    });
    (done, pending)
}

fn setup(readers: usize) -> TempDb {
    let db = open_file(readers);
    exec(&db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)");
    db
}

#[test]
fn a_write_transaction_serves_only_its_own_queue_until_it_commits() {
    let db = setup(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert!(call_in(&db, &mut tx, insert(&db, "tx 1")).is_ok());

    // Submitted to the database, not the transaction: it waits.
    let (done, outside) = logged(&log, "outside");
    db.submit(insert(&db, "outside"), done);

    let (done, second) = logged(&log, "tx 2");
    db.submit_to(&mut tx, offloop_engine::Job::new(insert(&db, "tx 2"), done));
    assert!(second.wait().is_ok());
    assert!(outside.poll().is_none(), "ran inside another's transaction");

    let (done, commit) = logged(&log, "commit");
    db.submit_to(&mut tx, offloop_engine::Job::new(Request::Commit, done));
    assert_eq!(commit.wait(), Ok(Outcome::Done));
    assert!(outside.wait().is_ok());

    assert_eq!(*log.lock().unwrap(), ["tx 2", "commit", "outside"]);
    assert_eq!(values(&db), ["tx 1", "tx 2", "outside"]);
}

#[test]
fn a_transactions_writes_are_invisible_to_readers_until_commit() {
    let db = setup(1);
    learn_route(&db, COUNT);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert!(call_in(&db, &mut tx, insert(&db, "a")).is_ok());
    // Inside: its own write. Outside, on a reader: nothing yet.
    assert_eq!(int_of(&rows(call_in(&db, &mut tx, count(&db)).unwrap())), 1);
    assert_eq!(scalar(&db, COUNT), 0);
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_eq!(scalar(&db, COUNT), 1);
}

#[test]
fn rollback_discards_the_transactions_writes() {
    let db = setup(1);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert!(call_in(&db, &mut tx, insert(&db, "discarded")).is_ok());
    assert_eq!(call_in(&db, &mut tx, Request::Rollback), Ok(Outcome::Done));
    assert_eq!(scalar(&db, COUNT), 0);
    // The writer is free again.
    run(&db, "INSERT INTO t(v) VALUES ('kept')", vec![]);
    assert_eq!(values(&db), ["kept"]);
}

#[test]
fn a_dropped_transaction_rolls_back_and_frees_the_writer() {
    let db = setup(1);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert!(call_in(&db, &mut tx, insert(&db, "discarded")).is_ok());
    let outside = submit(&db, insert(&db, "outside"));
    drop(tx);
    assert!(outside.wait().is_ok());
    assert_eq!(values(&db), ["outside"]);
}

#[test]
fn a_scope_ends_with_commit_and_later_statements_fail() {
    let db = setup(1);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    let message = assert_invalid_state(call_in(&db, &mut tx, insert(&db, "late")));
    assert_eq!(message, "the transaction has ended");
    assert_eq!(scalar(&db, COUNT), 0);
}

#[test]
fn commit_or_rollback_outside_a_scope_is_an_error() {
    let db = setup(1);
    for request in [Request::Commit, Request::Rollback] {
        let message = assert_invalid_state(call(&db, request));
        assert_eq!(message, "no transaction is open");
    }
}

#[test]
fn nested_transactions_are_savepoints_the_engine_names_and_counts() {
    let db = setup(1);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert!(call_in(&db, &mut tx, insert(&db, "outer")).is_ok());
    assert_eq!(call_in(&db, &mut tx, Request::Nest), Ok(Outcome::Done));
    assert!(call_in(&db, &mut tx, insert(&db, "kept")).is_ok());
    assert_eq!(call_in(&db, &mut tx, Request::Nest), Ok(Outcome::Done));
    assert!(call_in(&db, &mut tx, insert(&db, "undone")).is_ok());
    assert_eq!(
        call_in(&db, &mut tx, Request::Unnest(false)),
        Ok(Outcome::Done)
    );
    assert_eq!(
        call_in(&db, &mut tx, Request::Unnest(true)),
        Ok(Outcome::Done)
    );
    // Every level is closed now: one more end is refused, the transaction
    // goes on.
    let message = assert_invalid_state(call_in(&db, &mut tx, Request::Unnest(true)));
    assert_eq!(message, "no nested transaction is open");
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_eq!(values(&db), ["outer", "kept"]);
}

#[test]
fn a_batch_inside_a_nested_transaction_nests_one_level_deeper() {
    let db = setup(1);
    let mut tx = begin_write(&db, NEVER_IDLE);
    assert_eq!(call_in(&db, &mut tx, Request::Nest), Ok(Outcome::Done));
    let batch = Request::Batch(vec![
        stmt(&db, "INSERT INTO t(v) VALUES (?)", vec![text("in batch")]),
        stmt(&db, "INSERT INTO t(id, v) VALUES (1, 'clash')", vec![]),
    ]);
    match call_in(&db, &mut tx, batch) {
        Ok(Outcome::Batch {
            failed: Some((1, _)),
            ..
        }) => {}
        other => panic!("expected the batch's second statement to fail: {other:?}"),
    }
    // The batch undid only itself: the nested transaction is still open.
    assert!(call_in(&db, &mut tx, insert(&db, "after")).is_ok());
    assert_eq!(
        call_in(&db, &mut tx, Request::Unnest(true)),
        Ok(Outcome::Done)
    );
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_eq!(values(&db), ["after"]);
}

#[test]
fn an_idle_transaction_rolls_back_and_its_later_statements_fail_with_the_idle_error() {
    let db = setup(1);
    // While another transaction holds the writer, the insert waits in the
    // idle one's queue before its BEGIN runs: the idle time then starts
    // after the insert, however long this thread takes to send it.
    let mut holder = begin_write(&db, NEVER_IDLE);
    let (begun, began) = callback();
    let mut tx = db.begin_scope(
        ScopeKind::Write(TransactionMode::Immediate),
        Duration::from_millis(100),
        begun,
    );
    let abandoned = submit_in(&db, &mut tx, insert(&db, "abandoned"));
    assert_eq!(
        call_in(&db, &mut holder, Request::Commit),
        Ok(Outcome::Done)
    );
    assert_eq!(began.wait(), Ok(Outcome::Done));
    assert!(abandoned.wait().is_ok());
    // Runs once the transaction has given the writer up.
    run(&db, "INSERT INTO t(v) VALUES ('after')", vec![]);

    let late = assert_invalid_state(call_in(&db, &mut tx, insert(&db, "late")));
    assert!(late.contains("transactionIdleTimeout"), "{late}");
    let commit = assert_invalid_state(call_in(&db, &mut tx, Request::Commit));
    assert_eq!(commit, late);
    assert_eq!(values(&db), ["after"]);
}

#[test]
fn a_read_snapshot_does_not_see_a_commit_made_during_it() {
    let db = setup(2);
    exec(&db, "INSERT INTO t(v) VALUES ('before')");
    learn_route(&db, COUNT);
    let (begun, began) = callback();
    let mut snapshot = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    let first = call_in(&db, &mut snapshot, count(&db)).unwrap();
    assert_eq!(began.wait(), Ok(Outcome::Done));
    assert_eq!(int_of(&rows(first)), 1);

    run(&db, "INSERT INTO t(v) VALUES ('during')", vec![]);
    assert_eq!(scalar(&db, COUNT), 2);
    let again = call_in(&db, &mut snapshot, count(&db)).unwrap();
    assert_eq!(int_of(&rows(again)), 1);

    assert_eq!(
        call_in(&db, &mut snapshot, Request::Commit),
        Ok(Outcome::Done)
    );
    assert_eq!(scalar(&db, COUNT), 2);
}

#[test]
fn a_read_snapshot_runs_on_a_reader() {
    let db = setup(2);
    let (writer, readers) = executed(&db);
    let (begun, _) = callback();
    let mut snapshot = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    // A text the writer has not learned yet: the scope decides.
    let first = call_in(&db, &mut snapshot, count(&db)).unwrap();
    assert_eq!(int_of(&rows(first)), 0);
    assert_eq!(
        call_in(&db, &mut snapshot, Request::Commit),
        Ok(Outcome::Done)
    );
    // The pinning job and its statement, both on a reader.
    assert_eq!(executed(&db), (writer, readers + 2));
}

#[test]
fn an_unused_read_snapshot_never_takes_a_thread() {
    // One reader: a snapshot holding it would stall every read below.
    let db = setup(1);
    learn_route(&db, COUNT);
    let before = executed(&db);
    let (begun, began) = callback();
    let snapshot = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    assert!(!snapshot.is_started());
    assert_eq!(executed(&db), before);
    for _ in 0..3 {
        assert_eq!(scalar(&db, COUNT), 0);
    }
    assert_eq!(executed(&db), (before.0, before.1 + 3));
    assert!(began.poll().is_none());
    drop(snapshot);
}
