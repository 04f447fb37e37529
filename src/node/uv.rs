//! The few libuv functions the completion signal and the linger use: napi-rs exposes no
//! libuv, and Node exports libuv's symbols to the addons it loads (C addons
//! call them directly). Every one of them is in libuv's stable 1.x ABI,
//! unchanged from the libuv of Node 20 (1.46) to that of Node 24 (1.51):
//! `uv_async_init`, `uv_async_send`, `uv_prepare_init`, `uv_prepare_start`,
//! `uv_prepare_stop`, `uv_close`, `uv_ref` and `uv_unref` since 1.0, and `uv_handle_size`, `uv_handle_get_data` and
//! `uv_handle_set_data` (1.19), which let this code allocate and use a
//! handle without knowing its layout.
//!
//! They are found at run time, on every OS, never through the dynamic
//! linker: [`load`] looks each one up among the process's own exports
//! (`dlsym` on Unix, the main module on Windows, as napi-sys does for
//! Node-API), and the functions here call what it found. An addon that
//! left them unresolved would fail to load at all in a host that exports
//! only part of libuv (Deno has no `uv_prepare_*`); found this way, a
//! missing one is an error `waker` can act on.
//!
//! This file only names the functions; `signal` and `linger` own the
//! handles.

use std::alloc::Layout;
use std::ffi::c_void;
use std::os::raw::c_int;

use napi::sys::{self, uv_loop_s};

/// The memory of a handle of type `kind` (`UV_ASYNC`, `UV_PREPARE`). Every
/// libuv handle is made of pointers and integers; 16 covers any alignment
/// they need. The fallback (never taken: a handle is a few hundred bytes)
/// is the same on every call, so alloc and dealloc agree.
pub fn handle_layout(kind: c_int) -> Layout {
    // SAFETY: a pure function of libuv taking a handle type.
    let size = unsafe { uv_handle_size(kind) };
    Layout::from_size_align(size.max(1), 16).unwrap_or(Layout::new::<[u128; 64]>())
}

/// The event loop of `env`, the live env of the current call (JS thread).
pub fn event_loop(env: sys::napi_env) -> Result<*mut uv_loop_s, &'static str> {
    let mut event_loop = std::ptr::null_mut();
    // SAFETY: the live env of the current call; Node writes its loop.
    let status = unsafe { sys::napi_get_uv_event_loop(env, &mut event_loop) };
    if status != sys::Status::napi_ok || event_loop.is_null() {
        return Err("no event loop");
    }
    Ok(event_loop)
}

/// `UV_ASYNC` in libuv's `uv_handle_type`: the first handle type, right
/// after `UV_UNKNOWN_HANDLE` (0), since libuv 1.0.
pub const UV_ASYNC: c_int = 1;

/// `UV_PREPARE` in libuv's `uv_handle_type` (unchanged since libuv 1.0).
pub const UV_PREPARE: c_int = 9;

/// A `uv_handle_t *` (a `uv_async_t *` or a `uv_prepare_t *`), opaque to
/// this code.
pub type Handle = *mut c_void;

pub type AsyncCallback = unsafe extern "C" fn(handle: Handle);
pub type PrepareCallback = unsafe extern "C" fn(handle: Handle);
pub type CloseCallback = unsafe extern "C" fn(handle: Handle);

/// The declarations become the fields of the table `load` fills, and
/// functions of the same names that call through it.
macro_rules! libuv {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? = $failed:expr;)*) => {
        #[allow(non_snake_case)]
        struct Functions {
            $($name: unsafe extern "C" fn($($ty),*) $(-> $ret)?,)*
        }

        static FUNCTIONS: std::sync::OnceLock<Result<Functions, String>> = std::sync::OnceLock::new();

        /// Looks every function up among the process's exports, once; the
        /// error names the first one missing.
        pub fn load() -> Result<(), String> {
            let found = FUNCTIONS.get_or_init(|| {
                Ok(Functions {
                    $($name: {
                        let address = host::exported_symbol(concat!(stringify!($name), "\0"))?;
                        // SAFETY: the process's export of this name is
                        // libuv's function of the signature declared here
                        // (libuv's stable ABI; the C and system calling
                        // conventions are one on x86-64 Windows).
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) $(-> $ret)?>(address) }
                    },)*
                })
            });
            found.as_ref().map(|_| ()).map_err(Clone::clone)
        }

        $(
            $(#[$doc])*
            /// Before a successful `load`, the call fails (or does nothing).
            ///
            /// # Safety
            /// As for the libuv function of this name.
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                match FUNCTIONS.get() {
                    // SAFETY: per the caller, as the libuv function.
                    Some(Ok(functions)) => unsafe { (functions.$name)($($arg),*) },
                    _ => $failed,
                }
            }
        )*
    };
}

/// `UV_EINVAL`: what a call made before `load` succeeded returns. Only
/// its being non-zero matters to the callers; on Unix libuv's codes are
/// the negated `errno` values, on Windows fixed numbers.
#[cfg(not(windows))]
const UV_EINVAL: c_int = -22;
#[cfg(windows)]
const UV_EINVAL: c_int = -4071;

libuv! {
    /// The size of a handle of type `kind`.
    fn uv_handle_size(kind: c_int) -> usize = 0;
    /// Initialises an async handle on `event_loop`; loop thread only.
    fn uv_async_init(event_loop: *mut uv_loop_s, handle: Handle, cb: AsyncCallback) -> c_int = UV_EINVAL;
    /// Makes the loop call the handle's callback soon; any thread. Sends
    /// made before the callback runs are coalesced into one call.
    fn uv_async_send(handle: Handle) -> c_int = UV_EINVAL;
    /// Initialises a prepare handle on `event_loop`; loop thread only.
    fn uv_prepare_init(event_loop: *mut uv_loop_s, handle: Handle) -> c_int = UV_EINVAL;
    /// Calls `cb` each time the loop is about to block for I/O.
    fn uv_prepare_start(handle: Handle, cb: PrepareCallback) -> c_int = UV_EINVAL;
    fn uv_prepare_stop(handle: Handle) -> c_int = UV_EINVAL;
    /// Starts closing a handle; `cb` runs on a later loop iteration, after
    /// which the handle's memory may be freed. Loop thread only.
    fn uv_close(handle: Handle, cb: Option<CloseCallback>) = ();
    /// A referenced active handle keeps its loop running; loop thread only.
    fn uv_ref(handle: Handle) = ();
    fn uv_unref(handle: Handle) = ();
    fn uv_handle_get_data(handle: Handle) -> *mut c_void = std::ptr::null_mut();
    fn uv_handle_set_data(handle: Handle, data: *mut c_void) = ();
}

/// The process's own exports, through the dynamic loader: the host
/// executable's and those of the libraries it loaded.
#[cfg(not(windows))]
mod host {
    use std::ffi::c_void;
    use std::os::raw::c_char;

    /// `RTLD_DEFAULT`: look in the global scope, the executable first.
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    const RTLD_DEFAULT: *mut c_void = -2isize as *mut c_void;

    extern "C" {
        fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    }

    /// The address of the export `name` (NUL-terminated).
    pub fn exported_symbol(name: &'static str) -> Result<*mut c_void, String> {
        // SAFETY: `RTLD_DEFAULT` is a pseudo-handle every dynamic loader
        // accepts, and `name` is NUL-terminated.
        let address = unsafe { dlsym(RTLD_DEFAULT, name.as_ptr() as *const c_char) };
        if address.is_null() {
            let shown = name.trim_end_matches('\0');
            return Err(format!("the host process exports no {shown} (libuv)"));
        }
        Ok(address)
    }
}

/// The process's own exports, through kernel32.
#[cfg(windows)]
mod host {
    use std::ffi::c_void;
    use std::os::raw::c_char;

    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut c_void;
        fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
    }

    /// The address of the export `name` (NUL-terminated) of the process's
    /// main module (`node.exe`).
    pub fn exported_symbol(name: &'static str) -> Result<*mut c_void, String> {
        let shown = name.trim_end_matches('\0');
        // SAFETY: a null name asks for the main module, which lives as
        // long as the process; the handle needs no release.
        let main = unsafe { GetModuleHandleW(std::ptr::null()) };
        if main.is_null() {
            return Err(format!("no main module to find {shown} in"));
        }
        // SAFETY: `main` is a live module and `name` is NUL-terminated.
        let address = unsafe { GetProcAddress(main, name.as_ptr() as *const c_char) };
        if address.is_null() {
            return Err(format!("the host executable exports no {shown} (libuv)"));
        }
        Ok(address)
    }
}
