//! Completed jobs to JS values, on the JS thread. The shapes here are an
//! internal protocol with index.js, which builds the public objects.

use napi::Result;
use offloop_engine::{self as engine, Outcome, Role, RowSet, Value};

use super::completion::Completion;
use super::js::{Cx, Js};

/// Per-call flags, set by index.js from the statement's options.
pub const READ_BIG_INTS: u32 = 1;

/// JS numbers hold integers exactly up to 2^53 - 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Everything taken from the queue, as one flat array:
/// `[id, ok, payload, id, ok, payload, ...]`.
pub fn completions_to_js(cx: Cx, completions: Vec<Completion>) -> Result<Js> {
    let out = cx.array(completions.len() * 3)?;
    for (i, c) in completions.into_iter().enumerate() {
        let base = (i * 3) as u32;
        let (ok, payload) = match c.result {
            Ok(Outcome::Batch {
                failed: Some((index, error)),
                ..
            }) => {
                let desc = error_to_js(cx, &error)?;
                cx.set_element(desc, 5, cx.number(index as f64)?)?;
                (false, desc)
            }
            Ok(outcome) => match outcome_to_js(cx, outcome, c.flags)? {
                Ok(value) => (true, value),
                Err(error) => (false, error_to_js(cx, &error)?),
            },
            Err(error) => (false, error_to_js(cx, &error)?),
        };
        cx.set_element(out, base, cx.number(c.id)?)?;
        cx.set_element(out, base + 1, cx.boolean(ok)?)?;
        cx.set_element(out, base + 2, payload)?;
    }
    Ok(out)
}

/// The JS payload of a successful job, or the error a value conversion hit
/// (an integer JS numbers cannot hold, without `readBigInts`).
fn outcome_to_js(cx: Cx, outcome: Outcome, flags: u32) -> Result<engine::Result<Js>> {
    let big = flags & READ_BIG_INTS != 0;
    Ok(Ok(match outcome {
        Outcome::Done => cx.undefined()?,
        Outcome::Run {
            changes,
            last_insert_rowid,
        } => {
            let pair = cx.array(2)?;
            let (a, b) = if big {
                (cx.bigint(changes)?, cx.bigint(last_insert_rowid)?)
            } else {
                (
                    cx.number(changes as f64)?,
                    cx.number(last_insert_rowid as f64)?,
                )
            };
            cx.set_element(pair, 0, a)?;
            cx.set_element(pair, 1, b)?;
            pair
        }
        Outcome::Rows(rows) => match first_unreadable(&rows, 0, big) {
            Some((_, e)) => return Ok(Err(e)),
            None => {
                let (columns, values) = rows_to_js(cx, &rows, big)?;
                let pair = cx.array(2)?;
                cx.set_element(pair, 0, columns)?;
                cx.set_element(pair, 1, values)?;
                pair
            }
        },
        // A row holding a value JS cannot take becomes an error in its
        // place, listed as `[row, error, ...]` in a fifth element:
        // node:sqlite's next() throws it on reaching the row and goes on
        // with the next one.
        Outcome::Chunk { rows, cursor } => {
            let unreadable = unreadable_rows(&rows, big);
            let (columns, values) = rows_to_js(cx, &rows, big)?;
            let chunk = cx.array(4)?;
            cx.set_element(chunk, 0, columns)?;
            cx.set_element(chunk, 1, values)?;
            if !unreadable.is_empty() {
                let list = cx.array(unreadable.len() * 2)?;
                for (k, (row, e)) in unreadable.iter().enumerate() {
                    cx.set_element(list, (k * 2) as u32, cx.number(*row as f64)?)?;
                    cx.set_element(list, (k * 2 + 1) as u32, error_to_js(cx, e)?)?;
                }
                cx.set_element(chunk, 4, list)?;
            }
            let (role, id) = match cursor {
                None => (cx.null()?, cx.null()?),
                Some(c) => (
                    cx.number(match c.role {
                        Role::Writer => -1.0,
                        Role::Reader(i) => i as f64,
                    })?,
                    cx.number(c.id as f64)?,
                ),
            };
            cx.set_element(chunk, 2, role)?;
            cx.set_element(chunk, 3, id)?;
            chunk
        }
        Outcome::Columns(columns) => {
            let flat = cx.array(columns.len() * 5)?;
            for (i, c) in columns.iter().enumerate() {
                let base = (i * 5) as u32;
                cx.set_element(flat, base, cx.string(&c.name)?)?;
                cx.set_element(flat, base + 1, cx.opt_string(c.column.as_deref())?)?;
                cx.set_element(flat, base + 2, cx.opt_string(c.database.as_deref())?)?;
                cx.set_element(flat, base + 3, cx.opt_string(c.table.as_deref())?)?;
                cx.set_element(flat, base + 4, cx.opt_string(c.decl_type.as_deref())?)?;
            }
            flat
        }
        Outcome::Text(text) => cx.opt_string(text.as_deref())?,
        Outcome::Settings(report) => super::settings::report_to_js(cx, &report)?,
        Outcome::Batch { results, .. } => {
            // `[tag, payload]` per statement: 0 a run result, 1 rows.
            let out = cx.array(results.len())?;
            for (i, result) in results.into_iter().enumerate() {
                let tag = if matches!(result, Outcome::Rows(_)) {
                    1.0
                } else {
                    0.0
                };
                let value = match outcome_to_js(cx, result, flags)? {
                    Ok(value) => value,
                    Err(e) => return Ok(Err(e)),
                };
                let pair = cx.array(2)?;
                cx.set_element(pair, 0, cx.number(tag)?)?;
                cx.set_element(pair, 1, value)?;
                cx.set_element(out, i as u32, pair)?;
            }
            out
        }
        Outcome::Checkpoint {
            log_frames,
            checkpointed_frames,
        } => {
            let pair = cx.array(2)?;
            cx.set_element(pair, 0, cx.number(log_frames as f64)?)?;
            cx.set_element(pair, 1, cx.number(checkpointed_frames as f64)?)?;
            pair
        }
    }))
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

/// `[columns, values]` of `rows`. A value JS cannot take (see
/// `first_unreadable`) is left null: the caller reports it.
fn rows_to_js(cx: Cx, rows: &RowSet, big: bool) -> Result<(Js, Js)> {
    let columns = cx.array(rows.columns.len())?;
    for (i, name) in rows.columns.iter().enumerate() {
        cx.set_element(columns, i as u32, cx.string(name)?)?;
    }
    let values = cx.array(rows.values.len())?;
    for (i, value) in rows.values.iter().enumerate() {
        let js = match value {
            Value::Null => cx.null()?,
            Value::Integer(v) if big => cx.bigint(*v)?,
            Value::Integer(v) if fits_number(*v) => cx.number(*v as f64)?,
            Value::Integer(_) => cx.null()?,
            Value::Real(v) => cx.number(*v)?,
            Value::Text(s) => cx.string(s)?,
            Value::Blob(b) => cx.uint8array(b)?,
        };
        cx.set_element(values, i as u32, js)?;
    }
    Ok((columns, values))
}

/// `[code, message, errcode, errstr, sqliteCode]`; the last three are null
/// unless SQLite produced the error. A failed batch adds the failing
/// statement's index as a sixth element.
pub fn error_to_js(cx: Cx, error: &engine::Error) -> Result<Js> {
    let out = cx.array(5)?;
    let (code, errcode) = match error {
        engine::Error::Sqlite { code, .. } => ("ERR_SQLITE_ERROR", Some(*code)),
        engine::Error::Misuse { code, .. } => (*code, None),
        engine::Error::Aborted { .. } => ("ABORT_ERR", None),
        engine::Error::Panic { .. } => ("ERR_OFFLOOP_INTERNAL", None),
    };
    cx.set_element(out, 0, cx.string(code)?)?;
    cx.set_element(out, 1, cx.string(&error.to_string())?)?;
    match errcode {
        Some(errcode) => {
            cx.set_element(out, 2, cx.number(errcode as f64)?)?;
            cx.set_element(out, 3, cx.string(&engine::Error::errstr(errcode))?)?;
            cx.set_element(out, 4, cx.string(engine::result_code_name(errcode))?)?;
        }
        None => {
            for i in 2..5 {
                cx.set_element(out, i, cx.null()?)?;
            }
        }
    }
    Ok(out)
}
