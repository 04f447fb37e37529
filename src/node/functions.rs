//! The reverse path: a SQLite thread calls a user function defined in JS,
//! the call runs on the JS thread, and its result (or what it threw) goes
//! back to the waiting SQLite thread. This file owns that path: one
//! thread-safe function per definition, the conversion of arguments and
//! results with `node:sqlite`'s rules, and the JS values that live between
//! calls (aggregate accumulators, thrown errors on their way to the
//! statement's caller). It never runs SQLite.
//!
//! # Why it cannot deadlock
//!
//! Only SQLite threads wait here, and only for the JS thread; the JS thread
//! never waits for a SQLite thread (every database call is a queued job).
//! A call that can no longer be answered wakes its SQLite thread with an
//! error instead of leaving it waiting:
//! - Node tears the thread-safe function down with its environment (a
//!   worker terminated, the process exiting): queued calls are handed to
//!   `call_js` without an environment, which drops them, and a dropped
//!   reply channel is an error for the waiter; a call made after the
//!   teardown fails at once (`Invoker::send`).
//! - A JS function interrupted by termination returns an exception, which is
//!   an answer like any other.
//! - A function that calls the database again only queues a job (every call
//!   returns a Promise, which is not a SQLite value): nothing waits for it.
//! - `close()` lets queued jobs finish; their function calls are served by
//!   the JS thread, which `close()` does not block.

use std::cell::Cell;
use std::ptr;
use std::sync::Arc;

use napi::{sys, Env, Result};
use napi_derive::napi;
use offloop_engine::{
    self as engine, Accumulator, AggregateFunction, FunctionBody, FunctionDefinition,
    FunctionError, ScalarFunction, Value,
};

use super::database::NativeDatabase;
use super::errors::error_to_js;
use super::invoker::{create, Answer, Body, Invoker, Op, PendingCall, Reply, ENDED};
use super::js::{check, Cx, Js};
use super::thrown::{create_reference, delete_reference, keep_thrown, reference_value, Values};

/// `node:sqlite`'s messages for results SQLite cannot take.
const NOT_CONVERTIBLE: &str = "Returned JavaScript value cannot be converted to a SQLite value";
const ASYNC_RESULT: &str = "Asynchronous user-defined functions are not supported";
const BIGINT_TOO_LARGE: &str = "BigInt value is too large for SQLite";

/// Largest integer a JS number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The engine's side of one definition: what its connections hold. Dropped
/// when the last connection and the database's log let go of it, which
/// releases the thread-safe function (Node then finalizes it on the JS
/// thread and frees the JS functions it holds).
struct NodeFunction {
    invoker: Arc<Invoker>,
}

impl Drop for NodeFunction {
    fn drop(&mut self) {
        if let Some(tsfn) = self.invoker.lock().take() {
            // SAFETY: the handle was live in the slot; this is its one
            // release (the slot is now empty).
            unsafe {
                sys::napi_release_threadsafe_function(
                    tsfn.0,
                    sys::ThreadsafeFunctionReleaseMode::release,
                );
            }
        }
    }
}

impl ScalarFunction for NodeFunction {
    fn call(&self, args: Vec<Value>) -> Reply {
        self.invoker.invoke(Op::Scalar(args))
    }
}

/// An accumulator: the id of a JS value the definition holds between calls.
/// Dropped unfinished, it asks the JS thread to let the value go.
struct JsAccumulator {
    id: u32,
    invoker: Arc<Invoker>,
    finished: bool,
}

impl Drop for JsAccumulator {
    fn drop(&mut self) {
        if !self.finished {
            self.invoker.send(PendingCall {
                op: Op::Release(self.id),
                reply: None,
            });
        }
    }
}

fn accumulator(acc: &mut Accumulator) -> std::result::Result<&mut JsAccumulator, FunctionError> {
    acc.downcast_mut::<JsAccumulator>()
        .ok_or_else(|| "offloop internal error: a foreign accumulator".to_string())
}

impl AggregateFunction for NodeFunction {
    fn start(&self) -> std::result::Result<Accumulator, FunctionError> {
        match self.invoker.invoke(Op::Start)? {
            Value::Integer(id) => Ok(Box::new(JsAccumulator {
                id: id as u32,
                invoker: self.invoker.clone(),
                finished: false,
            })),
            _ => Err("offloop internal error: no accumulator".into()),
        }
    }

    fn step(
        &self,
        acc: &mut Accumulator,
        args: Vec<Value>,
    ) -> std::result::Result<(), FunctionError> {
        let id = accumulator(acc)?.id;
        self.invoker.invoke(Op::Step(id, args)).map(drop)
    }

    fn inverse(
        &self,
        acc: &mut Accumulator,
        args: Vec<Value>,
    ) -> std::result::Result<(), FunctionError> {
        let id = accumulator(acc)?.id;
        self.invoker.invoke(Op::Inverse(id, args)).map(drop)
    }

    fn value(&self, acc: &mut Accumulator) -> Reply {
        let id = accumulator(acc)?.id;
        self.invoker.invoke(Op::Value(id))
    }

    fn finish(&self, mut acc: Accumulator) -> Reply {
        let acc = accumulator(&mut acc)?;
        // The JS thread ends it with the answer, sent or not.
        acc.finished = true;
        self.invoker.invoke(Op::Finish(acc.id))
    }
}

/// The JS side of one definition, owned by its thread-safe function and
/// touched only on the JS thread.
struct JsBody {
    /// The scalar function, or the aggregate's `step`.
    function: sys::napi_ref,
    /// An aggregate's `start` is at `START` in `values`: `Some(true)` when
    /// it is a function to call per group.
    start: Option<bool>,
    inverse: Option<sys::napi_ref>,
    result: Option<sys::napi_ref>,
    use_big_int_arguments: bool,
    /// The start value and the accumulators, by id.
    values: Values,
    next_accumulator: Cell<u32>,
}

/// Where an aggregate's start value is kept; accumulators use the ids
/// after it.
const START: u32 = 0;

impl JsBody {
    fn answer(&self, cx: Cx, op: Op) -> Result<Answer<Value>> {
        match op {
            Op::Scalar(args) => {
                let args = match self.arguments(cx, None, &args)? {
                    Ok(args) => args,
                    Err(e) => return Ok(Err(e)),
                };
                let function = reference_value(cx, self.function)?;
                match call(cx, function, &args)? {
                    Ok(result) => to_value(cx, result),
                    Err(thrown) => Ok(Err(thrown)),
                }
            }
            Op::Start => {
                let Some(is_function) = self.start else {
                    return Ok(Err("offloop internal error: not an aggregate".into()));
                };
                let mut value = self.values.get(cx, START)?;
                if is_function {
                    value = match call(cx, value, &[])? {
                        Ok(v) => v,
                        Err(thrown) => return Ok(Err(thrown)),
                    };
                }
                // Ids wrap around past u32::MAX, skipping the start value's.
                let id = self
                    .next_accumulator
                    .get()
                    .checked_add(1)
                    .unwrap_or(START + 1);
                self.next_accumulator.set(id);
                self.values.put(cx, id, value)?;
                Ok(Ok(Value::Integer(id.into())))
            }
            Op::Step(id, args) => self.update(cx, self.function, id, &args),
            Op::Inverse(id, args) => match self.inverse {
                Some(inverse) => self.update(cx, inverse, id, &args),
                None => Ok(Err("offloop internal error: no inverse".into())),
            },
            Op::Value(id) => self.result(cx, id),
            Op::Finish(id) => {
                let result = self.result(cx, id);
                self.release(cx, id);
                result
            }
            Op::Release(id) => {
                self.release(cx, id);
                Ok(Ok(Value::Null))
            }
        }
    }

    /// The JS arguments: the accumulator first when `acc` is given, then
    /// the SQL values.
    fn arguments(
        &self,
        cx: Cx,
        acc: Option<Js>,
        values: &[Value],
    ) -> Result<Answer<Vec<sys::napi_value>>> {
        let mut args = Vec::with_capacity(values.len() + 1);
        args.extend(acc.map(|a| a.0));
        for value in values {
            match to_js(cx, value, self.use_big_int_arguments)? {
                Ok(v) => args.push(v.0),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(args))
    }

    /// `acc = f(acc, ...args)`.
    fn update(&self, cx: Cx, f: sys::napi_ref, id: u32, values: &[Value]) -> Result<Answer<Value>> {
        let acc = self.values.get(cx, id)?;
        let args = match self.arguments(cx, Some(acc), values)? {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let next = match call(cx, reference_value(cx, f)?, &args)? {
            Ok(next) => next,
            Err(thrown) => return Ok(Err(thrown)),
        };
        self.values.put(cx, id, next)?;
        Ok(Ok(Value::Null))
    }

    /// `result(acc)`, or the accumulator itself without `result`.
    fn result(&self, cx: Cx, id: u32) -> Result<Answer<Value>> {
        let acc = self.values.get(cx, id)?;
        let value = match self.result {
            Some(result) => match call(cx, reference_value(cx, result)?, &[acc.0])? {
                Ok(v) => v,
                Err(thrown) => return Ok(Err(thrown)),
            },
            None => acc,
        };
        to_value(cx, value)
    }

    fn release(&self, cx: Cx, id: u32) {
        // Failing leaves the value to the holder, which goes with the body.
        let _ = self.values.remove(cx, id);
    }

    fn delete_references(&self, cx: Cx) {
        let refs = [
            Some(self.function),
            self.inverse,
            self.result,
            Some(self.values.holder),
        ];
        for r in refs.into_iter().flatten() {
            delete_reference(cx, r);
        }
    }
}

impl Body for JsBody {
    fn run(&self, cx: Cx, op: Op) -> Result<Answer<Value>> {
        self.answer(cx, op)
    }

    fn delete_all(&self, cx: Cx) {
        self.delete_references(cx);
    }
}

/// Calls `function` with `this` undefined; `Err` is the token of what it
/// threw.
fn call(cx: Cx, function: Js, args: &[sys::napi_value]) -> Result<Answer<Js>> {
    let this = cx.undefined()?;
    let mut result = ptr::null_mut();
    // SAFETY: live env, values of this environment, valid out-pointer.
    let status = unsafe {
        sys::napi_call_function(
            cx.0,
            this.0,
            function.0,
            args.len(),
            args.as_ptr(),
            &mut result,
        )
    };
    if status == sys::Status::napi_ok {
        return Ok(Ok(Js(result)));
    }
    let mut pending = false;
    // SAFETY: live env; out-pointer valid.
    check(unsafe { sys::napi_is_exception_pending(cx.0, &mut pending) })?;
    if !pending {
        // Terminated (a worker being stopped): nothing to rethrow.
        return Ok(Err(ENDED.into()));
    }
    let mut exception = ptr::null_mut();
    // SAFETY: live env with an exception pending; out-pointer valid.
    check(unsafe { sys::napi_get_and_clear_last_exception(cx.0, &mut exception) })?;
    Ok(Err(keep_thrown(cx, Js(exception))?))
}

/// A SQL argument as `node:sqlite` passes it; an integer beyond a JS
/// number's exact range without `useBigIntArguments` is a RangeError the
/// statement's caller receives.
fn to_js(cx: Cx, value: &Value, big: bool) -> Result<Answer<Js>> {
    Ok(Ok(match value {
        Value::Null => cx.null()?,
        Value::Integer(v) if big => cx.bigint(*v)?,
        Value::Integer(v) if v.unsigned_abs() <= MAX_SAFE_INTEGER as u64 => cx.number(*v as f64)?,
        Value::Integer(v) => {
            let message =
                format!("Value is too large to be represented as a JavaScript number: {v}");
            let error = range_error(cx, "ERR_OUT_OF_RANGE", &message)?;
            return Ok(Err(keep_thrown(cx, error)?));
        }
        Value::Real(v) => cx.number(*v)?,
        Value::Text(s) => cx.string(s)?,
        Value::Blob(b) => cx.uint8array(b)?,
    }))
}

fn range_error(cx: Cx, code: &str, message: &str) -> Result<Js> {
    let code = cx.string(code)?;
    let message = cx.string(message)?;
    let mut error = ptr::null_mut();
    // SAFETY: live env, two strings of this call, valid out-pointer.
    check(unsafe { sys::napi_create_range_error(cx.0, code.0, message.0, &mut error) })?;
    Ok(Js(error))
}

/// A function's result as `node:sqlite` gives it to SQLite.
fn to_value(cx: Cx, value: Js) -> Result<Answer<Value>> {
    use sys::ValueType as T;
    Ok(match cx.type_of(value)? {
        T::napi_undefined | T::napi_null => Ok(Value::Null),
        T::napi_number => Ok(Value::Real(cx.get_f64(value)?)),
        T::napi_string => Ok(Value::Text(cx.get_string(value)?)),
        T::napi_bigint => match cx.get_bigint(value)? {
            (v, true) => Ok(Value::Integer(v)),
            (_, false) => Err(BIGINT_TOO_LARGE.into()),
        },
        T::napi_object => {
            let mut promise = false;
            // SAFETY: live env, a value of this call, valid out-pointer.
            check(unsafe { sys::napi_is_promise(cx.0, value.0, &mut promise) })?;
            if promise {
                Err(ASYNC_RESULT.into())
            } else {
                // TypedArrays, DataViews and ArrayBuffers are blobs.
                match cx.view_bytes(value)? {
                    Some(bytes) => Ok(Value::Blob(bytes)),
                    None => Err(NOT_CONVERTIBLE.into()),
                }
            }
        }
        _ => Err(NOT_CONVERTIBLE.into()),
    })
}

/// `null`, or the error SQLite would give for the definition (as
/// `error_to_js` describes it; lib/functions.js throws it).
fn defined(cx: Cx, result: engine::Result<()>) -> Result<Js> {
    match result {
        Ok(()) => cx.null(),
        Err(error) => error_to_js(cx, &error),
    }
}

/// `db.function()`: defines `function` under `name` with `arity` arguments
/// (-1: any) on every connection of `db`.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn define_function(
    env: Env,
    db: &NativeDatabase,
    name: String,
    arity: i32,
    deterministic: bool,
    direct_only: bool,
    use_big_int_arguments: bool,
    function: Js,
) -> Result<Js> {
    let cx = Cx(env.raw());
    let body = JsBody {
        function: create_reference(cx, function)?,
        start: None,
        inverse: None,
        result: None,
        use_big_int_arguments,
        values: Values::new(cx)?,
        next_accumulator: Cell::new(START),
    };
    let invoker = create(cx, body)?;
    let definition = FunctionDefinition {
        name,
        arity,
        deterministic,
        direct_only,
        body: FunctionBody::Scalar(Arc::new(NodeFunction { invoker })),
    };
    defined(cx, db.engine().define_function(definition))
}

/// A JS function the reverse path calls with SQL values and whose result
/// it converts with `node:sqlite`'s rules, as a scalar function's, but that
/// is defined on no connection: `db.applyChangeset()`'s handlers.
pub(super) fn handler(cx: Cx, function: Js) -> Result<Arc<dyn ScalarFunction>> {
    let body = JsBody {
        function: create_reference(cx, function)?,
        start: None,
        inverse: None,
        result: None,
        use_big_int_arguments: false,
        values: Values::new(cx)?,
        next_accumulator: Cell::new(START),
    };
    Ok(Arc::new(NodeFunction {
        invoker: create(cx, body)?,
    }))
}

/// `db.aggregate()`: `start` is the initial accumulator, or a function
/// returning it (`start_is_function`); `inverse` (a function, or undefined)
/// makes it a window function; `result` (a function, or undefined) maps
/// the accumulator to the result.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn define_aggregate(
    env: Env,
    db: &NativeDatabase,
    name: String,
    arity: i32,
    deterministic: bool,
    direct_only: bool,
    use_big_int_arguments: bool,
    start: Js,
    start_is_function: bool,
    step: Js,
    inverse: Js,
    result: Js,
) -> Result<Js> {
    let cx = Cx(env.raw());
    let optional = |f: Js| -> Result<Option<sys::napi_ref>> {
        if cx.type_of(f)? == sys::ValueType::napi_function {
            create_reference(cx, f).map(Some)
        } else {
            Ok(None)
        }
    };
    let values = Values::new(cx)?;
    values.put(cx, START, start)?;
    let body = JsBody {
        function: create_reference(cx, step)?,
        start: Some(start_is_function),
        inverse: optional(inverse)?,
        result: optional(result)?,
        use_big_int_arguments,
        values,
        next_accumulator: Cell::new(START),
    };
    let window = body.inverse.is_some();
    let invoker = create(cx, body)?;
    let definition = FunctionDefinition {
        name,
        arity,
        deterministic,
        direct_only,
        body: FunctionBody::Aggregate {
            body: Arc::new(NodeFunction { invoker }),
            window,
        },
    };
    defined(cx, db.engine().define_function(definition))
}
