//! Completed jobs to JS values, on the JS thread. The shapes here are an
//! internal protocol with lib/calls.js and lib/rows.js, which build the
//! public objects.
//!
//! Turning rows into JS values is the work that stays on the JS thread, so
//! this path is built for it (bench/classic.mjs measures it):
//! - every value of a drain goes into one list of handles, which becomes a
//!   JS array through a single call of `pack` (`(...v) => v`): V8 builds an
//!   array from a call's arguments with a copy, where Node-API would set
//!   each element through a generic property store;
//! - column names are JS strings created once per column list and cached;
//! - the row objects themselves are built in JS (lib/rows.js): Node-API can
//!   only make objects with `Object.prototype`, and `node:sqlite`'s rows
//!   have none.

use napi::Result;
use offloop_engine::{self as engine, Outcome, Role, RowSet, Value};

use super::completion::Completion;
use super::errors::{error_slot, error_to_js};
use super::js::{Cx, Js};
use super::packer::{column_names, Packer};
use super::protocol::{flag, record, WRITER_ROLE};

/// JS numbers hold integers exactly up to 2^53 - 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Record kinds in a drain's flat array, as numbers for the packer.
const FAILED: f64 = record::FAILED as f64;
const VALUE: f64 = record::VALUE as f64;
const RUN: f64 = record::RUN as f64;
const ROWS: f64 = record::ROWS as f64;
const PROGRESS: f64 = record::PROGRESS as f64;

/// Everything taken from the queue, as one flat array of records, each
/// starting `id, kind`:
/// - `FAILED, error` (see `error_to_js`);
/// - `VALUE, payload`: any other outcome (see `outcome_to_js`);
/// - `RUN, changes, lastInsertRowid`;
/// - `PROGRESS, totalPages, remainingPages`: a backup's step (its call
///   completes later);
/// - `ROWS, columns, n, v1 … vn`: the rows' values, row-major.
pub fn completions_to_js(cx: Cx, completions: Vec<Completion>) -> Result<Js> {
    let values: usize = completions
        .iter()
        .map(|c| match &c.result {
            Ok(Outcome::Rows(rows)) => rows.values.len(),
            _ => 0,
        })
        .sum();
    let mut out = Packer::new(cx, completions.len() * 4 + values);
    for c in completions {
        out.number(c.id)?;
        let big = c.flags & flag::READ_BIG_INTS != 0;
        match c.result {
            Ok(Outcome::Batch {
                failed: Some((index, error)),
                ..
            }) => {
                let desc = error_to_js(cx, &error)?;
                cx.set_element(desc, error_slot::BATCH_INDEX, cx.number(index as f64)?)?;
                out.number(FAILED)?;
                out.push(desc);
            }
            Ok(Outcome::Run {
                changes,
                last_insert_rowid,
            }) => {
                out.number(RUN)?;
                out.push(integer(cx, changes, big)?);
                out.push(integer(cx, last_insert_rowid, big)?);
            }
            Ok(Outcome::Rows(rows)) => match first_unreadable(&rows, 0, big) {
                Some((_, e)) => {
                    out.number(FAILED)?;
                    out.push(error_to_js(cx, &e)?);
                }
                None => {
                    out.number(ROWS)?;
                    push_rows(&mut out, &rows, big)?;
                }
            },
            Ok(Outcome::Progress {
                total_pages,
                remaining_pages,
            }) => {
                out.number(PROGRESS)?;
                out.number(total_pages as f64)?;
                out.number(remaining_pages as f64)?;
            }
            Ok(outcome) => match outcome_to_js(cx, outcome, c.flags)? {
                Ok(value) => {
                    out.number(VALUE)?;
                    out.push(value);
                }
                Err(error) => {
                    out.number(FAILED)?;
                    out.push(error_to_js(cx, &error)?);
                }
            },
            Err(error) => {
                out.number(FAILED)?;
                out.push(error_to_js(cx, &error)?);
            }
        }
    }
    out.finish()
}

/// `columns, n, v1 … vn` of `rows`. A value JS cannot take (see
/// `first_unreadable`) is left null: the caller reports it.
fn push_rows(out: &mut Packer, rows: &RowSet, big: bool) -> Result<()> {
    let cx = out.cx;
    out.push(column_names(cx, &rows.columns)?);
    out.number(rows.values.len() as f64)?;
    for value in &rows.values {
        out.push(value_to_js(cx, value, big)?);
    }
    Ok(())
}

fn value_to_js(cx: Cx, value: &Value, big: bool) -> Result<Js> {
    match value {
        Value::Null => cx.null(),
        Value::Integer(v) if big => cx.bigint(*v),
        Value::Integer(v) if fits_number(*v) => cx.number(*v as f64),
        Value::Integer(_) => cx.null(),
        Value::Real(v) => cx.number(*v),
        Value::Text(s) => cx.string(s),
        Value::Blob(b) => cx.uint8array(b),
    }
}

fn integer(cx: Cx, v: i64, big: bool) -> Result<Js> {
    if big {
        cx.bigint(v)
    } else {
        cx.number(v as f64)
    }
}

/// The JS payload of a successful job that is neither a run result nor
/// rows, or the error a value conversion hit (an integer JS numbers cannot
/// hold, without `readBigInts`).
fn outcome_to_js(cx: Cx, outcome: Outcome, flags: u32) -> Result<engine::Result<Js>> {
    let big = flags & flag::READ_BIG_INTS != 0;
    Ok(Ok(match outcome {
        Outcome::Done => cx.undefined()?,
        // `completions_to_js` writes these as RUN, ROWS and PROGRESS records and never
        // passes them here.
        Outcome::Pages(pages) => cx.number(pages as f64)?,
        Outcome::Bytes(bytes) => cx.uint8array(&bytes)?,
        Outcome::Applied(applied) => cx.boolean(applied)?,
        Outcome::Run { .. } | Outcome::Rows(_) | Outcome::Progress { .. } => {
            return Ok(Err(engine::Error::invalid_state(
                "run, rows and progress outcomes have records of their own",
            )))
        }
        // `[columns, values, role, id, unreadable?]`. A row holding a value
        // JS cannot take becomes an error in its place, listed as
        // `[row, error, ...]` in the fifth element: node:sqlite's next()
        // throws it on reaching the row and goes on with the next one.
        Outcome::Chunk { rows, cursor } => {
            let unreadable = unreadable_rows(&rows, big);
            let mut values = Packer::new(cx, rows.values.len());
            for value in &rows.values {
                values.push(value_to_js(cx, value, big)?);
            }
            let mut chunk = Packer::new(cx, 5);
            chunk.push(column_names(cx, &rows.columns)?);
            chunk.push(values.finish()?);
            match cursor {
                None => {
                    chunk.push(cx.null()?);
                    chunk.push(cx.null()?);
                }
                Some(c) => {
                    chunk.number(match c.role {
                        Role::Reader(i) => i as f64,
                        Role::Writer | Role::Checkpointer => WRITER_ROLE as f64,
                    })?;
                    chunk.number(c.id as f64)?;
                }
            }
            if !unreadable.is_empty() {
                let mut list = Packer::new(cx, unreadable.len() * 2);
                for (row, e) in &unreadable {
                    list.number(*row as f64)?;
                    list.push(error_to_js(cx, e)?);
                }
                chunk.push(list.finish()?);
            }
            chunk.finish()?
        }
        Outcome::Columns(columns) => columns_to_js(cx, &columns)?,
        // `[columns' metadata, changes, lastInsertRowid, names, values]`.
        Outcome::Query {
            columns,
            rows,
            changes,
            last_insert_rowid,
        } => {
            if let Some((_, e)) = first_unreadable(&rows, 0, big) {
                return Ok(Err(e));
            }
            let mut values = Packer::new(cx, rows.values.len());
            for value in &rows.values {
                values.push(value_to_js(cx, value, big)?);
            }
            let mut query = Packer::new(cx, 5);
            query.push(columns_to_js(cx, &columns)?);
            query.push(integer(cx, changes, big)?);
            query.push(integer(cx, last_insert_rowid, big)?);
            query.push(column_names(cx, &rows.columns)?);
            query.push(values.finish()?);
            query.finish()?
        }
        Outcome::Text(text) => cx.opt_string(text.as_deref())?,
        Outcome::Settings(report) => super::settings::report_to_js(cx, &report)?,
        // One flat array: per statement `RUN, changes, lastInsertRowid` or
        // `ROWS, columns, n, v1 … vn`, as in a drain.
        Outcome::Batch { results, .. } => {
            let values: usize = results
                .iter()
                .map(|r| match r {
                    Outcome::Rows(rows) => rows.values.len() + 3,
                    _ => 3,
                })
                .sum();
            let mut flat = Packer::new(cx, values);
            for result in results {
                match result {
                    Outcome::Run {
                        changes,
                        last_insert_rowid,
                    } => {
                        flat.number(RUN)?;
                        flat.push(integer(cx, changes, big)?);
                        flat.push(integer(cx, last_insert_rowid, big)?);
                    }
                    Outcome::Rows(rows) => {
                        if let Some((_, e)) = first_unreadable(&rows, 0, big) {
                            return Ok(Err(e));
                        }
                        flat.number(ROWS)?;
                        push_rows(&mut flat, &rows, big)?;
                    }
                    _ => {
                        return Ok(Err(engine::Error::invalid_state(
                            "unexpected outcome in a batch",
                        )))
                    }
                }
            }
            flat.finish()?
        }
        Outcome::Checkpoint {
            log_frames,
            checkpointed_frames,
        } => {
            let mut pair = Packer::new(cx, 2);
            pair.number(log_frames as f64)?;
            pair.number(checkpointed_frames as f64)?;
            pair.finish()?
        }
    }))
}

/// Column metadata as one flat array: `name, column, database, table,
/// type` per column (lib/rows.js, `decodeColumns`).
fn columns_to_js(cx: Cx, columns: &[engine::ColumnInfo]) -> Result<Js> {
    let mut flat = Packer::new(cx, columns.len() * 5);
    for c in columns {
        flat.push(cx.string(&c.name)?);
        flat.push(cx.opt_string(c.column.as_deref())?);
        flat.push(cx.opt_string(c.database.as_deref())?);
        flat.push(cx.opt_string(c.table.as_deref())?);
        flat.push(cx.opt_string(c.decl_type.as_deref())?);
    }
    flat.finish()
}

/// Whether an INTEGER reads as a JS number without `readBigInts`.
/// node:sqlite tests `std::abs(v) <= MAX_SAFE_INTEGER`, and the absolute
/// value of INT64_MIN overflows to itself, so INT64_MIN passes and reads
/// as the number -9223372036854775808.
fn fits_number(v: i64) -> bool {
    v == i64::MIN || (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&v)
}

/// The first value from index `from` on that JS cannot hold (an unsafe
/// integer without `readBigInts`): its index in `rows.values` and the
/// error to report.
fn first_unreadable(rows: &RowSet, from: usize, big: bool) -> Option<(usize, engine::Error)> {
    if big {
        return None;
    }
    rows.values[from..]
        .iter()
        .enumerate()
        .find_map(|(i, value)| match value {
            Value::Integer(v) if !fits_number(*v) => Some((
                from + i,
                engine::Error::Misuse {
                    code: "ERR_OUT_OF_RANGE",
                    message: format!(
                        "Value is too large to be represented as a JavaScript number: {v}"
                    ),
                },
            )),
            _ => None,
        })
}

/// Each row holding a value JS cannot take, with the error for its first
/// such value.
fn unreadable_rows(rows: &RowSet, big: bool) -> Vec<(usize, engine::Error)> {
    let width = rows.columns.len().max(1);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some((i, e)) = first_unreadable(rows, from, big) {
        out.push((i / width, e));
        from = (i / width + 1) * width;
    }
    out
}
