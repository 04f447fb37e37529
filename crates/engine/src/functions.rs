//! User functions and aggregates: what a caller defines once per database
//! and every connection carries (the writer, each reader, readers started
//! later). This file owns the definitions, the append-only log they are
//! kept in, and putting them on a connection through SQLite's function API.
//! It never decides what a function computes: the [`ScalarFunction`] and
//! [`AggregateFunction`] traits are implemented outside the engine (the
//! addon calls JavaScript), and it never waits on anything but them.
//!
//! A definition takes effect on a connection before the next job that
//! connection runs (see [`Registered::apply`]), so a function defined before
//! a call was issued is visible to that call wherever it runs. A definition
//! that cannot be applied yet (SQLite refuses to replace a function while a
//! statement using it is active) is retried before the following job.

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::functions::{Aggregate, Context, FunctionFlags, WindowAggregate};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{ffi, Connection};

use crate::error::{Error, Result};
use crate::value::Value;

/// What a function reports instead of a value: the message SQLite gives the
/// statement that called it (its result code is `SQLITE_ERROR`).
pub type FunctionError = String;

/// A scalar function's body. Called on a SQLite thread, possibly on several
/// threads at once.
pub trait ScalarFunction: Send + Sync {
    fn call(&self, args: Vec<Value>) -> std::result::Result<Value, FunctionError>;
}

/// One group's (or window's) running state, opaque to the engine: the
/// implementation decides what it holds.
pub type Accumulator = Box<dyn Any + Send>;

/// An aggregate's body. SQLite calls `start` before a group's first row,
/// `step` for each row, `inverse` for each row leaving a window (window
/// functions only), `value` for a window's current result and `finish` once
/// at the end (after which the accumulator is dropped).
pub trait AggregateFunction: Send + Sync {
    fn start(&self) -> std::result::Result<Accumulator, FunctionError>;
    fn step(
        &self,
        acc: &mut Accumulator,
        args: Vec<Value>,
    ) -> std::result::Result<(), FunctionError>;
    fn inverse(
        &self,
        acc: &mut Accumulator,
        args: Vec<Value>,
    ) -> std::result::Result<(), FunctionError>;
    fn value(&self, acc: &mut Accumulator) -> std::result::Result<Value, FunctionError>;
    fn finish(&self, acc: Accumulator) -> std::result::Result<Value, FunctionError>;
}

#[derive(Clone)]
pub enum FunctionBody {
    Scalar(Arc<dyn ScalarFunction>),
    /// `window`: usable with OVER (the body implements `inverse` and
    /// `value`); otherwise a plain aggregate, which SQLite refuses as a
    /// window function.
    Aggregate {
        body: Arc<dyn AggregateFunction>,
        window: bool,
    },
}

/// One user function as SQLite knows it: a name and an argument count
/// (-1: any), which together identify it, and its flags.
#[derive(Clone)]
pub struct FunctionDefinition {
    pub name: String,
    pub arity: i32,
    pub deterministic: bool,
    pub direct_only: bool,
    pub body: FunctionBody,
}

/// SQLite's ceiling on a function's declared argument count
/// (SQLITE_MAX_FUNCTION_ARG, 1000 in the bundled build).
const MAX_ARITY: i32 = 1000;
/// SQLite refuses function names longer than this many bytes.
const MAX_NAME_BYTES: usize = 255;

impl FunctionDefinition {
    /// Refuses what SQLite would refuse on every connection, so the caller
    /// hears it at once instead of from each connection later.
    fn check(&self) -> Result<()> {
        if self.name.is_empty() || self.name.len() > MAX_NAME_BYTES || self.name.contains('\0') {
            return Err(Error::sqlite(
                ffi::SQLITE_MISUSE,
                "bad parameter or other API misuse",
            ));
        }
        if !(-1..=MAX_ARITY).contains(&self.arity) {
            return Err(Error::sqlite(
                ffi::SQLITE_MISUSE,
                "bad parameter or other API misuse",
            ));
        }
        Ok(())
    }

    fn flags(&self) -> FunctionFlags {
        let mut flags = FunctionFlags::SQLITE_UTF8;
        if self.deterministic {
            flags |= FunctionFlags::SQLITE_DETERMINISTIC;
        }
        if self.direct_only {
            flags |= FunctionFlags::SQLITE_DIRECTONLY;
        }
        flags
    }

    fn apply(&self, conn: &Connection) -> rusqlite::Result<()> {
        let flags = self.flags();
        match &self.body {
            FunctionBody::Scalar(body) => {
                let body = body.clone();
                conn.create_scalar_function(self.name.as_str(), self.arity, flags, move |ctx| {
                    let args = arguments(ctx);
                    body.call(args).map(into_sql).map_err(function_error)
                })
            }
            FunctionBody::Aggregate { body, window } => {
                let aggregate = Adapter(body.clone());
                if *window {
                    conn.create_window_function(self.name.as_str(), self.arity, flags, aggregate)
                } else {
                    conn.create_aggregate_function(self.name.as_str(), self.arity, flags, aggregate)
                }
            }
        }
    }
}

/// The definitions made on one database, in the order they were made. A
/// connection applies the ones it has not seen; a later definition of the
/// same name and argument count replaces an earlier one, as in SQLite.
#[derive(Default)]
pub struct Registrations {
    log: Mutex<Vec<FunctionDefinition>>,
    /// `log.len()`, readable without the lock: the check every job makes.
    len: AtomicUsize,
}

impl fmt::Debug for Registrations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Registrations({})", self.len.load(Ordering::Acquire))
    }
}

impl Registrations {
    /// Adds a definition; every connection applies it before its next job.
    pub fn define(&self, definition: FunctionDefinition) -> Result<()> {
        definition.check()?;
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.push(definition);
        self.len.store(log.len(), Ordering::Release);
        Ok(())
    }

    /// Whether any function was defined: a connection that has them is
    /// never closed when idle (see `doze.rs`).
    pub fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    fn since(&self, from: usize) -> Vec<FunctionDefinition> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }
}

/// How far one connection has applied a database's registrations.
pub struct Registered {
    registrations: Arc<Registrations>,
    applied: usize,
}

impl Registered {
    pub fn new(registrations: Arc<Registrations>) -> Self {
        Registered {
            registrations,
            applied: 0,
        }
    }

    /// Applies the definitions made since the last call, in order. One that
    /// SQLite refuses now (a statement using the function it replaces is
    /// active) stops the walk; it and the rest are tried again next time.
    pub fn apply(&mut self, conn: &Connection) {
        if self.registrations.len.load(Ordering::Acquire) == self.applied {
            return;
        }
        for definition in self.registrations.since(self.applied) {
            if definition.apply(conn).is_err() {
                return;
            }
            self.applied += 1;
        }
    }
}

fn arguments(ctx: &Context<'_>) -> Vec<Value> {
    (0..ctx.len())
        .map(|i| match ctx.get_raw(i) {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Integer(v),
            ValueRef::Real(v) => Value::Real(v),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        })
        .collect()
}

fn into_sql(value: Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Integer(v) => SqlValue::Integer(v),
        Value::Real(v) => SqlValue::Real(v),
        Value::Text(s) => SqlValue::Text(s),
        Value::Blob(b) => SqlValue::Blob(b),
    }
}

/// rusqlite reports a `SqliteFailure` with its message through
/// `sqlite3_result_error`, which gives the statement `SQLITE_ERROR`, as
/// `node:sqlite` does for a function's errors.
fn function_error(message: FunctionError) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_ERROR), Some(message))
}

/// rusqlite's aggregate traits over an [`AggregateFunction`]. Accumulators
/// never cross an unwind boundary in a state anyone reads again: a panic in
/// a body fails the statement, which drops them.
struct Adapter(Arc<dyn AggregateFunction>);

type Acc = AssertUnwindSafe<Accumulator>;

impl Aggregate<Acc, SqlValue> for Adapter {
    fn init(&self, _ctx: &mut Context<'_>) -> rusqlite::Result<Acc> {
        self.0.start().map(AssertUnwindSafe).map_err(function_error)
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Acc) -> rusqlite::Result<()> {
        self.0
            .step(&mut acc.0, arguments(ctx))
            .map_err(function_error)
    }

    fn finalize(&self, _ctx: &mut Context<'_>, acc: Option<Acc>) -> rusqlite::Result<SqlValue> {
        // A group without rows never started: its result is the start
        // value's.
        let acc = match acc {
            Some(acc) => acc.0,
            None => self.0.start().map_err(function_error)?,
        };
        self.0.finish(acc).map(into_sql).map_err(function_error)
    }
}

impl WindowAggregate<Acc, SqlValue> for Adapter {
    fn value(&self, acc: Option<&mut Acc>) -> rusqlite::Result<SqlValue> {
        let value = match acc {
            Some(acc) => self.0.value(&mut acc.0),
            None => self.0.start().and_then(|mut acc| self.0.value(&mut acc)),
        };
        value.map(into_sql).map_err(function_error)
    }

    fn inverse(&self, ctx: &mut Context<'_>, acc: &mut Acc) -> rusqlite::Result<()> {
        self.0
            .inverse(&mut acc.0, arguments(ctx))
            .map_err(function_error)
    }
}
