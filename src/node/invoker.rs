//! The reverse path's plumbing: a SQLite thread hands a call to the JS
//! thread through a thread-safe function of its own and blocks until the
//! answer comes back. Only SQLite threads wait here, and only for the JS
//! thread; the JS thread never waits for a SQLite thread. What a call does
//! on the JS thread is the `Body` it was created with (`functions.rs`).

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};

use napi::{sys, Result};
use offloop_engine::{FunctionError, Value};

use super::js::{check, Cx};

/// What the waiting SQLite thread hears when the JS environment that
/// defined the function has ended.
pub const ENDED: &str = "the JavaScript environment that defined this function has ended";

/// One call, from a SQLite thread to the JS thread.
pub enum Op {
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

pub type Reply = std::result::Result<Value, FunctionError>;

pub struct PendingCall {
    pub op: Op,
    /// `None` for calls nobody waits for (`Release`).
    pub reply: Option<SyncSender<Reply>>,
}

pub struct SendTsfn(pub sys::napi_threadsafe_function);

// SAFETY: napi_call_threadsafe_function and napi_release_threadsafe_function
// are documented as callable from any thread; the handle is used for
// nothing else, under the lock the finalizer clears it under.
unsafe impl Send for SendTsfn {}

/// A definition's thread-safe function, or `None` once Node finalized it
/// (or it was released). Calls hold the lock, so none races the teardown.
pub struct Invoker(Mutex<Option<SendTsfn>>);

impl Invoker {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Option<SendTsfn>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `call` for the JS thread; false when it cannot be delivered.
    pub fn send(&self, call: PendingCall) -> bool {
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
    pub fn invoke(&self, op: Op) -> Reply {
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

/// A JS function threw, or a value could not be converted: the message for
/// SQLite, which for a thrown value carries its token.
pub type Answer<T> = std::result::Result<T, FunctionError>;

/// What one definition does on the JS thread.
pub trait Body {
    /// Runs `op`; `Ok(Err(..))` is an answer for SQLite (a thrown value's
    /// token, or a value SQLite cannot take).
    fn run(&self, cx: Cx, op: Op) -> Result<Answer<Value>>;
    /// Frees the JS references it holds (its thread-safe function is gone).
    fn delete_all(&self, cx: Cx);
}

unsafe extern "C" fn call_js<B: Body>(
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
    let body = unsafe { &*(context as *const B) };
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

unsafe extern "C" fn finalized<B: Body>(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `data` is the Arc<Invoker> leaked in `create` for this
    // callback and `hint` the JsBody box (Node passes the context as the
    // hint); both are reclaimed exactly once, here.
    let invoker = unsafe { Arc::from_raw(data as *const Invoker) };
    *invoker.lock() = None;
    let body = unsafe { Box::from_raw(hint as *mut B) };
    if !env.is_null() {
        body.delete_all(Cx(env));
    }
}

/// Creates the thread-safe function for `body`; it does not keep the
/// process alive.
pub fn create<B: Body>(cx: Cx, body: B) -> Result<Arc<Invoker>> {
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
            Some(finalized::<B>),
            context,
            Some(call_js::<B>),
            &mut tsfn,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: creation failed, so the finalizer never runs: reclaim both
        // here (the references inside are freed with the environment).
        unsafe {
            drop(Arc::from_raw(data as *const Invoker));
            drop(Box::from_raw(context as *mut B));
        }
        return check(status).map(|_| invoker);
    }
    // SAFETY: live env and the handle just created on this thread.
    check(unsafe { sys::napi_unref_threadsafe_function(cx.0, tsfn) })?;
    *invoker.lock() = Some(SendTsfn(tsfn));
    Ok(invoker)
}
