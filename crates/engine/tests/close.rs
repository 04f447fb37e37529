//! Closing: every job completes exactly once. Jobs queued before `close` run;
//! jobs submitted after it fail at once with `ERR_INVALID_STATE`; `close`
//! completes only when the queued work is done and the threads are joined.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use common::*;
use offloop_engine::{
    CancelToken, CheckpointMode, Done, Outcome, Request, ScopeKind, TransactionMode,
};

const COUNT: &str = "SELECT count(*) FROM t";

#[test]
fn jobs_submitted_after_close_fail_at_once_with_err_invalid_state() {
    let db = open_file(2);
    create_numbers(&db, 1);
    learn_route(&db, COUNT);
    close(&db).unwrap();
    assert!(!db.is_open());

    let requests = vec![
        exec_request("SELECT 1"),
        Request::Run(stmt(&db, "INSERT INTO t(v) VALUES (1)", vec![])),
        // Learned as a read: would go to the readers.
        Request::All(stmt(&db, COUNT, vec![])),
        Request::Iterate {
            call: stmt(&db, COUNT, vec![]),
            chunk_rows: 10,
        },
        Request::Batch(vec![stmt(&db, "INSERT INTO t(v) VALUES (1)", vec![])]),
        Request::Checkpoint(CheckpointMode::Passive),
        Request::StopCheckpointer,
        Request::Commit,
    ];
    for request in requests {
        let pending = submit(&db, request);
        assert_invalid_state(pending.now());
    }

    let token = CancelToken::new();
    let pending = submit_cancellable(&db, exec_request("SELECT 1"), &token);
    assert_invalid_state(pending.now());

    let (done, settings) = callback();
    db.read_settings(done);
    assert_invalid_state(settings.now());

    let (begun, write_begun) = callback();
    let mut write = db.begin_scope(
        ScopeKind::Write(TransactionMode::Immediate),
        NEVER_IDLE,
        begun,
    );
    assert_invalid_state(write_begun.now());
    assert_invalid_state(submit_in(&db, &mut write, exec_request("SELECT 1")).now());

    let (begun, read_begun) = callback();
    let mut read = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    let in_read = submit_in(&db, &mut read, Request::All(stmt(&db, COUNT, vec![])));
    assert_invalid_state(in_read.now());
    assert_invalid_state(read_begun.now());
}

/// A completion that counts itself before reporting.
fn counted(counter: &Arc<AtomicUsize>) -> (Done, Pending) {
    let (done, pending) = callback();
    let counter = counter.clone();
    let done: Done = Box::new(move |result| {
        counter.fetch_add(1, Ordering::SeqCst);
        done(result);
    });
    (done, pending)
}

#[test]
fn jobs_queued_before_close_all_run_before_close_completes() {
    let db = open_file(2);
    create_numbers(&db, 0);
    learn_route(&db, COUNT);
    let completed = Arc::new(AtomicUsize::new(0));
    let mut inserts = Vec::new();
    let mut reads = Vec::new();
    for i in 1..=100 {
        let (done, pending) = counted(&completed);
        let insert = stmt(&db, "INSERT INTO t(v) VALUES (?)", vec![int(i)]);
        db.submit(Request::Run(insert), done);
        inserts.push(pending);
        let (done, pending) = counted(&completed);
        db.submit(Request::All(stmt(&db, COUNT, vec![])), done);
        reads.push(pending);
    }
    let (tx, rx) = mpsc::channel();
    let seen = completed.clone();
    db.close(Box::new(move |result| {
        let _ = tx.send((result, seen.load(Ordering::SeqCst)));
    }));
    let (result, completed_at_close) = rx.recv_timeout(DEADLINE).expect("close completes");
    assert_eq!(result, Ok(Outcome::Done));
    assert_eq!(completed_at_close, 200);

    for (i, pending) in inserts.into_iter().enumerate() {
        assert_eq!(run_result(pending.wait().unwrap()), (1, i as i64 + 1));
    }
    for pending in reads {
        let count = int_of(&rows(pending.wait().unwrap()));
        assert!((0..=100).contains(&count));
    }
    let again = reopen(&db.path, 0);
    assert_eq!(scalar(&again, COUNT), 100);
    close(&again).unwrap();
}

#[test]
fn dropping_the_database_without_close_still_runs_its_queued_jobs() {
    let dir = temp_dir();
    let settings = file_settings(&dir, 1);
    let path = std::path::PathBuf::from(&settings.path);
    let db = open(settings);
    create_numbers(&db, 0);
    let pending: Vec<Pending> = (0..50)
        .map(|i| {
            submit(
                &db,
                Request::Run(stmt(&db, "INSERT INTO t(v) VALUES (?)", vec![int(i)])),
            )
        })
        .collect();
    drop(db);
    for p in pending {
        assert!(matches!(p.wait(), Ok(Outcome::Run { changes: 1, .. })));
    }
    // The threads may still be closing their connections; a new database
    // on the file sees every committed row either way.
    let again = reopen(&path, 0);
    assert_eq!(scalar(&again, COUNT), 50);
    close(&again).unwrap();
}

#[test]
fn closing_twice_completes_both_callbacks() {
    let db = open_file(2);
    create_numbers(&db, 3);
    let (done, first) = callback();
    db.close(done);
    let (done, second) = callback();
    db.close(done);
    assert_eq!(first.wait(), Ok(Outcome::Done));
    assert_eq!(second.wait(), Ok(Outcome::Done));
    // And once more after both finished.
    assert_eq!(close(&db), Ok(Outcome::Done));
}

#[test]
fn a_transaction_open_at_close_can_still_commit_and_close_waits_for_it() {
    let db = open_file(1);
    create_numbers(&db, 0);
    let mut tx = begin_write(&db, NEVER_IDLE);
    let (done, closed) = callback();
    db.close(done);
    // The writer is held by the transaction: the close cannot finish yet.
    let insert = Request::Run(stmt(&db, "INSERT INTO t(v) VALUES ('late')", vec![]));
    assert!(call_in(&db, &mut tx, insert).is_ok());
    assert!(closed.poll().is_none());
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_eq!(closed.wait(), Ok(Outcome::Done));

    let again = reopen(&db.path, 0);
    assert_eq!(scalar(&again, COUNT), 1);
    close(&again).unwrap();
}

/// A reader cursor whose next chunk is an error (its first rows were
/// returned): it is buffered, not live, so its reader also serves the shared
/// queue.
fn open_error_cursor(db: &offloop_engine::Database) -> offloop_engine::CursorRef {
    // abs() of the smallest integer overflows once the rows reach 3.
    let sql = "SELECT CASE WHEN id < 3 THEN id ELSE abs(-9223372036854775807 - 1) END FROM t";
    // Fails on the writer, which learns that the text is a read.
    let _ = call(db, Request::All(stmt(db, sql, vec![])));
    let iterate = Request::Iterate {
        call: stmt(db, sql, vec![]),
        chunk_rows: 100,
    };
    let outcome = call(db, iterate).unwrap();
    let Outcome::Chunk {
        rows: set,
        cursor: Some(cursor),
    } = outcome
    else {
        panic!("expected rows and a cursor, got {outcome:?}");
    };
    assert_eq!(set.row_count(), 2);
    assert_eq!(cursor.role, offloop_engine::Role::Reader(0));
    cursor
}

#[test]
fn a_next_chunk_queued_on_a_reader_before_close_still_runs() {
    // Once both of its queues are ready the reader picks one at random, so
    // the scenario is repeated.
    for _ in 0..12 {
        let db = open_file(1);
        create_numbers(&db, 5);
        let cursor = open_error_cursor(&db);

        // Keep the only reader busy so the next chunk and the close both
        // land while it works. Preparing the endless query's columns on the
        // writer teaches its route without running it.
        call(&db, Request::Columns(db.sql(ENDLESS))).unwrap();
        let (_, readers) = executed(&db);
        let token = CancelToken::new();
        let busy = submit_cancellable(&db, Request::All(stmt(&db, ENDLESS, vec![])), &token);
        wait_until("the reader takes the endless query", || {
            executed(&db).1 > readers
        });

        let next = submit(
            &db,
            Request::NextChunk {
                cursor,
                chunk_rows: 100,
            },
        );
        let (done, closed) = callback();
        db.close(done);
        token.cancel();
        assert!(busy.wait().is_err());
        let result = next.wait();
        assert!(
            matches!(result, Err(offloop_engine::Error::Sqlite { .. })),
            "expected the cursor's deferred SQLite error, got {result:?}"
        );
        assert_eq!(closed.wait(), Ok(Outcome::Done));
    }
}
