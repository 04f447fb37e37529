//! User functions: a definition reaches the writer and every reader, those
//! opened after it too; an error it reports fails the statement with
//! `SQLITE_ERROR` and its message; a definition that cannot replace a
//! function in use yet takes effect once the statement using it ends.

mod common;

use std::sync::Arc;

use common::*;
use offloop_engine::{
    Accumulator, AggregateFunction, FunctionBody, FunctionDefinition, FunctionError, Request,
    ScalarFunction, Value,
};

struct Constant(i64);

impl ScalarFunction for Constant {
    fn call(&self, _args: Vec<Value>) -> Result<Value, FunctionError> {
        Ok(Value::Integer(self.0))
    }
}

struct Refuse;

impl ScalarFunction for Refuse {
    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError> {
        Err(format!("refused {args:?}"))
    }
}

/// Sums its integer argument, as a window function too.
struct Sum;

impl AggregateFunction for Sum {
    fn start(&self) -> Result<Accumulator, FunctionError> {
        Ok(Box::new(0i64))
    }
    fn step(&self, acc: &mut Accumulator, args: Vec<Value>) -> Result<(), FunctionError> {
        if let (Some(sum), Value::Integer(v)) = (acc.downcast_mut::<i64>(), &args[0]) {
            *sum += v;
        }
        Ok(())
    }
    fn inverse(&self, acc: &mut Accumulator, args: Vec<Value>) -> Result<(), FunctionError> {
        if let (Some(sum), Value::Integer(v)) = (acc.downcast_mut::<i64>(), &args[0]) {
            *sum -= v;
        }
        Ok(())
    }
    fn value(&self, acc: &mut Accumulator) -> Result<Value, FunctionError> {
        Ok(Value::Integer(*acc.downcast_ref::<i64>().unwrap_or(&0)))
    }
    fn finish(&self, mut acc: Accumulator) -> Result<Value, FunctionError> {
        self.value(&mut acc)
    }
}

fn scalar_fn(name: &str, arity: i32, body: impl ScalarFunction + 'static) -> FunctionDefinition {
    FunctionDefinition {
        name: name.into(),
        arity,
        deterministic: true,
        direct_only: false,
        body: FunctionBody::Scalar(Arc::new(body)),
    }
}

#[test]
fn a_function_defined_before_the_open_runs_on_the_writer_and_the_readers() {
    let db = open_file_with(2, |settings| {
        settings
            .registrations
            .define(scalar_fn("seven", 0, Constant(7)))
            .unwrap();
    });
    learn_route(&db, "SELECT seven()");
    let (_, readers) = executed(&db);
    for _ in 0..8 {
        assert_eq!(scalar(&db, "SELECT seven()"), 7);
    }
    assert_eq!(executed(&db).1, readers + 8);
    run(&db, "CREATE TABLE t(x)", vec![]);
    run(&db, "INSERT INTO t VALUES (seven())", vec![]);
    assert_eq!(scalar(&db, "SELECT x FROM t"), 7);
}

#[test]
fn a_function_defined_later_is_in_force_for_the_next_job_on_every_connection() {
    let db = open_file(2);
    learn_route(&db, "SELECT 1");
    db.define_function(scalar_fn("late", 0, Constant(3)))
        .unwrap();
    learn_route(&db, "SELECT late()");
    for _ in 0..8 {
        assert_eq!(scalar(&db, "SELECT late()"), 3);
    }
}

#[test]
fn an_error_from_a_function_fails_the_statement_with_its_message() {
    let db = open_file(1);
    db.define_function(scalar_fn("refuse", 1, Refuse)).unwrap();
    let result = call(&db, Request::All(stmt(&db, "SELECT refuse(5)", vec![])));
    match result {
        Err(offloop_engine::Error::Sqlite { code, message }) => {
            assert_eq!(code, 1);
            assert_eq!(message, "refused [Integer(5)]");
        }
        other => panic!("expected a SQLite error, got {other:?}"),
    }
}

#[test]
fn aggregates_and_window_functions_run_with_their_accumulators() {
    let db = open_file(1);
    create_numbers(&db, 5);
    db.define_function(FunctionDefinition {
        name: "total".into(),
        arity: 1,
        deterministic: true,
        direct_only: false,
        body: FunctionBody::Aggregate {
            body: Arc::new(Sum),
            window: true,
        },
    })
    .unwrap();
    assert_eq!(scalar(&db, "SELECT total(id) FROM t"), 15);
    assert_eq!(scalar(&db, "SELECT total(id) FROM t WHERE 0"), 0);
    let moving = all(
        &db,
        "SELECT total(id) OVER (ORDER BY id ROWS 1 PRECEDING) FROM t",
        vec![],
    );
    assert_eq!(
        moving,
        vec![
            vec![int(1)],
            vec![int(3)],
            vec![int(5)],
            vec![int(7)],
            vec![int(9)]
        ]
    );
}

#[test]
fn a_definition_sqlite_refuses_everywhere_is_refused_at_once() {
    let db = open_file(1);
    assert!(db.define_function(scalar_fn("", 0, Constant(1))).is_err());
    assert!(db
        .define_function(scalar_fn("many", 1001, Constant(1)))
        .is_err());
    assert!(db
        .define_function(scalar_fn("any", -1, Constant(1)))
        .is_ok());
}
