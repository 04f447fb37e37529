//! Row changes (SQLite's update hook on the writer): recorded in order while
//! a caller wants them, with the schema, table and rowid of each; nothing
//! while nobody does.

mod common;

use common::*;
use offloop_engine::{RowChange, RowOp};

fn change(op: RowOp, table: &str, rowid: i64) -> RowChange {
    RowChange {
        op,
        database: "main".into(),
        table: table.into(),
        rowid,
    }
}

#[test]
fn the_writer_records_each_changed_row_in_order_while_they_are_wanted() {
    let db = open_file_with(1, |_| {});
    let changes = db.settings().row_changes.clone();
    exec(&db, "CREATE TABLE t(v)");
    run(&db, "INSERT INTO t VALUES (0)", vec![]);
    assert_eq!(changes.take(), vec![], "nothing while nobody wants them");

    changes.set_wanted(true);
    run(&db, "INSERT INTO t VALUES (1)", vec![]);
    exec(
        &db,
        "INSERT INTO t VALUES (2), (3); UPDATE t SET v = v + 10 WHERE rowid = 3",
    );
    run(&db, "DELETE FROM t WHERE rowid <= 2", vec![]);
    assert_eq!(
        changes.take(),
        vec![
            change(RowOp::Insert, "t", 2),
            change(RowOp::Insert, "t", 3),
            change(RowOp::Insert, "t", 4),
            change(RowOp::Update, "t", 3),
            change(RowOp::Delete, "t", 1),
            change(RowOp::Delete, "t", 2),
        ]
    );
    assert_eq!(changes.take(), vec![], "taken once");

    changes.set_wanted(false);
    run(&db, "INSERT INTO t VALUES (5)", vec![]);
    changes.set_wanted(true);
    assert_eq!(changes.take(), vec![], "nothing recorded while off");
    run(&db, "INSERT INTO t VALUES (6)", vec![]);
    assert_eq!(changes.take(), vec![change(RowOp::Insert, "t", 6)]);
}
