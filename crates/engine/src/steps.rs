//! How a prepared statement's steps become outcomes: every row, one row,
//! the change count, the columns' metadata. Functions of a statement only;
//! they know nothing of connections, caches or threads.

use crate::error::Result;
use crate::job::{ColumnInfo, Outcome};
use crate::statement::RawStatement;
use crate::value::RowSet;

pub fn read_row(stmt: &RawStatement, rows: &mut RowSet) {
    for i in 0..rows.columns.len() {
        rows.values.push(stmt.column_value(i));
    }
}

/// Steps up to `limit` rows into `rows`; `Ok(true)` when the statement ended.
pub fn step_rows(stmt: &mut RawStatement, rows: &mut RowSet, limit: usize) -> Result<bool> {
    let mut count = 0;
    while count < limit {
        if !stmt.step()? {
            return Ok(true);
        }
        read_row(stmt, rows);
        count += 1;
    }
    Ok(false)
}

/// Steps to the end: `run()`'s change count and last rowid.
pub fn run_to_end(stmt: &mut RawStatement) -> Result<Outcome> {
    while stmt.step()? {}
    let (changes, last_insert_rowid) = stmt.changes();
    Ok(Outcome::Run {
        changes,
        last_insert_rowid,
    })
}

/// A new set of up to `limit` rows (`limit` at least 1), with whether the
/// statement ended, or the error that stopped it after the rows before.
/// The column names are read after the first step: a step prepares the
/// statement again when the schema changed (a `SELECT *` after `ALTER
/// TABLE … ADD COLUMN`), and the names must be those of the rows.
pub fn first_rows(stmt: &mut RawStatement, limit: usize) -> (RowSet, Result<bool>) {
    let first = stmt.step();
    let mut rows = RowSet::new(stmt.column_names());
    let ended = match first {
        Err(e) => Err(e),
        Ok(false) => Ok(true),
        Ok(true) => {
            read_row(stmt, &mut rows);
            step_rows(stmt, &mut rows, limit.saturating_sub(1))
        }
    };
    (rows, ended)
}

/// Every row: `all()`.
pub fn all_rows(stmt: &mut RawStatement) -> Result<Outcome> {
    let (rows, ended) = first_rows(stmt, usize::MAX);
    ended?;
    Ok(Outcome::Rows(rows))
}

/// Every row, the columns' metadata and what the statement changed:
/// `query()`. `sqlite3_changes64` keeps the last write's count through
/// statements that write nothing (a SELECT, a CREATE TABLE), so a
/// statement that moved the connection's total by nothing reports 0.
pub fn query_rows(stmt: &mut RawStatement) -> Result<Outcome> {
    let before = stmt.total_changes();
    let (rows, ended) = first_rows(stmt, usize::MAX);
    ended?;
    let columns = column_info(stmt);
    let (changes, last_insert_rowid) = if stmt.total_changes() == before {
        (0, 0)
    } else {
        stmt.changes()
    };
    Ok(Outcome::Query {
        columns,
        rows,
        changes,
        last_insert_rowid,
    })
}

/// The result columns' metadata: `columns()`.
pub fn column_info(stmt: &mut RawStatement) -> Vec<ColumnInfo> {
    stmt.column_names()
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, name)| {
            let [database, table, column, decl_type] = stmt.column_origin(i);
            ColumnInfo {
                name,
                column,
                database,
                table,
                decl_type,
            }
        })
        .collect()
}
