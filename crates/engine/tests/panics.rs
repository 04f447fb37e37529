//! Panics stay where they happen: a completion callback that panics (on any
//! path: a normal job, a cancelled one, the open report) is contained, and
//! the thread goes on serving its queue. (No public request can make a job
//! itself panic; `worker::run_job` turns one into `Error::Panic`.)

mod common;

use common::*;
use offloop_engine::{
    CancelToken, Cancelled, CursorRef, Database, Done, Error, Job, Outcome, Request, Role,
    Settings, Value,
};

const COUNT: &str = "SELECT count(*) FROM t";

/// A completion that reports it was called, then panics.
fn panicking() -> (Done, Pending) {
    let (done, pending) = callback();
    let done: Done = Box::new(move |result| {
        done(result);
        panic!("a completion callback panicked (on purpose, in a test)");
    });
    (done, pending)
}

#[test]
fn a_completion_that_panics_does_not_take_its_thread_down() {
    let db = open_file(1);
    create_numbers(&db, 0);
    learn_route(&db, COUNT);
    let (done, called) = panicking();
    db.submit(
        Request::Run(stmt(&db, "INSERT INTO t(v) VALUES (1)", vec![])),
        done,
    );
    assert!(called.wait().is_ok());
    let (done, called) = panicking();
    db.submit(Request::All(stmt(&db, COUNT, vec![])), done);
    assert!(called.wait().is_ok());
    // The writer and the reader both still serve.
    run(&db, "INSERT INTO t(v) VALUES (2)", vec![]);
    assert_eq!(scalar(&db, COUNT), 2);
    assert_eq!(close(&db), Ok(Outcome::Done));
}

#[test]
fn the_panicking_completion_of_a_cancelled_call_does_not_take_its_thread_down() {
    let db = open_file(1);
    create_numbers(&db, 0);
    let mut tx = begin_write(&db, NEVER_IDLE);
    let token = CancelToken::new();
    let (done, called) = panicking();
    db.submit_job(
        Job::new(
            Request::Run(stmt(&db, "INSERT INTO t(v) VALUES (1)", vec![])),
            done,
        )
        .with_cancel(Some(token.clone())),
    );
    assert_eq!(token.cancel(), Cancelled::BeforeStart);
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert!(matches!(called.wait(), Err(Error::Aborted { .. })));
    run(&db, "INSERT INTO t(v) VALUES (2)", vec![]);
    assert_eq!(close(&db), Ok(Outcome::Done));
}

#[test]
fn a_panicking_opened_callback_does_not_take_a_thread_down() {
    // The writer is the only connection, so it calls `opened`.
    let (done, called) = panicking();
    let db = Database::open(Settings::new(":memory:"), done).unwrap();
    assert!(called.wait().is_ok());
    exec(&db, "CREATE TABLE t(v)");
    assert_eq!(close(&db), Ok(Outcome::Done));
}

/// A writer cursor over `t` (ids 1..=10, two columns) that has returned
/// its first two rows and been buffered by another writer job.
fn buffered_writer_cursor(db: &Database) -> CursorRef {
    create_numbers(db, 10);
    let first = call(
        db,
        Request::Iterate {
            call: stmt(db, "SELECT id, v FROM t ORDER BY id", vec![]),
            chunk_rows: 2,
        },
    )
    .unwrap();
    let Outcome::Chunk {
        cursor: Some(cursor),
        ..
    } = first
    else {
        panic!("expected a cursor, got {first:?}");
    };
    assert_eq!(cursor.role, Role::Writer);
    exec(db, "SELECT 1");
    cursor
}

fn pairs(range: std::ops::RangeInclusive<i64>) -> Vec<Vec<Value>> {
    range.map(|i| vec![int(i), int(i)]).collect()
}

#[test]
fn a_next_chunk_of_any_size_returns_the_remaining_rows_of_a_buffered_cursor() {
    let db = open_file(0);
    for chunk_rows in [usize::MAX, usize::MAX / 2 + 1] {
        let cursor = buffered_writer_cursor(&db);
        let rest = call(&db, Request::NextChunk { cursor, chunk_rows });
        assert_eq!(
            rows(rest.unwrap()),
            pairs(3..=10),
            "chunk_rows {chunk_rows}"
        );
        exec(&db, "DROP TABLE t");
    }
}
