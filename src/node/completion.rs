//! The completion path: SQLite threads push finished jobs onto this JS
//! environment's queue, and one thread-safe function wakes the JS thread to
//! drain the whole batch. A wake-up is requested only when a push finds the
//! queue empty, so a burst of completions costs one `uv_async` signal.
//!
//! One queue per JS environment (the main thread and each worker thread),
//! kept in a thread local: an environment lives on exactly one thread.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex};

use napi::{sys, Result};
use offloop_engine as engine;

use super::js::{check, Cx, Js};

/// One finished job, waiting for the JS thread.
pub struct Completion {
    pub id: f64,
    pub flags: u32,
    pub result: engine::Result<engine::Outcome>,
}

/// The raw thread-safe function, or `None` once Node has torn it down with
/// its environment. Calls hold the lock, and Node's finalizer takes it, so a
/// call can never race the teardown.
struct Waker(Mutex<Option<SendTsfn>>);

struct SendTsfn(sys::napi_threadsafe_function);

// SAFETY: Node-API documents napi_call_threadsafe_function as callable from
// any thread; the handle is only used for that (and, under the lock, cleared
// by the finalizer on the JS thread).
unsafe impl Send for SendTsfn {}

pub struct CompletionQueue {
    items: Mutex<Vec<Completion>>,
    waker: Waker,
}

impl CompletionQueue {
    /// Called on SQLite threads.
    pub fn push(&self, completion: Completion) {
        let wake = {
            let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
            items.push(completion);
            items.len() == 1
        };
        if wake {
            let tsfn = self.waker.0.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tsfn) = tsfn.as_ref() {
                // SAFETY: the handle is live while it is in the slot (the
                // finalizer clears it under this same lock). A failure means
                // the environment is closing; nobody is left to settle.
                unsafe {
                    sys::napi_call_threadsafe_function(
                        tsfn.0,
                        ptr::null_mut(),
                        sys::ThreadsafeFunctionCallMode::nonblocking,
                    );
                }
            }
        }
    }

    fn take(&self) -> Vec<Completion> {
        std::mem::take(&mut *self.items.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn tsfn(&self) -> Option<sys::napi_threadsafe_function> {
        self.waker
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|t| t.0)
    }
}

thread_local! {
    static QUEUE: RefCell<Option<Arc<CompletionQueue>>> = const { RefCell::new(None) };
}

/// This environment's queue. `init` must have run (index.js does it at load).
pub fn current() -> Option<Arc<CompletionQueue>> {
    QUEUE.with(|q| q.borrow().clone())
}

unsafe extern "C" fn tsfn_finalized(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the Arc<CompletionQueue> leaked in `init` for this
    // callback; reclaiming it here balances that leak exactly once.
    let queue = unsafe { Arc::from_raw(data as *const CompletionQueue) };
    *queue.waker.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

unsafe extern "C" fn env_cleanup(_arg: *mut c_void) {
    QUEUE.with(|q| q.borrow_mut().take());
    super::packer::forget_environment();
}

/// Creates this environment's queue and its thread-safe function, which
/// calls `drain` (a JS function taking no arguments) on the JS thread. The
/// function starts unreferenced: an idle database keeps nothing alive.
/// `pack` and `join` build the arrays completions are handed over in (see
/// `packers`).
pub fn init(cx: Cx, drain: Js, pack: Js, join: Js) -> Result<()> {
    if current().is_some() {
        return Ok(());
    }
    super::packer::init(cx, pack, join)?;
    let queue = Arc::new(CompletionQueue {
        items: Mutex::new(Vec::new()),
        waker: Waker(Mutex::new(None)),
    });
    let name = cx.string("offloop")?;
    let finalize_data = Arc::into_raw(queue.clone()) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    // SAFETY: live env of this call; `drain` is a function value; the
    // finalizer reclaims `finalize_data` exactly once when Node destroys the
    // thread-safe function. With no call_js callback, Node calls `drain`
    // with no arguments.
    let status = unsafe {
        sys::napi_create_threadsafe_function(
            cx.0,
            drain.0,
            ptr::null_mut(),
            name.0,
            0,
            1,
            finalize_data,
            Some(tsfn_finalized),
            ptr::null_mut(),
            None,
            &mut tsfn,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: creation failed, so Node will never call the finalizer;
        // reclaim the leaked reference here instead.
        drop(unsafe { Arc::from_raw(finalize_data as *const CompletionQueue) });
        return check(status);
    }
    *queue.waker.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(SendTsfn(tsfn));
    // SAFETY: live env and the handle just created on this thread.
    check(unsafe { sys::napi_unref_threadsafe_function(cx.0, tsfn) })?;
    // SAFETY: a plain function pointer with a null argument, removed never:
    // it only clears this thread's slot when the environment ends.
    check(unsafe { sys::napi_add_env_cleanup_hook(cx.0, Some(env_cleanup), ptr::null_mut()) })?;
    QUEUE.with(|q| *q.borrow_mut() = Some(queue));
    Ok(())
}

/// While calls are pending the thread-safe function is referenced, which
/// keeps the event loop (and the process) alive until they settle.
pub fn set_keep_alive(cx: Cx, keep_alive: bool) -> Result<()> {
    let Some(tsfn) = current().and_then(|q| q.tsfn()) else {
        return Ok(());
    };
    // SAFETY: live env; the handle belongs to this environment and is live
    // (the finalizer has not run while the environment is running JS).
    check(unsafe {
        if keep_alive {
            sys::napi_ref_threadsafe_function(cx.0, tsfn)
        } else {
            sys::napi_unref_threadsafe_function(cx.0, tsfn)
        }
    })
}

/// Takes every completion queued so far.
pub fn take() -> Vec<Completion> {
    current().map(|q| q.take()).unwrap_or_default()
}
