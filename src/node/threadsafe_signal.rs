//! `ThreadsafeSignal`: a Node-API thread-safe function with no JS function
//! behind it, which any thread can fire to make a JS environment's loop
//! call back on its JS thread. It is `Signal`'s stand-in where the host's
//! libuv cannot be used (see `waker`): it needs Node-API alone, which Bun
//! and Deno implement. Firing queues one null item; the completion queue's
//! `armed` flag already makes a burst of completions one fire.
//!
//! Keep-alive is Node-API's `napi_ref_threadsafe_function` and
//! `napi_unref_threadsafe_function`, which every such host honours (Deno's
//! `uv_ref` and `uv_unref` do nothing). As for `Signal`, a fire from a
//! SQLite thread can race the environment's teardown, so fires are counted
//! in a gate that the close waits on and then shuts. It owns the function
//! and knows nothing of what the callback does.

use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use napi::{sys, Result};

use super::js::{check, Cx};

/// In `ThreadsafeSignal::gate`: set once the function is released; below
/// it, the number of fires in progress.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// Called on the JS thread for each fire (with a null `env` if the host
/// drops a queued call while it tears the function down).
pub type Callback = unsafe extern "C" fn(
    env: sys::napi_env,
    js_callback: sys::napi_value,
    context: *mut std::ffi::c_void,
    data: *mut std::ffi::c_void,
);

pub struct ThreadsafeSignal {
    env: sys::napi_env,
    function: sys::napi_threadsafe_function,
    gate: AtomicUsize,
}

// SAFETY: `function` is only passed to `napi_call_threadsafe_function` from
// other threads, which Node-API allows from any thread, and only while the
// gate is open; every other use (ref, unref, release) and `env` stay on the
// JS thread that created it.
unsafe impl Send for ThreadsafeSignal {}
// SAFETY: as for Send; the gate is an atomic.
unsafe impl Sync for ThreadsafeSignal {}

impl ThreadsafeSignal {
    /// Creates the function on `env`, unreferenced (it keeps nothing alive
    /// until `set_referenced(true)`), calling `callback` on the JS thread
    /// after fires. JS thread only.
    pub fn open(cx: Cx, callback: Callback) -> Result<ThreadsafeSignal> {
        let name = cx.string("offloop completions")?;
        let mut function = ptr::null_mut();
        // SAFETY: live env on its JS thread; no JS function (the callback
        // needs none), no finalizer and no context: nothing to reclaim.
        // Queue size 0 is unbounded, so a non-blocking call never fails
        // for a full queue; one thread holds it until `close` releases it.
        check(unsafe {
            sys::napi_create_threadsafe_function(
                cx.0,
                ptr::null_mut(),
                ptr::null_mut(),
                name.0,
                0,
                1,
                ptr::null_mut(),
                None,
                ptr::null_mut(),
                Some(callback),
                &mut function,
            )
        })?;
        // SAFETY: live env and the function just created on this thread.
        let unreferenced = check(unsafe { sys::napi_unref_threadsafe_function(cx.0, function) });
        if let Err(error) = unreferenced {
            // SAFETY: the function created above, released once.
            unsafe {
                sys::napi_release_threadsafe_function(
                    function,
                    sys::ThreadsafeFunctionReleaseMode::abort,
                )
            };
            return Err(error);
        }
        Ok(ThreadsafeSignal {
            env: cx.0,
            function,
            gate: AtomicUsize::new(0),
        })
    }

    /// Makes the loop call the callback soon. Any thread; does nothing once
    /// the function is released.
    pub fn fire(&self) {
        if self.gate.fetch_add(1, Ordering::Acquire) & CLOSED == 0 {
            // SAFETY: the gate was open, so `close` has not released the
            // function and waits until this fire is done before it does.
            unsafe {
                sys::napi_call_threadsafe_function(
                    self.function,
                    ptr::null_mut(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                )
            };
        }
        self.gate.fetch_sub(1, Ordering::Release);
    }

    /// Whether the function keeps the loop alive. JS thread only.
    pub fn set_referenced(&self, referenced: bool) {
        if self.gate.load(Ordering::Acquire) & CLOSED != 0 {
            return;
        }
        // SAFETY: the env and function of this JS thread, not released
        // (`close` runs on this same thread).
        unsafe {
            if referenced {
                sys::napi_ref_threadsafe_function(self.env, self.function);
            } else {
                sys::napi_unref_threadsafe_function(self.env, self.function);
            }
        }
    }

    /// Shuts the gate, waits for fires in progress, and releases the
    /// function; the host frees it, and drops any call still queued. JS
    /// thread only.
    pub fn close(&self) {
        if self.gate.fetch_or(CLOSED, Ordering::AcqRel) & CLOSED != 0 {
            return;
        }
        // A fire in progress is one non-blocking call; it cannot wait on
        // this thread.
        while self.gate.load(Ordering::Acquire) & !CLOSED != 0 {
            thread::yield_now();
        }
        // SAFETY: the function created by `open`, released once; no fire
        // can reach it any more.
        unsafe {
            sys::napi_release_threadsafe_function(
                self.function,
                sys::ThreadsafeFunctionReleaseMode::abort,
            )
        };
    }
}
