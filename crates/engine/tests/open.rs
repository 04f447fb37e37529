//! Opening: `opened` fires once, after the writer's connection is open
//! (every connection's, under `strict_settings`), or with the first error; jobs queued on a database that could not open fail with that
//! error instead of waiting forever.

mod common;

use common::*;
use offloop_engine::{
    result_code_name, CheckpointMode, Error, Outcome, Request, Role, ScopeKind, Settings,
    TransactionMode,
};

#[test]
fn opened_fires_once_the_writer_is_open_and_every_connection_under_strict_settings() {
    let dir = temp_dir();
    let (db, opened) = try_open(file_settings(&dir, 3));
    let Ok(Outcome::Settings(report)) = opened else {
        panic!("the database did not open: {opened:?}");
    };
    let roles: Vec<Role> = report.connections.iter().map(|c| c.role).collect();
    // The readers and the checkpointer open at their first job.
    assert_eq!(roles, [Role::Writer]);
    // The checkpointer runs from the start, its connection on demand.
    assert!(db.stats().checkpoint.active);
    close(&db).unwrap();

    let strict = Settings {
        strict_settings: true,
        ..file_settings(&dir, 3)
    };
    let (db, opened) = try_open(strict);
    let Ok(Outcome::Settings(report)) = opened else {
        panic!("the database did not open: {opened:?}");
    };
    let roles: Vec<Role> = report.connections.iter().map(|c| c.role).collect();
    assert_eq!(
        roles,
        [
            Role::Writer,
            Role::Reader(0),
            Role::Reader(1),
            Role::Reader(2),
            Role::Checkpointer,
        ]
    );
    assert!(db.stats().checkpoint.active);
    close(&db).unwrap();
}

#[test]
fn a_memory_database_opens_only_the_writer() {
    let (db, opened) = try_open(Settings::new(":memory:"));
    let Ok(Outcome::Settings(report)) = opened else {
        panic!("the database did not open: {opened:?}");
    };
    let roles: Vec<Role> = report.connections.iter().map(|c| c.role).collect();
    assert_eq!(roles, [Role::Writer]);
    close(&db).unwrap();
}

fn unopenable(dir: &tempfile::TempDir) -> Settings {
    let path = dir.path().join("no-such-directory").join("app.db");
    Settings {
        readers: 2,
        ..Settings::new(path.to_str().unwrap())
    }
}

#[track_caller]
fn assert_cantopen(result: &offloop_engine::Result<Outcome>) {
    match result {
        Err(Error::Sqlite { code, .. }) => {
            assert_eq!(code & 0xff, 14, "{result:?}");
            assert!(result_code_name(*code).starts_with("SQLITE_CANTOPEN"));
        }
        other => panic!("expected SQLITE_CANTOPEN, got {other:?}"),
    }
}

#[test]
fn a_path_that_cannot_be_opened_reports_sqlite_cantopen_through_opened() {
    let dir = temp_dir();
    let (db, opened) = try_open(unopenable(&dir));
    assert_cantopen(&opened);
    // Closing a database that never opened still completes.
    close(&db).unwrap();
}

#[test]
fn jobs_queued_on_a_database_that_cannot_open_fail_with_the_open_error() {
    let dir = temp_dir();
    let (done, opened) = callback();
    let db = offloop_engine::Database::open(unopenable(&dir), done).unwrap();
    // Queued before `opened` has fired (nothing waits for it).
    let queued = vec![
        submit(&db, exec_request("CREATE TABLE t(x)")),
        submit(
            &db,
            Request::Run(stmt(&db, "INSERT INTO t VALUES (1)", vec![])),
        ),
        submit(&db, Request::All(stmt(&db, "SELECT 1", vec![]))),
        submit(&db, Request::Checkpoint(CheckpointMode::Passive)),
        submit(
            &db,
            Request::Batch(vec![stmt(&db, "INSERT INTO t VALUES (2)", vec![])]),
        ),
    ];
    let opened = opened.wait();
    assert_cantopen(&opened);
    let error = opened.unwrap_err();
    for pending in queued {
        assert_eq!(pending.wait().unwrap_err(), error);
    }
    // And after it failed.
    assert_eq!(call(&db, exec_request("SELECT 1")).unwrap_err(), error);
    close(&db).unwrap();
}

#[test]
fn a_write_scope_on_a_database_that_cannot_open_fails_with_the_open_error() {
    let dir = temp_dir();
    let (done, opened) = callback();
    let db = offloop_engine::Database::open(unopenable(&dir), done).unwrap();
    let (begun, write_begun) = callback();
    let mut write = db.begin_scope(
        ScopeKind::Write(TransactionMode::Immediate),
        NEVER_IDLE,
        begun,
    );
    let in_write = submit_in(&db, &mut write, exec_request("SELECT 1"));
    let error = opened.wait().unwrap_err();
    assert_eq!(write_begun.wait().unwrap_err(), error);
    assert_eq!(in_write.wait().unwrap_err(), error);
    // And a statement sent after the open failed.
    assert_eq!(
        call_in(&db, &mut write, exec_request("SELECT 2")).unwrap_err(),
        error
    );
    close(&db).unwrap();
}

#[test]
fn a_read_scope_on_a_database_that_cannot_open_fails_with_the_open_error() {
    let dir = temp_dir();
    let (done, opened) = callback();
    let db = offloop_engine::Database::open(unopenable(&dir), done).unwrap();
    let (begun, read_begun) = callback();
    let mut read = db.begin_scope(ScopeKind::Read, NEVER_IDLE, begun);
    let in_read = submit_in(&db, &mut read, Request::All(stmt(&db, "SELECT 1", vec![])));
    let error = opened.wait().unwrap_err();
    assert_eq!(read_begun.wait().unwrap_err(), error);
    assert_eq!(in_read.wait().unwrap_err(), error);
    close(&db).unwrap();
}
