//! `Iterate` and cursors: rows come in chunks, in order; a cursor lives on
//! the thread that opened it until it ends or is closed; a cursor that has to
//! give its connection up is buffered and still yields every row.

mod common;

use common::*;
use offloop_engine::{CursorRef, Database, Outcome, Request, Role, ScopeKind, Value};

const ROWS: &str = "SELECT v FROM t ORDER BY id";
const COUNT: &str = "SELECT count(*) FROM t";

type Chunk = (Vec<Vec<Value>>, Option<CursorRef>);

#[track_caller]
fn chunk(outcome: Outcome) -> Chunk {
    match outcome {
        Outcome::Chunk { rows: set, cursor } => (
            (0..set.row_count()).map(|i| set.row(i).to_vec()).collect(),
            cursor,
        ),
        other => panic!("expected a chunk, got {other:?}"),
    }
}

#[track_caller]
fn iterate(db: &Database, sql: &str, chunk_rows: usize) -> Chunk {
    let request = Request::Iterate {
        call: stmt(db, sql, vec![]),
        chunk_rows,
    };
    chunk(call(db, request).unwrap())
}

#[track_caller]
fn next_chunk(db: &Database, cursor: CursorRef, chunk_rows: usize) -> Chunk {
    chunk(call(db, Request::NextChunk { cursor, chunk_rows }).unwrap())
}

/// Every remaining row of a cursor, checking no chunk is larger than asked.
#[track_caller]
fn drain(db: &Database, mut cursor: Option<CursorRef>, chunk_rows: usize) -> Vec<Vec<Value>> {
    let mut all = Vec::new();
    while let Some(open) = cursor {
        let (rows, next) = next_chunk(db, open, chunk_rows);
        assert!(rows.len() <= chunk_rows);
        all.extend(rows);
        cursor = next;
    }
    all
}

#[test]
fn iterate_returns_chunks_in_order_until_the_cursor_ends() {
    let db = open_file(1);
    create_numbers(&db, 10);
    let (first, cursor) = iterate(&db, ROWS, 3);
    assert_eq!(first, int_rows(1..=3));
    let cursor = cursor.expect("more rows remain");
    assert_eq!(next_chunk(&db, cursor, 3), (int_rows(4..=6), Some(cursor)));
    assert_eq!(next_chunk(&db, cursor, 3), (int_rows(7..=9), Some(cursor)));
    // The last chunk ends the cursor.
    assert_eq!(next_chunk(&db, cursor, 3), (int_rows(10..=10), None));
}

#[test]
fn a_query_that_fits_in_one_chunk_leaves_no_cursor() {
    let db = open_file(1);
    create_numbers(&db, 3);
    assert_eq!(iterate(&db, ROWS, 4), (int_rows(1..=3), None));
}

#[test]
fn a_new_text_opens_its_cursor_on_the_writer_and_a_learned_read_on_a_reader() {
    let db = open_file(2);
    create_numbers(&db, 10);
    let (_, first) = iterate(&db, ROWS, 2);
    assert_eq!(first.unwrap().role, Role::Writer);
    let (_, second) = iterate(&db, ROWS, 2);
    assert!(matches!(second.unwrap().role, Role::Reader(_)));
    // Both stream independently.
    assert_eq!(drain(&db, first, 4), int_rows(3..=10));
    assert_eq!(drain(&db, second, 4), int_rows(3..=10));
}

#[test]
fn next_chunks_run_on_the_reader_that_holds_the_cursor() {
    let db = open_file(2);
    create_numbers(&db, 10);
    learn_route(&db, ROWS);
    let (_, cursor) = iterate(&db, ROWS, 1);
    let cursor = cursor.unwrap();
    let Role::Reader(holder) = cursor.role else {
        panic!("expected a reader cursor, got {cursor:?}");
    };
    let before: Vec<u64> = db.stats().readers.iter().map(|r| r.executed).collect();
    // Three chunks: 2..=5, 6..=9, and 10 with the end.
    assert_eq!(drain(&db, Some(cursor), 4), int_rows(2..=10));
    let after: Vec<u64> = db.stats().readers.iter().map(|r| r.executed).collect();
    for (index, (b, a)) in before.iter().zip(&after).enumerate() {
        let expected = if index == holder { b + 3 } else { *b };
        assert_eq!(*a, expected, "reader {index}");
    }
}

#[test]
fn close_cursor_ends_a_cursor_early() {
    let db = open_file(1);
    create_numbers(&db, 10);
    learn_route(&db, ROWS);
    for _ in 0..2 {
        // On the writer (first text), then on a reader.
        let (_, cursor) = iterate(&db, "SELECT v FROM t", 2);
        let cursor = cursor.unwrap();
        assert_eq!(call(&db, Request::CloseCursor(cursor)), Ok(Outcome::Done));
        let next = call(
            &db,
            Request::NextChunk {
                cursor,
                chunk_rows: 2,
            },
        );
        assert_eq!(
            assert_invalid_state(next),
            "the iterator is already finished"
        );
    }
}

#[test]
fn an_error_after_some_rows_comes_as_the_next_chunk() {
    let db = open_file(0);
    create_numbers(&db, 5);
    // abs() of the smallest integer overflows at the third row.
    let sql = "SELECT CASE WHEN id < 3 THEN id ELSE abs(-9223372036854775807 - 1) END FROM t";
    let (rows, cursor) = iterate(&db, sql, 100);
    assert_eq!(rows, int_rows(1..=2));
    let cursor = cursor.expect("the error is still to come");
    let failed = call(
        &db,
        Request::NextChunk {
            cursor,
            chunk_rows: 100,
        },
    );
    assert!(
        matches!(&failed, Err(offloop_engine::Error::Sqlite { message, .. }) if message == "integer overflow"),
        "{failed:?}"
    );
    let after = call(
        &db,
        Request::NextChunk {
            cursor,
            chunk_rows: 100,
        },
    );
    assert_invalid_state(after);
}

#[test]
fn a_writer_cursor_is_buffered_when_another_writer_job_runs_and_still_yields_every_row() {
    let db = open_file(1);
    create_numbers(&db, 100);
    learn_route(&db, COUNT);
    // A new text: its cursor opens on the writer.
    let (first, cursor) = iterate(&db, ROWS, 10);
    assert_eq!(first, int_rows(1..=10));
    assert_eq!(cursor.unwrap().role, Role::Writer);

    run(&db, "INSERT INTO t(v) VALUES (101)", vec![]);
    // The write is committed once it resolves: a reader sees it.
    assert_eq!(scalar(&db, COUNT), 101);
    // The cursor yields the rest of what it started with, in order.
    assert_eq!(drain(&db, cursor, 10), int_rows(11..=100));
}

#[test]
fn a_reader_holding_a_half_read_cursor_still_serves_the_shared_queue() {
    // One reader: it must give its cursor's connection up to serve others.
    let db = open_file(1);
    create_numbers(&db, 100);
    learn_route(&db, ROWS);
    learn_route(&db, COUNT);
    let (first, cursor) = iterate(&db, ROWS, 10);
    assert_eq!(first, int_rows(1..=10));
    assert_eq!(cursor.unwrap().role, Role::Reader(0));

    run(&db, "INSERT INTO t(v) VALUES (101)", vec![]);
    // Completes (with the new row) although the cursor is not finished.
    assert_eq!(scalar(&db, COUNT), 101);
    assert_eq!(drain(&db, cursor, 10), int_rows(11..=100));
}

#[test]
fn a_writer_cursor_survives_a_transaction_that_runs_while_it_is_open() {
    let db = open_file(1);
    create_numbers(&db, 100);
    let (first, cursor) = iterate(&db, ROWS, 10);
    assert_eq!(first, int_rows(1..=10));
    assert_eq!(cursor.unwrap().role, Role::Writer);

    let mut tx = begin_write(&db, NEVER_IDLE);
    let insert = Request::Run(stmt(&db, "INSERT INTO t(v) VALUES (101)", vec![]));
    assert!(call_in(&db, &mut tx, insert).is_ok());
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));

    assert_eq!(drain(&db, cursor, 10), int_rows(11..=100));
}

#[test]
fn a_reader_cursor_survives_a_read_snapshot_served_by_the_same_reader() {
    let db = open_file(1);
    create_numbers(&db, 100);
    learn_route(&db, ROWS);
    let (first, cursor) = iterate(&db, ROWS, 10);
    assert_eq!(first, int_rows(1..=10));
    assert_eq!(cursor.unwrap().role, Role::Reader(0));

    // The only reader buffers its cursor to take the snapshot.
    let (begun, _) = callback();
    let mut snapshot = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    let count = Request::All(stmt(&db, COUNT, vec![]));
    assert_eq!(
        int_of(&rows(call_in(&db, &mut snapshot, count).unwrap())),
        100
    );
    assert_eq!(
        call_in(&db, &mut snapshot, Request::Commit),
        Ok(Outcome::Done)
    );

    assert_eq!(drain(&db, cursor, 10), int_rows(11..=100));
}
