//! Binding parameters as `node:sqlite` does: named keys with their prefix or
//! bare, anonymous values into the `?` slots in order, a missing value is
//! NULL, an extra one is SQLite's SQLITE_RANGE.

mod common;

use common::*;
use offloop_engine::{
    BindOptions, Call, Database, Error, Params, Request, Result, Settings, Value,
};

fn db() -> Database {
    // Every statement on the one connection: the tests below also show that
    // a cached statement keeps nothing from its previous call.
    open(Settings::new(":memory:"))
}

fn query(db: &Database, sql: &str, params: Params, bind: BindOptions) -> Result<Vec<Vec<Value>>> {
    let call = Call {
        sql: db.sql(sql),
        params,
        bind,
    };
    common::call(db, Request::All(call)).map(rows)
}

fn named(pairs: &[(&str, Value)]) -> Params {
    Params {
        named: Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        ),
        anonymous: vec![],
    }
}

const BARE_AND_STRICT: BindOptions = BindOptions {
    allow_bare_named: true,
    allow_unknown_named: false,
};
const PREFIXED_ONLY: BindOptions = BindOptions {
    allow_bare_named: false,
    allow_unknown_named: false,
};
const UNKNOWN_ALLOWED: BindOptions = BindOptions {
    allow_bare_named: true,
    allow_unknown_named: true,
};

#[test]
fn anonymous_values_fill_the_question_marks_in_order() {
    let db = db();
    let params = Params::positional(vec![int(1), text("two"), Value::Real(3.5)]);
    assert_eq!(
        query(&db, "SELECT ?, ?, ?", params, BindOptions::default()).unwrap(),
        [[int(1), text("two"), Value::Real(3.5)]]
    );
}

#[test]
fn named_keys_bind_with_any_prefix() {
    let db = db();
    let params = named(&[("$a", int(1)), (":b", int(2)), ("@c", int(3))]);
    assert_eq!(
        query(&db, "SELECT $a, :b, @c", params, PREFIXED_ONLY).unwrap(),
        [[int(1), int(2), int(3)]]
    );
}

#[test]
fn bare_keys_bind_by_default_and_are_unknown_when_bare_names_are_off() {
    let db = db();
    let sql = "SELECT $a, :b";
    assert_eq!(
        query(
            &db,
            sql,
            named(&[("a", int(1)), ("b", int(2))]),
            BARE_AND_STRICT
        )
        .unwrap(),
        [[int(1), int(2)]]
    );
    let refused = query(&db, sql, named(&[("a", int(1))]), PREFIXED_ONLY);
    match refused {
        Err(Error::Misuse {
            code: "ERR_INVALID_STATE",
            message,
        }) => assert_eq!(message, "Unknown named parameter 'a'"),
        other => panic!("expected an unknown parameter error, got {other:?}"),
    }
}

#[test]
fn an_unknown_key_is_an_error_unless_unknown_names_are_allowed() {
    let db = db();
    let params = || named(&[("$a", int(1)), ("$nope", int(2))]);
    let refused = query(&db, "SELECT $a", params(), BARE_AND_STRICT);
    match refused {
        Err(Error::Misuse {
            code: "ERR_INVALID_STATE",
            message,
        }) => assert_eq!(message, "Unknown named parameter '$nope'"),
        other => panic!("expected an unknown parameter error, got {other:?}"),
    }
    assert_eq!(
        query(&db, "SELECT $a", params(), UNKNOWN_ALLOWED).unwrap(),
        [[int(1)]]
    );
}

#[test]
fn named_and_anonymous_values_mix_and_anonymous_ones_skip_named_slots() {
    let db = db();
    let params = Params {
        named: Some(vec![("$a".into(), int(1))]),
        anonymous: vec![int(2), int(3)],
    };
    assert_eq!(
        query(&db, "SELECT ?, $a, ?", params, BindOptions::default()).unwrap(),
        [[int(2), int(1), int(3)]]
    );
}

#[test]
fn a_missing_value_binds_null() {
    let db = db();
    let params = Params::positional(vec![int(1)]);
    assert_eq!(
        query(&db, "SELECT ?, ?", params, BindOptions::default()).unwrap(),
        [[int(1), Value::Null]]
    );
}

#[test]
fn too_many_values_fail_with_sqlite_range() {
    let db = db();
    let params = Params::positional(vec![int(1), int(2)]);
    let call = Call {
        sql: db.sql("SELECT ?"),
        params,
        bind: BindOptions::default(),
    };
    assert_eq!(sqlite_code(common::call(&db, Request::All(call))), 25);

    // Named slots are not anonymous slots.
    let params = Params::positional(vec![int(1)]);
    let call = Call {
        sql: db.sql("SELECT $a"),
        params,
        bind: BindOptions::default(),
    };
    assert_eq!(sqlite_code(common::call(&db, Request::Run(call))), 25);
}

#[test]
fn conflicting_bare_names_refuse_every_named_call_unless_bare_names_are_off() {
    let db = db();
    let sql = "SELECT $a, :a";
    let expected = "Cannot create bare named parameter 'a' because of conflicting names \
                    '$a' and ':a'.";
    for params in [
        named(&[("a", int(1))]),
        // Even fully prefixed keys, as node:sqlite does.
        named(&[("$a", int(1)), (":a", int(2))]),
    ] {
        match query(&db, sql, params, BARE_AND_STRICT) {
            Err(Error::Misuse {
                code: "ERR_INVALID_STATE",
                message,
            }) => assert_eq!(message, expected),
            other => panic!("expected the conflict, got {other:?}"),
        }
    }
    assert_eq!(
        query(
            &db,
            sql,
            named(&[("$a", int(1)), (":a", int(2))]),
            PREFIXED_ONLY
        )
        .unwrap(),
        [[int(1), int(2)]]
    );
}

#[test]
fn a_cached_statement_keeps_no_value_from_its_previous_call() {
    let db = db();
    let sql = "SELECT ?, ?";
    let first = Params::positional(vec![int(1), int(2)]);
    assert_eq!(
        query(&db, sql, first, BindOptions::default()).unwrap(),
        [[int(1), int(2)]]
    );
    let second = Params::positional(vec![int(5)]);
    assert_eq!(
        query(&db, sql, second, BindOptions::default()).unwrap(),
        [[int(5), Value::Null]]
    );
}

#[test]
fn values_keep_their_type_and_empty_text_and_blobs_are_not_null() {
    let db = db();
    let values = vec![
        Value::Null,
        int(i64::MIN),
        Value::Real(-0.5),
        text(""),
        Value::Blob(vec![]),
        text("héllo"),
        Value::Blob(vec![0, 1, 255]),
    ];
    let sql = "SELECT typeof(?1), ?1";
    let expected_types = ["null", "integer", "real", "text", "blob", "text", "blob"];
    for (value, expected) in values.into_iter().zip(expected_types) {
        let params = Params::positional(vec![value.clone()]);
        assert_eq!(
            query(&db, sql, params, BindOptions::default()).unwrap(),
            [[text(expected), value]]
        );
    }
}
