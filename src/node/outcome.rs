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

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use napi::{sys, Result};
use offloop_engine::{self as engine, Outcome, Role, RowSet, Value};

use super::completion::{self, Completion};
use super::js::{Cx, Js};

/// Per-call flags, set by index.js from the statement's options.
pub const READ_BIG_INTS: u32 = 1;

/// JS numbers hold integers exactly up to 2^53 - 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Record kinds in a drain's flat array (lib/calls.js reads the same).
const FAILED: f64 = 0.0;
const VALUE: f64 = 1.0;
const RUN: f64 = 2.0;
const ROWS: f64 = 3.0;

/// Arguments per call of `pack`. Each is a stack slot in V8, whose stack is
/// about 1 MB; 8,192 slots (64 KiB) leave room for whatever runs the drain.
const PACK_CHUNK: usize = 8192;

/// Column lists whose JS names are cached. A server has a few dozen
/// statements; past this many lists, the cache starts over.
const COLUMN_CACHE_CAPACITY: usize = 512;

/// Values on their way into one JS array.
struct Packer {
    cx: Cx,
    handles: Vec<sys::napi_value>,
}

impl Packer {
    fn new(cx: Cx, capacity: usize) -> Packer {
        Packer {
            cx,
            handles: Vec::with_capacity(capacity),
        }
    }

    fn push(&mut self, value: Js) {
        self.handles.push(value.0);
    }

    fn number(&mut self, v: f64) -> Result<()> {
        self.push(self.cx.number(v)?);
        Ok(())
    }

    /// The JS array of every value pushed, in order.
    fn finish(self) -> Result<Js> {
        let (pack, join) = completion::packers(self.cx)?;
        if self.handles.len() <= PACK_CHUNK {
            return self.cx.call(pack, &self.handles);
        }
        let mut parts = Vec::with_capacity(self.handles.len().div_ceil(PACK_CHUNK));
        for chunk in self.handles.chunks(PACK_CHUNK) {
            parts.push(self.cx.call(pack, chunk)?.0);
        }
        // The parts are few (one per 8,192 values) and each is one argument.
        self.cx.call(join, &parts)
    }
}

/// FNV-1a: the cache is looked up once per result, with a few short
/// names as the key, where SipHash's setup would cost more than the
/// hashing. The keys are column names of the application's own queries.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type ColumnCache = HashMap<Box<[String]>, sys::napi_ref, BuildHasherDefault<Fnv>>;

thread_local! {
    /// Column lists to arrays of their names, held by reference.
    static COLUMNS: RefCell<ColumnCache> = RefCell::new(ColumnCache::default());
}

/// Drops the cache when its environment ends (Node frees the references).
pub fn forget_cached_columns() {
    COLUMNS.with(|c| c.borrow_mut().clear());
}

/// The JS array of `names`, the same array for the same list: lib/rows.js
/// only reads it.
fn column_names(cx: Cx, names: &[String]) -> Result<Js> {
    let cached = COLUMNS.with(|c| c.borrow().get(names).copied());
    if let Some(reference) = cached {
        let mut value = std::ptr::null_mut();
        // SAFETY: the reference was created in this environment (the cache
        // is a thread local cleared when the environment ends) and is
        // deleted only when it leaves the cache.
        super::js::check(unsafe { sys::napi_get_reference_value(cx.0, reference, &mut value) })?;
        return Ok(Js(value));
    }
    let mut packer = Packer::new(cx, names.len());
    for name in names {
        packer.push(cx.string(name)?);
    }
    let array = packer.finish()?;
    let mut reference = std::ptr::null_mut();
    // SAFETY: live env and the array just made in it.
    super::js::check(unsafe { sys::napi_create_reference(cx.0, array.0, 1, &mut reference) })?;
    COLUMNS.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= COLUMN_CACHE_CAPACITY {
            for (_, old) in cache.drain() {
                // SAFETY: a live reference of this environment, leaving the
                // cache (nothing else holds it).
                unsafe { sys::napi_delete_reference(cx.0, old) };
            }
        }
        cache.insert(names.into(), reference);
    });
    Ok(array)
}

/// Everything taken from the queue, as one flat array of records, each
/// starting `id, kind`:
/// - `FAILED, error` (see `error_to_js`);
/// - `VALUE, payload`: any other outcome (see `outcome_to_js`);
/// - `RUN, changes, lastInsertRowid`;
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
        let big = c.flags & READ_BIG_INTS != 0;
        match c.result {
            Ok(Outcome::Batch {
                failed: Some((index, error)),
                ..
            }) => {
                let desc = error_to_js(cx, &error)?;
                cx.set_element(desc, 5, cx.number(index as f64)?)?;
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
    let big = flags & READ_BIG_INTS != 0;
    Ok(Ok(match outcome {
        Outcome::Done => cx.undefined()?,
        // Only reached inside a batch or for a caller that expects a pair.
        Outcome::Run {
            changes,
            last_insert_rowid,
        } => {
            let mut pair = Packer::new(cx, 2);
            pair.push(integer(cx, changes, big)?);
            pair.push(integer(cx, last_insert_rowid, big)?);
            pair.finish()?
        }
        Outcome::Rows(rows) => match first_unreadable(&rows, 0, big) {
            Some((_, e)) => return Ok(Err(e)),
            None => {
                let mut flat = Packer::new(cx, rows.values.len() + 2);
                push_rows(&mut flat, &rows, big)?;
                flat.finish()?
            }
        },
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
                        Role::Writer => -1.0,
                        Role::Reader(i) => i as f64,
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
        Outcome::Columns(columns) => {
            let mut flat = Packer::new(cx, columns.len() * 5);
            for c in &columns {
                flat.push(cx.string(&c.name)?);
                flat.push(cx.opt_string(c.column.as_deref())?);
                flat.push(cx.opt_string(c.database.as_deref())?);
                flat.push(cx.opt_string(c.table.as_deref())?);
                flat.push(cx.opt_string(c.decl_type.as_deref())?);
            }
            flat.finish()?
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

/// `[code, message, errcode, errstr, sqliteCode]`; the last three are null
/// unless SQLite produced the error. A failed batch adds the failing
/// statement's index as a sixth element.
pub fn error_to_js(cx: Cx, error: &engine::Error) -> Result<Js> {
    // What a user function threw is rejected with as it is.
    if let Some(thrown) = super::functions::take_thrown(cx, error)? {
        let out = cx.array(2)?;
        cx.set_element(out, 0, cx.string(super::functions::THROWN_CODE)?)?;
        cx.set_element(out, 1, thrown)?;
        return Ok(out);
    }
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
