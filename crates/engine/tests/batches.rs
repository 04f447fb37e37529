//! Batches: several statements in one transaction, each with its own result;
//! the first failure names its index and rolls the whole batch back; inside
//! an open transaction a batch is a SAVEPOINT.

mod common;

use common::*;
use offloop_engine::{Call, Database, Error, Outcome, Request, Value};

fn insert(db: &Database, id: i64) -> Call {
    stmt(db, "INSERT INTO t(id, v) VALUES (?, 'x')", vec![int(id)])
}

fn ids(db: &Database) -> Vec<Vec<Value>> {
    all(db, "SELECT id FROM t ORDER BY id", vec![])
}

#[track_caller]
fn batch(outcome: Outcome) -> (Vec<Outcome>, Option<(usize, Error)>) {
    match outcome {
        Outcome::Batch { results, failed } => (results, failed),
        other => panic!("expected a batch outcome, got {other:?}"),
    }
}

fn setup() -> TempDb {
    let db = open_file(1);
    exec(&db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)");
    db
}

#[test]
fn a_batch_returns_rows_for_queries_and_run_results_for_other_statements() {
    let db = setup();
    let calls = vec![
        insert(&db, 1),
        insert(&db, 2),
        stmt(&db, "SELECT id FROM t ORDER BY id", vec![]),
        stmt(&db, "DELETE FROM t WHERE id = 1", vec![]),
    ];
    let (results, failed) = batch(call(&db, Request::Batch(calls)).unwrap());
    assert_eq!(failed, None);
    assert_eq!(results.len(), 4);
    let mut results = results.into_iter();
    assert_eq!(run_result(results.next().unwrap()), (1, 1));
    assert_eq!(run_result(results.next().unwrap()), (1, 2));
    assert_eq!(rows(results.next().unwrap()), int_rows(1..=2));
    assert_eq!(run_result(results.next().unwrap()).0, 1);
    assert_eq!(ids(&db), int_rows(2..=2));
}

#[test]
fn a_failing_statement_reports_its_index_and_rolls_the_whole_batch_back() {
    let db = setup();
    let calls = vec![
        insert(&db, 1),
        insert(&db, 2),
        insert(&db, 1),
        insert(&db, 3),
    ];
    let (results, failed) = batch(call(&db, Request::Batch(calls)).unwrap());
    // The results of the statements before the failure.
    assert_eq!(results.len(), 2);
    let (index, error) = failed.expect("the duplicate key fails");
    assert_eq!(index, 2);
    assert!(
        matches!(error, Error::Sqlite { code: 1555, .. }),
        "SQLITE_CONSTRAINT_PRIMARYKEY, got {error:?}"
    );
    assert_eq!(ids(&db), Vec::<Vec<Value>>::new());
    // The writer is out of the batch's transaction: this commits.
    run(&db, "INSERT INTO t(id) VALUES (9)", vec![]);
    assert_eq!(ids(&db), int_rows(9..=9));
}

#[test]
fn a_binding_error_fails_the_batch_at_that_statement() {
    let db = setup();
    let calls = vec![
        insert(&db, 1),
        stmt(&db, "INSERT INTO t(id) VALUES (?)", vec![int(2), int(3)]),
    ];
    let (results, failed) = batch(call(&db, Request::Batch(calls)).unwrap());
    assert_eq!(results.len(), 1);
    assert!(matches!(failed, Some((1, Error::Sqlite { code: 25, .. }))));
    assert_eq!(ids(&db), Vec::<Vec<Value>>::new());
}

#[test]
fn a_batch_inside_an_open_transaction_rolls_back_only_its_own_statements() {
    let db = setup();
    let mut tx = begin_write(&db, NEVER_IDLE);
    call_in(&db, &mut tx, Request::Run(insert(&db, 1))).unwrap();

    let failing = vec![insert(&db, 2), insert(&db, 1)];
    let (results, failed) = batch(call_in(&db, &mut tx, Request::Batch(failing)).unwrap());
    assert_eq!(results.len(), 1);
    assert_eq!(failed.map(|(i, _)| i), Some(1));

    let passing = vec![insert(&db, 3)];
    let (_, failed) = batch(call_in(&db, &mut tx, Request::Batch(passing)).unwrap());
    assert_eq!(failed, None);

    // Still inside the transaction: the batch did not commit it.
    let inside = call_in(
        &db,
        &mut tx,
        Request::All(stmt(&db, "SELECT id FROM t ORDER BY id", vec![])),
    );
    assert_eq!(rows(inside.unwrap()), [[int(1)], [int(3)]]);
    assert_eq!(call_in(&db, &mut tx, Request::Commit), Ok(Outcome::Done));
    assert_eq!(ids(&db), [[int(1)], [int(3)]]);
}

#[test]
fn a_batch_inside_a_transaction_that_then_rolls_back_leaves_nothing() {
    let db = setup();
    let mut tx = begin_write(&db, NEVER_IDLE);
    let (_, failed) = batch(
        call_in(
            &db,
            &mut tx,
            Request::Batch(vec![insert(&db, 1), insert(&db, 2)]),
        )
        .unwrap(),
    );
    assert_eq!(failed, None);
    assert_eq!(call_in(&db, &mut tx, Request::Rollback), Ok(Outcome::Done));
    assert_eq!(ids(&db), Vec::<Vec<Value>>::new());
}
