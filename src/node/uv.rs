//! The few libuv functions the completion signal uses, declared by hand:
//! napi-rs exposes no libuv, and Node exports libuv's symbols to the addons
//! it loads (C addons call them directly; the dynamic linker resolves these
//! declarations against the `node` executable when the addon is loaded).
//! Every one of them is in libuv's stable 1.x ABI, unchanged from the libuv
//! of Node 20 (1.46) to that of Node 24 (1.51): `uv_async_init`,
//! `uv_async_send`, `uv_close`, `uv_ref` and `uv_unref` since 1.0, and
//! `uv_handle_size`, `uv_handle_get_data` and `uv_handle_set_data` (1.19),
//! which let this code allocate and use a handle without knowing its layout.
//!
//! This file only names the functions; `signal` owns the one handle.

use std::ffi::c_void;
use std::os::raw::c_int;

use napi::sys::uv_loop_s;

/// `UV_ASYNC` in libuv's `uv_handle_type`: the first handle type, right
/// after `UV_UNKNOWN_HANDLE` (0), since libuv 1.0.
pub const UV_ASYNC: c_int = 1;

/// A `uv_handle_t *` (here always a `uv_async_t *`), opaque to this code.
pub type Handle = *mut c_void;

pub type AsyncCallback = unsafe extern "C" fn(handle: Handle);
pub type CloseCallback = unsafe extern "C" fn(handle: Handle);

extern "C" {
    /// The size of a handle of type `kind`.
    pub fn uv_handle_size(kind: c_int) -> usize;
    /// Initialises an async handle on `event_loop`; loop thread only.
    pub fn uv_async_init(event_loop: *mut uv_loop_s, handle: Handle, cb: AsyncCallback) -> c_int;
    /// Makes the loop call the handle's callback soon; any thread. Sends
    /// made before the callback runs are coalesced into one call.
    pub fn uv_async_send(handle: Handle) -> c_int;
    /// Starts closing a handle; `cb` runs on a later loop iteration, after
    /// which the handle's memory may be freed. Loop thread only.
    pub fn uv_close(handle: Handle, cb: Option<CloseCallback>);
    /// A referenced active handle keeps its loop running; loop thread only.
    pub fn uv_ref(handle: Handle);
    pub fn uv_unref(handle: Handle);
    pub fn uv_handle_get_data(handle: Handle) -> *mut c_void;
    pub fn uv_handle_set_data(handle: Handle, data: *mut c_void);
}
