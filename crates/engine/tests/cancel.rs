//! Cancel tokens stop one call: a queued call never runs, a running one is
//! interrupted and its connection goes on serving; after the call finished a
//! cancel does nothing.

mod common;

use common::*;
use offloop_engine::{CancelToken, Cancelled, Database, Error, Outcome, Request, Value};

const COUNT: &str = "SELECT count(*) FROM t";

fn insert(db: &Database, v: i64) -> Request {
    Request::Run(stmt(db, "INSERT INTO t(v) VALUES (?)", vec![int(v)]))
}

#[track_caller]
fn assert_aborted(result: offloop_engine::Result<Outcome>) {
    assert!(
        matches!(result, Err(Error::Aborted { .. })),
        "expected Error::Aborted, got {result:?}"
    );
}

#[test]
fn a_call_cancelled_while_it_waits_completes_with_aborted_and_never_runs() {
    let db = open_file(1);
    create_numbers(&db, 0);
    // A transaction holds the writer, so the insert below waits in its queue.
    let mut tx = begin_write(&db, NEVER_IDLE);
    let token = CancelToken::new();
    let cancelled = submit_cancellable(&db, insert(&db, 1), &token);
    let behind = submit(&db, insert(&db, 2));
    assert_eq!(token.cancel(), Cancelled::BeforeStart);
    assert!(token.is_cancelled());
    assert!(cancelled.poll().is_none(), "completes in its turn");

    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_aborted(cancelled.wait());
    // The call behind it is not affected.
    assert!(behind.wait().is_ok());
    assert_eq!(all(&db, "SELECT v FROM t", vec![]), [[int(2)]]);
}

#[test]
fn a_call_whose_token_was_cancelled_before_submission_never_runs() {
    let db = open_file(1);
    create_numbers(&db, 0);
    let token = CancelToken::new();
    assert_eq!(token.cancel(), Cancelled::BeforeStart);
    assert_aborted(submit_cancellable(&db, insert(&db, 1), &token).wait());
    assert_eq!(scalar(&db, COUNT), 0);
    // Cancelling again achieves nothing more.
    assert_eq!(token.cancel(), Cancelled::TooLate);
}

/// Starts `ENDLESS` with a token, waits until it runs on the thread `taken`
/// counts, cancels it and checks it was interrupted.
fn interrupt_endless(db: &Database, taken: impl Fn(&Database) -> u64) {
    let before = taken(db);
    let token = CancelToken::new();
    let endless = submit_cancellable(db, Request::All(stmt(db, ENDLESS, vec![])), &token);
    wait_until("the endless query runs", || token.is_running());
    assert!(taken(db) > before, "the query ran on another thread");
    assert_eq!(token.cancel(), Cancelled::WhileRunning);
    assert_aborted(endless.wait());
    assert_eq!(token.cancel(), Cancelled::TooLate);
}

#[test]
fn cancelling_an_endless_query_on_the_writer_interrupts_it_and_the_writer_serves_the_next_call() {
    let db = open_file(0);
    create_numbers(&db, 3);
    interrupt_endless(&db, |db| executed(db).0);
    run(&db, "INSERT INTO t(v) VALUES (4)", vec![]);
    assert_eq!(scalar(&db, COUNT), 4);
}

#[test]
fn cancelling_an_endless_query_on_a_reader_interrupts_it_and_the_reader_serves_the_next_call() {
    // One reader: the next read runs on the connection that was interrupted.
    let db = open_file(1);
    create_numbers(&db, 3);
    learn_route(&db, COUNT);
    // Preparing its columns on the writer teaches the route without running
    // the query.
    call(&db, Request::Columns(db.sql(ENDLESS))).unwrap();
    interrupt_endless(&db, |db| executed(db).1);
    assert_eq!(scalar(&db, COUNT), 3);
}

#[test]
fn cancelling_after_the_call_finished_does_nothing() {
    let db = open_file(0);
    create_numbers(&db, 0);
    let token = CancelToken::new();
    let result = submit_cancellable(&db, insert(&db, 1), &token).wait();
    assert!(matches!(result, Ok(Outcome::Run { changes: 1, .. })));
    assert_eq!(token.cancel(), Cancelled::TooLate);
    assert!(!token.is_cancelled());
    // No interrupt is left behind for the connection's next statement.
    assert_eq!(scalar(&db, COUNT), 1);
    run(&db, "INSERT INTO t(v) VALUES (2)", vec![]);
    assert_eq!(scalar(&db, COUNT), 2);
}

#[test]
fn a_cancel_that_lands_before_the_querys_first_step_still_interrupts_it() {
    // SQLite clears an interrupt when a statement starts stepping with none
    // other running, so one that lands while the job binds its parameters
    // (copying 64 MiB here) would be dropped, and the query would run on.
    let db = open_file(0);
    create_numbers(&db, 0);
    let sql = "WITH RECURSIVE c(x) AS (SELECT length(?) UNION ALL SELECT x + 1 FROM c \
               WHERE x < 1000000000000) SELECT count(*) FROM c";
    for _ in 0..5 {
        let token = CancelToken::new();
        let blob = Value::Blob(vec![7; 64 << 20]);
        let endless = submit_cancellable(&db, Request::All(stmt(&db, sql, vec![blob])), &token);
        wait_until("the query starts", || token.is_running());
        assert_eq!(token.cancel(), Cancelled::WhileRunning);
        assert_aborted(endless.wait());
    }
    run(&db, "INSERT INTO t(v) VALUES (1)", vec![]);
    assert_eq!(scalar(&db, COUNT), 1);
}
