//! Routing: a SQL text runs on the writer until the writer has learned what
//! it is; read-only queries then go to the readers, everything else (and any
//! query that depends on the writer's own connection) stays on the writer.

mod common;

use common::*;
use offloop_engine::{Request, Route, ScopeKind, Settings};

const COUNT: &str = "SELECT count(*) FROM t";

#[test]
fn a_new_sql_text_runs_on_the_writer_first_then_on_the_readers() {
    let db = open_file(2);
    create_numbers(&db, 2);
    assert_eq!(db.sql(COUNT).route(), Route::Unknown);
    let (writer, readers) = executed(&db);

    assert_eq!(scalar(&db, COUNT), 2);
    assert_eq!(executed(&db), (writer + 1, readers));
    assert_eq!(db.sql(COUNT).route(), Route::Reader);

    for _ in 0..3 {
        assert_eq!(scalar(&db, COUNT), 2);
    }
    assert_eq!(executed(&db), (writer + 1, readers + 3));
}

#[test]
fn writes_pragmas_and_transaction_control_stay_on_the_writer() {
    let db = open_file(2);
    create_numbers(&db, 0);
    let texts = [
        "INSERT INTO t(v) VALUES ('x')",
        "UPDATE t SET v = 'y'",
        "PRAGMA user_version",
        "SELECT * FROM t LIMIT 0",
        "BEGIN",
        "SAVEPOINT s",
        "RELEASE s",
        "COMMIT",
    ];
    // "SELECT ... LIMIT 0" is read-only: learn it so the routing below is
    // shown to depend on the statement, not on every text going to the
    // writer.
    learn_route(&db, texts[3]);
    let (writer, readers) = executed(&db);
    for _ in 0..2 {
        for sql in texts {
            let _ = all(&db, sql, vec![]);
        }
    }
    for sql in texts {
        let expected = if sql.starts_with("SELECT") {
            Route::Reader
        } else {
            Route::Writer
        };
        assert_eq!(db.sql(sql).route(), expected, "{sql}");
    }
    assert_eq!(executed(&db), (writer + 14, readers + 2));
}

#[test]
fn with_no_readers_every_statement_runs_on_the_writer() {
    let db = open_file(0);
    create_numbers(&db, 2);
    assert!(db.stats().readers.is_empty());
    let (writer, _) = executed(&db);
    for _ in 0..3 {
        assert_eq!(scalar(&db, COUNT), 2);
    }
    // Learned as a read, run on the writer all the same.
    assert_eq!(db.sql(COUNT).route(), Route::Reader);
    assert_eq!(db.stats().writer.executed, writer + 3);
}

#[test]
fn a_memory_database_runs_every_statement_on_the_writer() {
    // The default asks for readers; a private in-memory database cannot
    // share its data with them.
    let db = open(Settings::new(":memory:"));
    assert!(db.stats().readers.is_empty());
    create_numbers(&db, 2);
    let (writer, _) = executed(&db);
    // A reader would open an empty database of its own: "no such table".
    for _ in 0..3 {
        assert_eq!(scalar(&db, COUNT), 2);
    }
    assert_eq!(db.stats().writer.executed, writer + 3);
}

#[test]
fn a_select_reading_a_temp_table_stays_on_the_writer() {
    let db = open_file(2);
    exec(
        &db,
        "CREATE TEMP TABLE scratch(v); INSERT INTO scratch VALUES (42)",
    );
    let (writer, readers) = executed(&db);
    // A reader has no TEMP table of that name.
    for _ in 0..3 {
        assert_eq!(scalar(&db, "SELECT v FROM scratch"), 42);
    }
    assert_eq!(db.sql("SELECT v FROM scratch").route(), Route::Writer);
    assert_eq!(executed(&db), (writer + 3, readers));
}

#[test]
fn a_select_of_last_insert_rowid_or_changes_stays_on_the_writer() {
    let db = open_file(2);
    create_numbers(&db, 0);
    let (writer, readers) = executed(&db);
    for _ in 0..3 {
        let (changes, rowid) = run(&db, "INSERT INTO t(v) VALUES (1)", vec![]);
        // On a reader both would be 0.
        assert_eq!(scalar(&db, "SELECT last_insert_rowid()"), rowid);
        assert_eq!(scalar(&db, "SELECT changes()"), changes);
    }
    assert_eq!(db.sql("SELECT last_insert_rowid()").route(), Route::Writer);
    assert_eq!(db.sql("SELECT changes()").route(), Route::Writer);
    assert_eq!(executed(&db), (writer + 9, readers));
}

#[test]
fn a_query_while_the_writer_is_inside_a_transaction_runs_on_the_writer_and_sees_its_writes() {
    let db = open_file(2);
    create_numbers(&db, 2);
    learn_route(&db, COUNT);
    exec(&db, "BEGIN");
    run(&db, "INSERT INTO t(v) VALUES (3)", vec![]);
    let (writer, readers) = executed(&db);
    assert_eq!(scalar(&db, COUNT), 3);
    assert_eq!(executed(&db), (writer + 1, readers));

    exec(&db, "COMMIT");
    assert_eq!(scalar(&db, COUNT), 3);
    assert_eq!(executed(&db), (writer + 2, readers + 1));
}

#[test]
fn a_query_of_last_insert_rowid_first_run_in_a_read_snapshot_still_stays_on_the_writer() {
    let db = open_file(2);
    create_numbers(&db, 0);
    let sql = "SELECT last_insert_rowid()";
    let (begun, _) = callback();
    let mut snapshot = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    let first = call_in(&db, &mut snapshot, Request::All(stmt(&db, sql, vec![])));
    assert_eq!(int_of(&rows(first.unwrap())), 0);
    call_in(&db, &mut snapshot, Request::Commit).unwrap();

    let (_, rowid) = run(&db, "INSERT INTO t(v) VALUES (1)", vec![]);
    assert_eq!(scalar(&db, sql), rowid);
    assert_eq!(db.sql(sql).route(), Route::Writer);
}
