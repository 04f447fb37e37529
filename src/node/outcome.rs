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
use super::protocol::{
    checkpoint_result, chunk, column, flag, query, record, rows_record, run_record, unreadable,
    WRITER_ROLE,
};

/// JS numbers hold integers exactly up to 2^53 - 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Record kinds in a drain's flat array, as numbers for the packer.
const FAILED: f64 = record::FAILED as f64;
const VALUE: f64 = record::VALUE as f64;
const RUN: f64 = record::RUN as f64;
const ROWS: f64 = record::ROWS as f64;
const PROGRESS: f64 = record::PROGRESS as f64;
const TIMING: f64 = record::TIMING as f64;

/// Everything taken from the queue, as one flat array of records, each
/// starting `id, kind`:
/// - `FAILED, error` (see `error_to_js`);
/// - `VALUE, payload`: any other outcome (see `outcome_to_js`);
/// - `RUN, changes, lastInsertRowid`;
/// - `PROGRESS, totalPages, remainingPages`: a backup's step (its call
///   completes later);
/// - `ROWS, columns, n, v1 … vn`: the rows' values, row-major;
/// - `TIMING, thread, waitMs, runMs`: where and when a TIMED call ran,
///   followed by the call's own record (with its id again).
///
/// The ROWS records' rows are left in `converted`, for the caller to free
/// (see `sweeper`).
pub fn completions_to_js(
    cx: Cx,
    completions: Vec<Completion>,
    converted: &mut Vec<RowSet>,
) -> Result<Js> {
    let values: usize = completions
        .iter()
        .map(|c| match &c.result {
            Ok(Outcome::Rows(rows)) => rows.values.len(),
            _ => 0,
        })
        .sum();
    let mut out = Packer::new(cx, completions.len() * 4 + values);
    for c in completions {
        if let Some(timing) = &c.timing {
            out.number(c.id)?;
            out.number(TIMING)?;
            out.push(cx.string(&timing.thread)?);
            out.number(timing.wait_ms)?;
            out.number(timing.run_ms)?;
        }
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
                let at = out.position();
                out.put(at + run_record::KIND, cx.number(RUN)?)?;
                out.put(at + run_record::CHANGES, integer(cx, changes, big)?)?;
                let rowid = integer(cx, last_insert_rowid, big)?;
                out.put(at + run_record::LAST_INSERT_ROWID, rowid)?;
            }
            Ok(Outcome::Rows(rows)) => match first_unreadable(&rows, 0, big) {
                Some((_, e)) => {
                    out.number(FAILED)?;
                    out.push(error_to_js(cx, &e)?);
                }
                None => {
                    let at = out.position();
                    out.put(at + rows_record::KIND, cx.number(ROWS)?)?;
                    push_rows(&mut out, at, &rows, big)?;
                    converted.push(rows);
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

/// The rest of the `protocol::rows_record` whose kind is at `at`: `columns,
/// n, v1 … vn` of `rows`. A value JS cannot take (see `first_unreadable`)
/// is left null: the caller reports it.
fn push_rows(out: &mut Packer, at: usize, rows: &RowSet, big: bool) -> Result<()> {
    let cx = out.cx;
    out.put(at + rows_record::COLUMNS, column_names(cx, &rows.columns)?)?;
    let count = cx.number(rows.values.len() as f64)?;
    out.put(at + rows_record::COUNT, count)?;
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
        // TXIDs stay below 2^53, where a JS number is exact.
        Outcome::Number(n) => cx.number(n as f64)?,
        Outcome::Bytes(bytes) => cx.uint8array(&bytes)?,
        Outcome::Applied(applied) => cx.boolean(applied)?,
        Outcome::Run { .. } | Outcome::Rows(_) | Outcome::Progress { .. } => {
            return Ok(Err(engine::Error::invalid_state(
                "run, rows and progress outcomes have records of their own",
            )))
        }
        // `protocol::chunk`. A row holding a value JS cannot take becomes
        // an error in its place, listed in `UNREADABLE`: node:sqlite's
        // next() throws it on reaching the row and goes on with the next.
        Outcome::Chunk { rows, cursor } => {
            let unread = unreadable_rows(&rows, big);
            let mut values = Packer::new(cx, rows.values.len());
            for value in &rows.values {
                values.push(value_to_js(cx, value, big)?);
            }
            let mut payload = Packer::new(cx, chunk::UNREADABLE as usize + 1);
            payload.put(chunk::COLUMNS as usize, column_names(cx, &rows.columns)?)?;
            payload.put(chunk::VALUES as usize, values.finish()?)?;
            let (role, id) = match cursor {
                None => (cx.null()?, cx.null()?),
                Some(c) => (
                    cx.number(match c.role {
                        Role::Reader(i) => i as f64,
                        Role::Writer | Role::Checkpointer => WRITER_ROLE as f64,
                    })?,
                    cx.number(c.id as f64)?,
                ),
            };
            payload.put(chunk::CURSOR_ROLE as usize, role)?;
            payload.put(chunk::CURSOR_ID as usize, id)?;
            if !unread.is_empty() {
                let width = unreadable::WIDTH as usize;
                let mut list = Packer::new(cx, unread.len() * width);
                for (i, (row, e)) in unread.iter().enumerate() {
                    let at = i * width;
                    list.put(at + unreadable::ROW as usize, cx.number(*row as f64)?)?;
                    list.put(at + unreadable::ERROR as usize, error_to_js(cx, e)?)?;
                }
                payload.put(chunk::UNREADABLE as usize, list.finish()?)?;
            }
            payload.finish()?
        }
        Outcome::Columns(columns) => columns_to_js(cx, &columns)?,
        // `protocol::query`.
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
            let mut payload = Packer::new(cx, query::VALUES as usize + 1);
            payload.put(query::COLUMNS as usize, columns_to_js(cx, &columns)?)?;
            payload.put(query::CHANGES as usize, integer(cx, changes, big)?)?;
            let rowid = integer(cx, last_insert_rowid, big)?;
            payload.put(query::LAST_INSERT_ROWID as usize, rowid)?;
            payload.put(query::NAMES as usize, column_names(cx, &rows.columns)?)?;
            payload.put(query::VALUES as usize, values.finish()?)?;
            payload.finish()?
        }
        Outcome::Text(text) => cx.opt_string(text.as_deref())?,
        Outcome::Settings(report) => super::settings::report_to_js(cx, &report)?,
        // One flat array: per statement a `protocol::run_record` or a
        // `protocol::rows_record`, as in a drain without the id.
        Outcome::Batch { results, .. } => {
            let values: usize = results
                .iter()
                .map(|r| match r {
                    Outcome::Rows(rows) => rows_record::VALUES + rows.values.len(),
                    _ => run_record::WIDTH,
                })
                .sum();
            let mut flat = Packer::new(cx, values);
            for result in results {
                let at = flat.position();
                match result {
                    Outcome::Run {
                        changes,
                        last_insert_rowid,
                    } => {
                        flat.put(at + run_record::KIND, cx.number(RUN)?)?;
                        flat.put(at + run_record::CHANGES, integer(cx, changes, big)?)?;
                        let rowid = integer(cx, last_insert_rowid, big)?;
                        flat.put(at + run_record::LAST_INSERT_ROWID, rowid)?;
                    }
                    Outcome::Rows(rows) => {
                        if let Some((_, e)) = first_unreadable(&rows, 0, big) {
                            return Ok(Err(e));
                        }
                        flat.put(at + rows_record::KIND, cx.number(ROWS)?)?;
                        push_rows(&mut flat, at, &rows, big)?;
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
            let mut pair = Packer::new(cx, checkpoint_result::CHECKPOINTED_FRAMES as usize + 1);
            pair.put(
                checkpoint_result::LOG_FRAMES as usize,
                cx.number(log_frames as f64)?,
            )?;
            pair.put(
                checkpoint_result::CHECKPOINTED_FRAMES as usize,
                cx.number(checkpointed_frames as f64)?,
            )?;
            pair.finish()?
        }
    }))
}

/// Column metadata as one flat array, `protocol::column` per column
/// (lib/rows.js, `decodeColumns`).
fn columns_to_js(cx: Cx, columns: &[engine::ColumnInfo]) -> Result<Js> {
    let width = column::WIDTH as usize;
    let mut flat = Packer::new(cx, columns.len() * width);
    for (i, c) in columns.iter().enumerate() {
        let at = i * width;
        flat.put(at + column::NAME as usize, cx.string(&c.name)?)?;
        flat.put(
            at + column::COLUMN as usize,
            cx.opt_string(c.column.as_deref())?,
        )?;
        let database = cx.opt_string(c.database.as_deref())?;
        flat.put(at + column::DATABASE as usize, database)?;
        flat.put(
            at + column::TABLE as usize,
            cx.opt_string(c.table.as_deref())?,
        )?;
        let decl_type = cx.opt_string(c.decl_type.as_deref())?;
        flat.put(at + column::TYPE as usize, decl_type)?;
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
