//! `Signal`: one libuv async handle on a JS environment's event loop, which
//! any thread can fire to make the loop call back on the JS thread. Firing is
//! lock-free (libuv sets a flag and writes its `eventfd` only when the flag
//! was clear, so a burst of fires costs one write and one callback), and it
//! takes no lock the JS thread takes: Node's thread-safe functions hold a
//! mutex while they signal, which the woken JS thread then waits on.
//!
//! The handle lives until the environment's teardown closes it; a fire from
//! a SQLite thread can race that, so fires are counted in a gate that the
//! close waits on and then shuts. It owns the handle and its memory, and
//! knows nothing of what the callback does.

use std::alloc::{alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use napi::{sys, Error, Result, Status};

use super::uv;

/// In `Signal::gate`: set once the handle is closing; below it, the number
/// of fires in progress.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// What runs once libuv has closed the handle and its memory is freed.
type Closed = Box<dyn FnOnce()>;

pub struct Signal {
    handle: uv::Handle,
    gate: AtomicUsize,
}

// SAFETY: `handle` is only passed to `uv_async_send` from other threads,
// which libuv documents as safe from any thread, and only while the gate is
// open; every other use (ref, unref, close) happens on the JS thread that
// owns the loop.
unsafe impl Send for Signal {}
// SAFETY: as for Send; the gate is an atomic.
unsafe impl Sync for Signal {}

impl Signal {
    /// Creates the handle on `env`'s loop, unreferenced (it keeps nothing
    /// alive until `set_referenced(true)`), calling `callback` on the JS
    /// thread after fires. JS thread only.
    pub fn open(env: sys::napi_env, callback: uv::AsyncCallback) -> Result<Signal> {
        let event_loop =
            uv::event_loop(env).map_err(|why| Error::new(Status::GenericFailure, why))?;
        uv::load().map_err(|why| Error::new(Status::GenericFailure, why))?;
        let layout = uv::handle_layout(uv::UV_ASYNC);
        // SAFETY: a non-zero size (see `uv::handle_layout`).
        let handle = unsafe { alloc_zeroed(layout) } as uv::Handle;
        if handle.is_null() {
            return Err(Error::new(Status::GenericFailure, "out of memory"));
        }
        // SAFETY: on the loop's own thread, with fresh memory of the size
        // libuv asked for; on failure the handle was never registered.
        let rc = unsafe { uv::uv_async_init(event_loop, handle, callback) };
        if rc != 0 {
            // SAFETY: allocated above with this layout, unused by libuv.
            unsafe { dealloc(handle as *mut u8, layout) };
            return Err(Error::new(Status::GenericFailure, "uv_async_init failed"));
        }
        // SAFETY: the handle was just initialised on this thread's loop.
        unsafe { uv::uv_unref(handle) };
        Ok(Signal {
            handle,
            gate: AtomicUsize::new(0),
        })
    }

    /// Makes the loop call the callback soon. Any thread; does nothing once
    /// the handle is closing.
    pub fn fire(&self) {
        if self.gate.fetch_add(1, Ordering::Acquire) & CLOSED == 0 {
            // SAFETY: the gate was open, so `close` has not closed the
            // handle and waits until this fire is done before it does.
            unsafe { uv::uv_async_send(self.handle) };
        }
        self.gate.fetch_sub(1, Ordering::Release);
    }

    /// Whether the handle keeps the loop alive. JS thread only.
    pub fn set_referenced(&self, referenced: bool) {
        if self.gate.load(Ordering::Acquire) & CLOSED != 0 {
            return;
        }
        // SAFETY: on the loop's thread, while the handle is open (not
        // closing: `close` runs on this same thread).
        unsafe {
            if referenced {
                uv::uv_ref(self.handle)
            } else {
                uv::uv_unref(self.handle)
            }
        }
    }

    /// Shuts the gate, waits for fires in progress, and closes the handle;
    /// `closed` runs once libuv is done with it and its memory is freed (at
    /// once if it was closed already). JS thread only.
    pub fn close(&self, closed: Closed) {
        if self.gate.fetch_or(CLOSED, Ordering::AcqRel) & CLOSED != 0 {
            closed();
            return;
        }
        // A fire in progress is a few instructions and at most one write to
        // an eventfd; it cannot wait on this thread.
        while self.gate.load(Ordering::Acquire) & !CLOSED != 0 {
            thread::yield_now();
        }
        let data = Box::into_raw(Box::new(closed)) as *mut c_void;
        // SAFETY: on the loop's thread; no fire can reach the handle any
        // more, and `on_closed` reclaims `data` and frees the handle.
        unsafe {
            uv::uv_handle_set_data(self.handle, data);
            uv::uv_close(self.handle, Some(on_closed));
        }
    }
}

unsafe extern "C" fn on_closed(handle: uv::Handle) {
    // SAFETY: `close` stored a leaked `Box<Closed>` in the handle's data
    // just before closing it, and libuv calls this once.
    let closed = unsafe { Box::from_raw(uv::uv_handle_get_data(handle) as *mut Closed) };
    // SAFETY: libuv is done with the handle; it was allocated by `open`
    // with the same layout.
    unsafe { dealloc(handle as *mut u8, uv::handle_layout(uv::UV_ASYNC)) };
    // A panic must not unwind into libuv.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(closed));
}
