//! `Linger`: while a reply is due, and replies of late came within
//! microseconds, the JS thread looks at its completion queue for up to
//! `LINGER` before its event loop blocks, instead of blocking at once: on a
//! VM whose idle vCPUs halt, a reply that lands after the loop blocked
//! costs the wake-up of a halted vCPU (about 35 µs), several times the call
//! itself, and on the thread-safe function's path the host's own wake-up
//! on top. Whether to linger is the engine's `Pace`, as for a SQLite thread
//! waiting for a job: only after a reply that came quickly, ever more
//! rarely while lingers keep missing, and never in a process confined to
//! one CPU. An environment with no reply due never lingers.
//!
//! Where the loop is about to block is known two ways:
//! - on the libuv path, a prepare handle, whose callback libuv runs each
//!   time the loop is about to block (`Linger::open`);
//! - on the thread-safe function's path (Bun, Deno), which has no such
//!   hook, lib/calls.js schedules an immediate when it makes a call; an
//!   immediate runs after the loop polled without blocking, and that is
//!   where it asks (`Linger::asked_by_js`, `drain::linger`).
//!
//! It owns the handle and when to linger; what a caught reply does is the
//! caller's (`drain`). It never keeps the loop alive: the handle is
//! unreferenced.

use std::alloc::{alloc_zeroed, dealloc};
use std::cell::Cell;
use std::ffi::c_void;
use std::time::{Duration, Instant};

use napi::{sys, Error, Result, Status};
use offloop_engine::Pace;

use super::uv;

/// How long the JS thread looks for a due reply before it lets the loop
/// block: a one-row read on a SQLite thread that is awake takes a few
/// microseconds, on one whose vCPU must be woken first about 40.
const LINGER: Duration = Duration::from_micros(50);

/// A reply that came this soon after the loop blocked would have been
/// caught by a linger (with the blocked loop's own wake-up on top).
const QUICK: Duration = Duration::from_micros(100);

type Closed = Box<dyn FnOnce()>;

pub struct Linger {
    /// The prepare handle, on the libuv path.
    handle: Option<uv::Handle>,
    pace: Cell<Pace>,
    /// When the loop last blocked with a reply due, if that wait is to be
    /// measured.
    blocked_at: Cell<Option<Instant>>,
}

impl Linger {
    /// Starts the handle on `env`'s loop, unreferenced, calling `callback`
    /// before every block. JS thread only; `uv::load` has succeeded.
    pub fn open(env: sys::napi_env, callback: uv::PrepareCallback) -> Result<Linger> {
        let event_loop =
            uv::event_loop(env).map_err(|why| Error::new(Status::GenericFailure, why))?;
        let layout = uv::handle_layout(uv::UV_PREPARE);
        // SAFETY: a non-zero size (see `uv::handle_layout`).
        let handle = unsafe { alloc_zeroed(layout) } as uv::Handle;
        if handle.is_null() {
            return Err(Error::new(Status::GenericFailure, "out of memory"));
        }
        // SAFETY: on the loop's own thread, with fresh memory of the size
        // libuv asked for; on failure the handle was never registered.
        let rc = unsafe { uv::uv_prepare_init(event_loop, handle) };
        if rc != 0 {
            // SAFETY: allocated above with this layout, unused by libuv.
            unsafe { dealloc(handle as *mut u8, layout) };
            return Err(Error::new(Status::GenericFailure, "uv_prepare_init failed"));
        }
        // SAFETY: the handle was just initialised on this thread's loop;
        // starting an initialised prepare handle cannot fail.
        unsafe {
            uv::uv_prepare_start(handle, callback);
            uv::uv_unref(handle);
        }
        Ok(Linger {
            handle: Some(handle),
            ..Linger::asked_by_js()
        })
    }

    /// A linger with no handle: JS asks before the loop would block.
    pub fn asked_by_js() -> Linger {
        Linger {
            handle: None,
            pace: Cell::new(Pace::new()),
            blocked_at: Cell::new(None),
        }
    }

    /// The loop is about to block and a reply is `due`: looks for it
    /// (`arrived`) for up to `LINGER` if the pace says so. `true` when it
    /// came.
    pub fn wait(&self, due: bool, arrived: impl Fn() -> bool) -> bool {
        if !due {
            self.blocked_at.set(None);
            return false;
        }
        let mut pace = self.pace.get();
        let (came, measured) = pace.spin(LINGER, arrived);
        self.pace.set(pace);
        self.blocked_at.set((!came && measured).then(Instant::now));
        came
    }

    /// Replies were delivered after the loop blocked: were they quick?
    pub fn delivered(&self) {
        if let Some(at) = self.blocked_at.take() {
            let mut pace = self.pace.get();
            pace.waited(at.elapsed(), QUICK);
            self.pace.set(pace);
        }
    }

    /// Stops and closes the handle; `closed` runs once libuv is done with
    /// it (at once when there is none). JS thread only, once.
    pub fn close(&self, closed: Closed) {
        let Some(handle) = self.handle else {
            return closed();
        };
        let data = Box::into_raw(Box::new(closed)) as *mut c_void;
        // SAFETY: on the loop's thread; `on_closed` reclaims `data` and
        // frees the handle.
        unsafe {
            uv::uv_prepare_stop(handle);
            uv::uv_handle_set_data(handle, data);
            uv::uv_close(handle, Some(on_closed));
        }
    }
}

unsafe extern "C" fn on_closed(handle: uv::Handle) {
    // SAFETY: `close` stored a leaked `Box<Closed>` in the handle's data
    // just before closing it, and libuv calls this once.
    let closed = unsafe { Box::from_raw(uv::uv_handle_get_data(handle) as *mut Closed) };
    // SAFETY: libuv is done with the handle; it was allocated by `open`
    // with the same layout.
    unsafe { dealloc(handle as *mut u8, uv::handle_layout(uv::UV_PREPARE)) };
    // A panic must not unwind into libuv.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(closed));
}
