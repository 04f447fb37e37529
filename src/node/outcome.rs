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
        Outcome::Rows(rows) => match rows_to_js(cx, &rows, big)? {
            Ok((columns, values)) => {
                let pair = cx.array(2)?;
                cx.set_element(pair, 0, columns)?;
                cx.set_element(pair, 1, values)?;
                pair
            }
            Err(e) => return Ok(Err(e)),
        },
        Outcome::Chunk { rows, cursor } => match rows_to_js(cx, &rows, big)? {
            Ok((columns, values)) => {
                let chunk = cx.array(4)?;
                cx.set_element(chunk, 0, columns)?;
                cx.set_element(chunk, 1, values)?;
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
            Err(e) => return Ok(Err(e)),
        },
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

fn rows_to_js(cx: Cx, rows: &RowSet, big: bool) -> Result<engine::Result<(Js, Js)>> {
    let columns = cx.array(rows.columns.len())?;
    for (i, name) in rows.columns.iter().enumerate() {
        cx.set_element(columns, i as u32, cx.string(name)?)?;
    }
    let values = cx.array(rows.values.len())?;
    for (i, value) in rows.values.iter().enumerate() {
        let js = match value {
            Value::Null => cx.null()?,
            Value::Integer(v) if big => cx.bigint(*v)?,
            Value::Integer(v) if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(v) => {
                cx.number(*v as f64)?
            }
            Value::Integer(v) => {
                return Ok(Err(engine::Error::Misuse {
                    code: "ERR_OUT_OF_RANGE",
                    message: format!(
                        "Value is too large to be represented as a JavaScript number: {v}"
                    ),
                }))
            }
            Value::Real(v) => cx.number(*v)?,
            Value::Text(s) => cx.string(s)?,
            Value::Blob(b) => cx.uint8array(b)?,
        };
        cx.set_element(values, i as u32, js)?;
    }
    Ok(Ok((columns, values)))
}

/// `[code, message, errcode, errstr, sqliteCode]`; the last three are null
/// unless SQLite produced the error.
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
