//! Statement calls whose SQL parameters arrive spread as the native
//! function's own arguments, read with one `napi_get_cb_info`, instead of
//! in an array read element by element (each `napi_get_element` is a
//! generic property lookup behind a `TryCatch`: for a batch of 100 inserts
//! of 5 values, 600 of them). napi-rs has no rest parameters, so these two
//! are plain Node-API callbacks; `spreadFunctions()` hands them to
//! lib/core.js once.
//!
//! - `callSpread(dispatcher, kind, id, sql, flags, session, cancellable,
//!   ...params)` is `NativeDatabase.call` with `params` spread;
//! - `batchSpread(dispatcher, id, readBigInts, session, ...entries)` is
//!   `NativeDatabase.batch` with each statement as `sql, flags, n` followed
//!   by its `n` parameters.
//!
//! `dispatcher` is the database's `NativeDatabase.dispatcher()`: an
//! external, read with one Node-API call and a type check, where the
//! class instance would cost an unwrap, a type-tag lookup and napi-rs's
//! borrow bookkeeping on every call. Externals borrow nothing, so these
//! callbacks open no borrow scope.
//!
//! Both return null, or the argument error to throw as `NativeDatabase`'s
//! methods do (`[code, message]`, `[index, code, message]`). Every position
//! here is named in `protocol` (`spread_call`, `spread_batch`,
//! `batch_entry`, `refusal`, `batch_refusal`), as in lib/protocol.js.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::{External, FromNapiValue};
use napi::{sys, Env, Error, Result, Status};
use napi_derive::napi;
use offloop_engine::Sql;

use super::dispatch::{Dispatcher, ScopeCell};
use super::js::{check, Cx, Js};
use super::params::Args;
use super::protocol::{batch_entry, batch_refusal, refusal, spread_batch, spread_call};

/// `[callSpread, batchSpread]`.
#[napi(catch_unwind)]
pub fn spread_functions(env: Env) -> Result<Js> {
    let cx = Cx(env.raw());
    let out = cx.array(2)?;
    cx.set_element(out, 0, function(cx, c"callSpread", call_spread)?)?;
    cx.set_element(out, 1, function(cx, c"batchSpread", batch_spread)?)?;
    Ok(out)
}

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

fn function(cx: Cx, name: &std::ffi::CStr, callback: Callback) -> Result<Js> {
    let mut f = ptr::null_mut();
    // SAFETY: live env; the name is NUL-terminated (length -1) and copied;
    // the callback is a plain function that needs no data.
    check(unsafe {
        sys::napi_create_function(
            cx.0,
            name.as_ptr(),
            -1,
            Some(callback),
            ptr::null_mut(),
            &mut f,
        )
    })?;
    Ok(Js(f))
}

/// Arguments read into a buffer on the stack: a statement call with up to
/// `STACK_ARGS - spread_call::PARAMS` parameters costs one `napi_get_cb_info` and no
/// allocation.
const STACK_ARGS: usize = 32;

/// Every argument of the current call: in `stack` when they fit, else in
/// `heap`.
struct Arguments {
    stack: [sys::napi_value; STACK_ARGS],
    len: usize,
    heap: Vec<sys::napi_value>,
}

impl std::ops::Deref for Arguments {
    type Target = [sys::napi_value];

    fn deref(&self) -> &Self::Target {
        if self.len <= STACK_ARGS {
            &self.stack[..self.len]
        } else {
            &self.heap
        }
    }
}

fn arguments(cx: Cx, info: sys::napi_callback_info) -> Result<Arguments> {
    let mut stack = [ptr::null_mut(); STACK_ARGS];
    let mut argc = STACK_ARGS;
    // SAFETY: live env and the info of the call being served; `stack` has
    // room for `argc` values, and Node sets `argc` to the actual count.
    check(unsafe {
        sys::napi_get_cb_info(
            cx.0,
            info,
            &mut argc,
            stack.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    })?;
    if argc <= STACK_ARGS {
        return Ok(Arguments {
            stack,
            len: argc,
            heap: Vec::new(),
        });
    }
    let mut argv = vec![ptr::null_mut(); argc];
    let mut filled = argc;
    // SAFETY: `argv` has room for `filled` values.
    check(unsafe {
        sys::napi_get_cb_info(
            cx.0,
            info,
            &mut filled,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    })?;
    Ok(Arguments {
        stack,
        len: argc,
        heap: argv,
    })
}

/// Runs `f`, turning an error or a panic into a thrown JS error.
fn guard(env: sys::napi_env, f: impl FnOnce(Cx) -> Result<Js>) -> sys::napi_value {
    let cx = Cx(env);
    let outcome = catch_unwind(AssertUnwindSafe(|| f(cx)));
    let message = match outcome {
        Ok(Ok(value)) => return value.0,
        Ok(Err(e)) => e.reason.clone(),
        Err(_) => "offloop internal error: a native call panicked".to_string(),
    };
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: live env of this call; both strings are NUL-terminated. A
    // pending exception (from a getter the arguments ran) stays as it is.
    unsafe {
        let mut pending = false;
        sys::napi_is_exception_pending(env, &mut pending);
        if !pending {
            sys::napi_throw_error(env, ptr::null::<c_char>(), message.as_ptr());
        }
    }
    ptr::null_mut()
}

fn bad_arguments() -> Error {
    Error::new(
        Status::InvalidArg,
        "offloop: wrong arguments to a spread call",
    )
}

/// # Safety
/// `env` and `value` must be those of the call being served.
unsafe fn from_js<T: FromNapiValue>(env: sys::napi_env, value: sys::napi_value) -> Result<T> {
    // SAFETY: per the caller.
    unsafe { T::from_napi_value(env, value) }
}

unsafe extern "C" fn call_spread(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, |cx| {
        let argv = arguments(cx, info)?;
        if argv.len() < spread_call::PARAMS {
            return Err(bad_arguments());
        }
        // SAFETY: every value comes from this call's arguments, in its env.
        let (dispatcher, sql, session) = unsafe {
            (
                from_js::<&External<Rc<Dispatcher>>>(env, argv[spread_call::DISPATCHER])?,
                from_js::<&External<Arc<Sql>>>(env, argv[spread_call::SQL])?,
                from_js::<Option<&External<ScopeCell>>>(env, argv[spread_call::SCOPE])?,
            )
        };
        let kind = cx.get_f64(Js(argv[spread_call::KIND]))? as u32;
        let id = cx.get_f64(Js(argv[spread_call::ID]))?;
        let flags = cx.get_f64(Js(argv[spread_call::FLAGS]))? as u32;
        let cancellable = cx.get_bool(Js(argv[spread_call::CANCELLABLE]))?;
        let params = Args::Values(&argv[spread_call::PARAMS..]);
        match dispatcher.queue_call(cx, kind, id, sql, params, flags, session, cancellable)? {
            None => cx.null(),
            Some(e) => {
                let out = cx.array(2)?;
                cx.set_element(out, refusal::CODE, cx.string(e.code)?)?;
                cx.set_element(out, refusal::MESSAGE, cx.string(&e.message)?)?;
                Ok(out)
            }
        }
    })
}

unsafe extern "C" fn batch_spread(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, |cx| {
        let argv = arguments(cx, info)?;
        if argv.len() < spread_batch::ENTRIES {
            return Err(bad_arguments());
        }
        // SAFETY: values of this call's arguments, in its env.
        let (dispatcher, session) = unsafe {
            (
                from_js::<&External<Rc<Dispatcher>>>(env, argv[spread_batch::DISPATCHER])?,
                from_js::<Option<&External<ScopeCell>>>(env, argv[spread_batch::SCOPE])?,
            )
        };
        let id = cx.get_f64(Js(argv[spread_batch::ID]))?;
        let read_big_ints = cx.get_bool(Js(argv[spread_batch::READ_BIG_INTS]))?;
        let mut entries = Vec::new();
        let mut at = spread_batch::ENTRIES;
        while at < argv.len() {
            if at + batch_entry::PARAMS > argv.len() {
                return Err(bad_arguments());
            }
            // SAFETY: a value of this call's arguments, in its env.
            let sql = unsafe { from_js::<&External<Arc<Sql>>>(env, argv[at + batch_entry::SQL])? };
            let flags = cx.get_f64(Js(argv[at + batch_entry::FLAGS]))? as u32;
            let n = cx.get_f64(Js(argv[at + batch_entry::COUNT]))? as usize;
            let start = at + batch_entry::PARAMS;
            let end = start
                .checked_add(n)
                .filter(|&e| e <= argv.len())
                .ok_or_else(bad_arguments)?;
            entries.push((sql, Args::Values(&argv[start..end]), flags));
            at = end;
        }
        match dispatcher.queue_batch(cx, id, entries, read_big_ints, session)? {
            None => cx.null(),
            Some((index, e)) => {
                let out = cx.array(3)?;
                cx.set_element(out, batch_refusal::INDEX, cx.number(index as f64)?)?;
                cx.set_element(out, batch_refusal::CODE, cx.string(e.code)?)?;
                cx.set_element(out, batch_refusal::MESSAGE, cx.string(&e.message)?)?;
                Ok(out)
            }
        }
    })
}
