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

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Mutex};

use napi::{sys, Env, Result};
use napi_derive::napi;
use offloop_engine::{
    self as engine, Accumulator, AggregateFunction, FunctionBody, FunctionDefinition,
    FunctionError, ScalarFunction, Value,
};
use std::sync::mpsc::{sync_channel, SyncSender};

use super::database::NativeDatabase;
use super::js::{check, Cx, Js};
use super::outcome::error_to_js;

/// A thrown JS value travels back to the statement's caller as the SQLite
/// error message `THROWN` followed by a token, which `take_thrown` turns
/// back into the value itself (`node:sqlite` rethrows it as it is).
const THROWN: &str = "\u{1}offloop:thrown:";

/// The code of an error description (see `outcome::error_to_js`) whose
/// second element is a thrown value to reject with as it is; lib/errors.js
/// names it too.
pub const THROWN_CODE: &str = "OFFLOOP_THROWN";

/// What the waiting SQLite thread hears when the JS environment that
/// defined the function has ended.
const ENDED: &str = "the JavaScript environment that defined this function has ended";

/// `node:sqlite`'s messages for results SQLite cannot take.
const NOT_CONVERTIBLE: &str = "Returned JavaScript value cannot be converted to a SQLite value";
const ASYNC_RESULT: &str = "Asynchronous user-defined functions are not supported";
const BIGINT_TOO_LARGE: &str = "BigInt value is too large for SQLite";

/// Largest integer a JS number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

thread_local! {
    /// Thrown JS values by token, until their statement's error reaches JS.
    static THROWN_VALUES: RefCell<Option<Values>> = const { RefCell::new(None) };
    static NEXT_THROWN: Cell<u32> = const { Cell::new(0) };
}

/// One call, from a SQLite thread to the JS thread.
enum Op {
    Scalar(Vec<Value>),
    /// A new accumulator; answered with its id as an integer.
    Start,
    Step(u32, Vec<Value>),
    Inverse(u32, Vec<Value>),
    /// The window's current result.
    Value(u32),
    /// The final result; the accumulator ends.
    Finish(u32),
    /// The accumulator ends unread (its statement stopped early).
    Release(u32),
}

type Reply = std::result::Result<Value, FunctionError>;

struct PendingCall {
    op: Op,
    /// `None` for calls nobody waits for (`Release`).
    reply: Option<SyncSender<Reply>>,
}

struct SendTsfn(sys::napi_threadsafe_function);

// SAFETY: napi_call_threadsafe_function and napi_release_threadsafe_function
// are documented as callable from any thread; the handle is used for
// nothing else, under the lock the finalizer clears it under.
unsafe impl Send for SendTsfn {}

/// A definition's thread-safe function, or `None` once Node finalized it
/// (or it was released). Calls hold the lock, so none races the teardown.
struct Invoker(Mutex<Option<SendTsfn>>);

impl Invoker {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<SendTsfn>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `call` for the JS thread; false when it cannot be delivered.
    fn send(&self, call: PendingCall) -> bool {
        let slot = self.lock();
        let Some(tsfn) = slot.as_ref() else {
            return false;
        };
        let data = Box::into_raw(Box::new(call));
        // SAFETY: the handle is live while it is in the slot (the finalizer
        // clears it under this lock). The queue is unbounded, so a
        // non-blocking call never waits.
        let status = unsafe {
            sys::napi_call_threadsafe_function(
                tsfn.0,
                data.cast(),
                sys::ThreadsafeFunctionCallMode::nonblocking,
            )
        };
        if status != sys::Status::napi_ok {
            // SAFETY: Node did not take the item; it is still ours.
            drop(unsafe { Box::from_raw(data) });
            return false;
        }
        true
    }

    /// Runs `op` on the JS thread and waits for its answer.
    fn invoke(&self, op: Op) -> Reply {
        let (tx, rx) = sync_channel(1);
        if !self.send(PendingCall {
            op,
            reply: Some(tx),
        }) {
            return Err(ENDED.into());
        }
        rx.recv().unwrap_or_else(|_| Err(ENDED.into()))
    }
}

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

/// JS values of any type kept between calls, as the elements of one JS
/// object: Node-API (before Node 22) makes references to objects only.
struct Values {
    holder: sys::napi_ref,
}

impl Values {
    fn new(cx: Cx) -> Result<Values> {
        let mut object = ptr::null_mut();
        // SAFETY: live env, valid out-pointer.
        check(unsafe { sys::napi_create_object(cx.0, &mut object) })?;
        Ok(Values {
            holder: create_reference(cx, Js(object))?,
        })
    }

    fn put(&self, cx: Cx, key: u32, value: Js) -> Result<()> {
        let holder = reference_value(cx, self.holder)?;
        cx.set_element(holder, key, value)
    }

    fn get(&self, cx: Cx, key: u32) -> Result<Js> {
        cx.get_element(reference_value(cx, self.holder)?, key)
    }

    fn remove(&self, cx: Cx, key: u32) -> Result<()> {
        let holder = reference_value(cx, self.holder)?;
        let mut deleted = false;
        // SAFETY: live env, the holder object of this environment.
        check(unsafe { sys::napi_delete_element(cx.0, holder.0, key, &mut deleted) })
    }
}

/// A JS function threw, or a value could not be converted: the message for
/// SQLite, which for a thrown value carries its token.
type Answer<T> = std::result::Result<T, FunctionError>;

impl JsBody {
    fn run(&self, cx: Cx, op: Op) -> Result<Answer<Value>> {
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

    fn delete_all(&self, cx: Cx) {
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

fn create_reference(cx: Cx, value: Js) -> Result<sys::napi_ref> {
    let mut r = ptr::null_mut();
    // SAFETY: live env of this call and one of its values.
    check(unsafe { sys::napi_create_reference(cx.0, value.0, 1, &mut r) })?;
    Ok(r)
}

fn reference_value(cx: Cx, r: sys::napi_ref) -> Result<Js> {
    let mut v = ptr::null_mut();
    // SAFETY: `r` was created in this environment and is not deleted yet.
    check(unsafe { sys::napi_get_reference_value(cx.0, r, &mut v) })?;
    Ok(Js(v))
}

fn delete_reference(cx: Cx, r: sys::napi_ref) {
    // SAFETY: `r` was created in this environment; every caller deletes it
    // exactly once (it was just removed from where it was kept).
    unsafe {
        sys::napi_delete_reference(cx.0, r);
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

/// Keeps a thrown value until its statement's error reaches JS; returns the
/// message that names it.
fn keep_thrown(cx: Cx, value: Js) -> Result<FunctionError> {
    let token = NEXT_THROWN.with(|n| {
        let token = n.get().wrapping_add(1);
        n.set(token);
        token
    });
    THROWN_VALUES.with(|t| -> Result<()> {
        let mut t = t.borrow_mut();
        if t.is_none() {
            *t = Some(Values::new(cx)?);
        }
        t.as_ref()
            .map_or(Ok(()), |values| values.put(cx, token, value))
    })?;
    Ok(format!("{THROWN}{token}"))
}

/// The value a user function threw, when `error` is the SQLite error it
/// caused; it is handed over once.
pub fn take_thrown(cx: Cx, error: &engine::Error) -> Result<Option<Js>> {
    let engine::Error::Sqlite { message, .. } = error else {
        return Ok(None);
    };
    let Some(token) = message
        .strip_prefix(THROWN)
        .and_then(|t| t.parse::<u32>().ok())
    else {
        return Ok(None);
    };
    THROWN_VALUES.with(|t| {
        let t = t.borrow();
        let Some(values) = t.as_ref() else {
            return Ok(None);
        };
        let value = values.get(cx, token)?;
        values.remove(cx, token)?;
        Ok(Some(value))
    })
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

unsafe extern "C" fn call_js(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    context: *mut c_void,
    data: *mut c_void,
) {
    // SAFETY: `data` is a PendingCall boxed by `Invoker::send`, handed to
    // this callback exactly once.
    let PendingCall { op, reply } = *unsafe { Box::from_raw(data as *mut PendingCall) };
    if env.is_null() || context.is_null() {
        // The environment is being torn down: dropping `reply` tells the
        // waiting SQLite thread.
        return;
    }
    // SAFETY: `context` is the JsBody this thread-safe function was created
    // with; it lives until the finalizer, which runs after every call.
    let body = unsafe { &*(context as *const JsBody) };
    let cx = Cx(env);
    let answer = catch_unwind(AssertUnwindSafe(|| body.run(cx, op)))
        .unwrap_or_else(|_| {
            Ok(Err(
                "offloop internal error: a function call panicked".into()
            ))
        })
        .unwrap_or_else(|e| Err(format!("offloop internal error: {e}")));
    if let Some(reply) = reply {
        let _ = reply.send(answer);
    }
}

unsafe extern "C" fn finalized(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `data` is the Arc<Invoker> leaked in `create` for this
    // callback and `hint` the JsBody box (Node passes the context as the
    // hint); both are reclaimed exactly once, here.
    let invoker = unsafe { Arc::from_raw(data as *const Invoker) };
    *invoker.lock() = None;
    let body = unsafe { Box::from_raw(hint as *mut JsBody) };
    if !env.is_null() {
        body.delete_all(Cx(env));
    }
}

/// Creates the thread-safe function for `body`; it does not keep the
/// process alive.
fn create(cx: Cx, body: JsBody) -> Result<Arc<Invoker>> {
    let invoker = Arc::new(Invoker(Mutex::new(None)));
    let name = cx.string("offloop function")?;
    let data = Arc::into_raw(invoker.clone()) as *mut c_void;
    let context = Box::into_raw(Box::new(body)) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    // SAFETY: live env; no JS function (call_js finds the body in the
    // context); the finalizer reclaims `data` and `context` exactly once.
    let status = unsafe {
        sys::napi_create_threadsafe_function(
            cx.0,
            ptr::null_mut(),
            ptr::null_mut(),
            name.0,
            0,
            1,
            data,
            Some(finalized),
            context,
            Some(call_js),
            &mut tsfn,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: creation failed, so the finalizer never runs: reclaim both
        // here (the references inside are freed with the environment).
        unsafe {
            drop(Arc::from_raw(data as *const Invoker));
            drop(Box::from_raw(context as *mut JsBody));
        }
        return check(status).map(|_| invoker);
    }
    // SAFETY: live env and the handle just created on this thread.
    check(unsafe { sys::napi_unref_threadsafe_function(cx.0, tsfn) })?;
    *invoker.lock() = Some(SendTsfn(tsfn));
    Ok(invoker)
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
