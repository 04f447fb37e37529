//! `Waker`: how a SQLite thread wakes a JS environment's event loop when
//! completions wait, chosen once per process when the addon loads
//! (`WakePath::choose`), and the same for every environment in it.
//!
//! - `libuv`: the host's own libuv async handle (`Signal`), and the
//!   `Linger` before the loop blocks. The fastest: a fire takes no lock.
//!   Node's path, wherever its libuv is found complete.
//! - `threadsafe-function`: a Node-API thread-safe function
//!   (`ThreadsafeSignal`), and no linger. Needs nothing outside Node-API.
//!   Bun's and Deno's path: Bun exports libuv's names but stubs them on
//!   Linux and macOS (a call panics or does nothing), and Deno exports only
//!   part of libuv (no `uv_prepare_*`) with `uv_ref` and `uv_unref` that do
//!   nothing, so its handle could not keep a pending call alive. Also the
//!   path of any host whose exports lack one of the functions `uv` needs.
//!
//! Either way, the handle is referenced only while a reply is due (`drain`
//! decides when), so an idle database keeps no runtime alive. This file
//! owns the choice and the dispatch to the one chosen; it never looks at a
//! completion.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use napi::{sys, Error, Result, Status};

use super::js::Cx;
use super::signal::Signal;
use super::threadsafe_signal::ThreadsafeSignal;
use super::uv;

/// Which way completions wake the loop in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakePath {
    Libuv,
    ThreadsafeFunction,
}

/// The hosts known to export libuv functions that do not work, as
/// lib/calls.js names them.
const LIBUV_UNUSABLE: [&str; 2] = ["bun", "deno"];

static CHOSEN: OnceLock<WakePath> = OnceLock::new();

impl WakePath {
    /// Chooses this process's path on the first call (`runtime` is what
    /// lib/calls.js found: `node`, `bun`, `deno`), and returns that choice
    /// on every later one.
    pub fn choose(runtime: &str) -> WakePath {
        *CHOSEN.get_or_init(|| {
            if LIBUV_UNUSABLE.contains(&runtime) {
                return WakePath::ThreadsafeFunction;
            }
            match uv::load() {
                Ok(()) => WakePath::Libuv,
                Err(_) => WakePath::ThreadsafeFunction,
            }
        })
    }

    /// The chosen path, once `choose` has run.
    pub fn chosen() -> Option<WakePath> {
        CHOSEN.get().copied()
    }

    /// Whether the host calls back inside a callback scope of its own
    /// (promise continuations run when it closes), as Node-API promises for
    /// a thread-safe function's call. A libuv callback has none, so the
    /// drain opens one; on the other path, opening another is refused by
    /// Bun and the async context it needs breaks Deno's teardown.
    pub fn host_scopes_callbacks(self) -> bool {
        self == WakePath::ThreadsafeFunction
    }

    /// Its name in `db.stats().waker` and in the docs.
    pub fn name(self) -> &'static str {
        match self {
            WakePath::Libuv => "libuv",
            WakePath::ThreadsafeFunction => "threadsafe-function",
        }
    }
}

/// What a wake-up runs on the JS thread: one function for both paths.
pub trait Woken {
    fn woken();
}

pub enum Waker {
    Libuv(Signal),
    ThreadsafeFunction(ThreadsafeSignal),
}

impl Waker {
    /// Opens `path`'s handle on `cx`'s loop, unreferenced, calling
    /// `W::woken` on the JS thread after fires. JS thread only.
    pub fn open<W: Woken>(cx: Cx, path: WakePath) -> Result<Waker> {
        match path {
            WakePath::Libuv => Signal::open(cx.0, on_async::<W>).map(Waker::Libuv),
            WakePath::ThreadsafeFunction => {
                ThreadsafeSignal::open(cx, on_call::<W>).map(Waker::ThreadsafeFunction)
            }
        }
    }

    /// Makes the loop call back soon. Any thread; does nothing once closed.
    pub fn fire(&self) {
        match self {
            Waker::Libuv(signal) => signal.fire(),
            Waker::ThreadsafeFunction(signal) => signal.fire(),
        }
    }

    /// Whether the handle keeps the loop alive. JS thread only.
    pub fn set_referenced(&self, referenced: bool) {
        match self {
            Waker::Libuv(signal) => signal.set_referenced(referenced),
            Waker::ThreadsafeFunction(signal) => signal.set_referenced(referenced),
        }
    }

    /// Closes the handle; `closed` runs once the host is done with it. JS
    /// thread only.
    pub fn close(&self, closed: Box<dyn FnOnce()>) {
        match self {
            Waker::Libuv(signal) => signal.close(closed),
            Waker::ThreadsafeFunction(signal) => {
                signal.close();
                closed();
            }
        }
    }
}

/// The error that makes loading offloop fail in a host where it cannot
/// work: it names the runtime and what is missing.
pub fn unusable(runtime: &str, version: &str, path: WakePath, why: &Error) -> Error {
    let shown = match runtime {
        "bun" => "Bun",
        "deno" => "Deno",
        "node" => "Node.js",
        other => other,
    };
    Error::new(
        Status::GenericFailure,
        format!(
            "offloop cannot run in {shown} {version}: its {} wake-up could not be set up ({})",
            path.name(),
            why.reason
        ),
    )
}

unsafe extern "C" fn on_async<W: Woken>(_handle: uv::Handle) {
    // A panic must not unwind into the host.
    let _ = catch_unwind(AssertUnwindSafe(W::woken));
}

unsafe extern "C" fn on_call<W: Woken>(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    _context: *mut c_void,
    _data: *mut c_void,
) {
    // A null env: the host drops a queued call while it tears the function
    // down, and nothing may run.
    if !env.is_null() {
        // As for `on_async`.
        let _ = catch_unwind(AssertUnwindSafe(W::woken));
    }
}
