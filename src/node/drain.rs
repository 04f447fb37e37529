//! The JS thread's end of the completion path, one per JS environment (the
//! main thread and each worker): the environment's completion queue and its
//! `Waker`, the drain that hands the queued completions to lib/calls.js in
//! one call per slice, keep-alive, and teardown.
//!
//! Slices: one drain takes at most about a millisecond of the JS thread's work
//! (`SLICE_WEIGHT`), whole completions at a time, and fires the waker
//! again for the rest, so a burst of results (hundreds of `all()`s of many
//! rows) is settled over several turns of the loop with timers and I/O
//! between them, instead of in one turn that stalls them.
//!
//! The drain runs in the waker's callback inside a Node-API callback
//! scope, as a thread-safe function's call would: promise continuations and
//! `process.nextTick` callbacks run when the scope closes, before the loop
//! goes on. The completions arrive as the drain function's argument.
//!
//! Keep-alive: the waker's handle is referenced while replies are
//! outstanding (made on this thread by `expect_reply`, not yet drained), so a
//! pending call keeps the loop alive and an idle database does not. The count
//! lives on this thread alone and is checked once a drain and its
//! continuations are done: a lone awaited call, whose continuation makes
//! the next call, leaves the handle referenced and costs no ref/unref.
//!
//! Before the loop blocks with a reply due, `Linger` may look for it for a
//! few microseconds; a reply it catches is drained there, the same way. On
//! the libuv path (see `waker`) libuv says when the loop is about to block;
//! on the other, lib/calls.js asks from an immediate (`linger`).
//!
//! Teardown: an async cleanup hook closes the handles and tells Node when
//! libuv is done with it (Node runs the loop until then), so a worker's loop
//! closes with nothing of ours left in it.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use napi::{sys, Error, Result, Status};
use offloop_engine::RowSet;

use super::completion::{Completion, CompletionQueue, Reply, SLICE_WEIGHT};
use super::js::{check, Cx, Js};
use super::linger::Linger;
use super::outcome::completions_to_js;
use super::packer;
use super::sweeper;
use super::uv;
use super::waker::{self, WakePath, Waker, Woken};

/// This environment's side of the completion path.
struct Environment {
    env: sys::napi_env,
    queue: Arc<CompletionQueue>,
    /// lib/calls.js's `drain(batch)`.
    drain: sys::napi_ref,
    /// The async context drains run in (what async_hooks see), on a path
    /// whose callbacks the host does not already run in a callback scope.
    context: Option<sys::napi_async_context>,
    /// Replies made and not yet drained.
    outstanding: Cell<usize>,
    /// Whether the waker's handle is referenced.
    referenced: Cell<bool>,
    /// Always there once `init` has succeeded; an option for teardown's
    /// sake (closed once).
    linger: Option<Linger>,
    /// Drains of at least one completion, by what started them: a wake-up
    /// of the loop, or a linger that caught a reply (`drains`).
    woken: Cell<f64>,
    lingered: Cell<f64>,
}

/// How a drain came to run.
#[derive(Clone, Copy)]
enum Started {
    Woken,
    Lingered,
}

thread_local! {
    static ENVIRONMENT: RefCell<Option<Rc<Environment>>> = const { RefCell::new(None) };
}

fn current() -> Option<Rc<Environment>> {
    ENVIRONMENT.with(|e| e.borrow().clone())
}

/// This environment's completion queue, once `init` has run.
pub fn queue() -> Option<Arc<CompletionQueue>> {
    current().map(|e| e.queue.clone())
}

/// Makes the reply for one job of this environment. While any is
/// outstanding the event loop stays alive. JS thread.
pub fn expect_reply(queue: &Arc<CompletionQueue>, id: f64, flags: u32) -> Reply {
    if let Some(e) = current() {
        if e.outstanding.get() == 0 && !e.referenced.get() {
            e.queue.waker.set_referenced(true);
            e.referenced.set(true);
        }
        e.outstanding.set(e.outstanding.get() + 1);
    }
    Reply::new(queue.clone(), id, flags)
}

/// Sets up this environment's completion path: `drain` (a JS function)
/// is called with each batch. `pack` and `join` build the arrays
/// completions are handed over in (see `packer`). `runtime` and `version`
/// name the host (`node`, `bun`, `deno`), which chooses the waker. A second
/// call in the same environment does nothing.
pub fn init(cx: Cx, drain: Js, pack: Js, join: Js, runtime: &str, version: &str) -> Result<()> {
    if current().is_some() {
        return Ok(());
    }
    packer::init(cx, pack, join)?;
    let mut drain_ref = ptr::null_mut();
    // SAFETY: live env and a value of this call; Node writes the reference.
    check(unsafe { sys::napi_create_reference(cx.0, drain.0, 1, &mut drain_ref) })?;
    let path = WakePath::choose(runtime);
    let context = if path.host_scopes_callbacks() {
        None
    } else {
        let mut context = ptr::null_mut();
        let name = cx.string("offloop")?;
        // SAFETY: live env; a null resource makes Node create (and hold) one.
        check(unsafe { sys::napi_async_init(cx.0, ptr::null_mut(), name.0, &mut context) })?;
        Some(context)
    };
    let unusable = |error| waker::unusable(runtime, version, path, &error);
    let waker = Waker::open::<Delivery>(cx, path).map_err(unusable)?;
    let linger = match path {
        WakePath::Libuv => match Linger::open(cx.0, on_prepare) {
            Ok(linger) => Some(linger),
            Err(error) => {
                waker.close(Box::new(|| {}));
                return Err(unusable(error));
            }
        },
        WakePath::ThreadsafeFunction => Some(Linger::asked_by_js()),
    };
    let added = match path {
        WakePath::Libuv => {
            let mut hook = ptr::null_mut();
            // SAFETY: a plain function with a null argument, removed by
            // `on_async_teardown` once the handles are closed.
            check(unsafe {
                sys::napi_add_async_cleanup_hook(
                    cx.0,
                    Some(on_async_teardown),
                    ptr::null_mut(),
                    &mut hook,
                )
            })
        }
        // SAFETY: a plain function with a null argument, run once at
        // teardown; never removed (it outlives nothing it uses).
        WakePath::ThreadsafeFunction => check(unsafe {
            sys::napi_add_env_cleanup_hook(cx.0, Some(on_teardown), ptr::null_mut())
        }),
    };
    if let Err(error) = added {
        // Nothing would close the handles at teardown, and a loop cannot
        // close with them open.
        close_all(
            linger.as_ref(),
            Box::new(move || waker.close(Box::new(|| {}))),
        );
        return Err(error);
    }
    let environment = Environment {
        env: cx.0,
        queue: Arc::new(CompletionQueue::new(waker)),
        drain: drain_ref,
        context,
        outstanding: Cell::new(0),
        woken: Cell::new(0.0),
        lingered: Cell::new(0.0),
        referenced: Cell::new(false),
        linger,
    };
    ENVIRONMENT.with(|e| *e.borrow_mut() = Some(Rc::new(environment)));
    Ok(())
}

/// JS asks, from an immediate it scheduled when it made a call, before the
/// loop may block (the thread-safe function's path, which has no prepare
/// hook): looks for a due reply as `on_prepare` does, and drains it if it
/// comes. `true` when it came and more replies are due, for JS to ask again
/// on the loop's next turn. JS thread; on the libuv path it does nothing.
pub fn linger() -> bool {
    let Some(e) = current() else {
        return false;
    };
    if WakePath::chosen() != Some(WakePath::ThreadsafeFunction) {
        return false;
    }
    e.linger_and_drain() && e.outstanding.get() > 0
}

/// This environment's drains so far: `[woken, lingered]`, those a wake-up
/// of the loop started and those a linger caught (none before `init`).
pub fn drains() -> [f64; 2] {
    current().map_or([0.0; 2], |e| [e.woken.get(), e.lingered.get()])
}

/// What the waker runs on the JS thread (under `catch_unwind`: the
/// completions a panic held are lost with it, which only a bug in this
/// file could cause).
struct Delivery;

impl Woken for Delivery {
    fn woken() {
        if let Some(e) = current() {
            e.deliver(Started::Woken);
        }
    }
}

/// The loop is about to block, on the JS thread.
unsafe extern "C" fn on_prepare(_handle: uv::Handle) {
    // A panic must not unwind into libuv.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Some(e) = current() {
            e.linger_and_drain();
        }
    }));
}

impl Environment {
    /// The loop is about to block: lingers for a due reply (see `Linger`)
    /// and drains it if it comes. Whether it came.
    ///
    /// The SQLite thread still fires the waker for a reply caught here,
    /// and that is not wasted: on the libuv path the pending fire keeps
    /// the poll that follows from blocking, so the loop's next turn
    /// lingers again for the reply to the call the drained continuation
    /// made. Holding the fire back while lingering cut Node's awaited
    /// `get()` from 139–199k to 61–69k a second (the loop blocked after
    /// every caught reply), and gained nothing measurable in Bun or Deno.
    fn linger_and_drain(&self) -> bool {
        let due = self.outstanding.get() > 0;
        let caught = self
            .linger
            .as_ref()
            .is_some_and(|linger| linger.wait(due, || !self.queue.is_empty()));
        if caught {
            self.deliver(Started::Lingered);
        }
        caught
    }

    fn deliver(&self, started: Started) {
        let batch = self.queue.take(SLICE_WEIGHT);
        if !batch.is_empty() {
            let count = match started {
                Started::Woken => &self.woken,
                Started::Lingered => &self.lingered,
            };
            count.set(count.get() + 1.0);
            if let Some(linger) = &self.linger {
                linger.delivered();
            }
            let replies = batch.iter().filter(|c| c.is_reply()).count();
            self.outstanding
                .set(self.outstanding.get().saturating_sub(replies));
            let values = batch.iter().map(Completion::values).sum();
            let mut converted = Vec::new();
            // An error here means JS cannot run (the environment is going
            // away): nobody is left to settle.
            let _ = self.call_drain(batch, &mut converted);
            sweeper::sweep(converted, values);
            // A slice: the rest waits for the loop's next turn.
            self.queue.rearm();
        }
        if self.outstanding.get() == 0 && self.referenced.get() {
            self.queue.waker.set_referenced(false);
            self.referenced.set(false);
        }
    }

    /// Calls `drain(batch)` inside a handle scope and a callback scope
    /// (the host's, or one of ours).
    /// Whatever fails, no exception is left pending on the environment: a
    /// pending one would make every later Node-API call of this addon fail,
    /// napi-rs's own teardown included (which then aborts the process).
    fn call_drain(&self, batch: Vec<Completion>, converted: &mut Vec<RowSet>) -> Result<()> {
        let cx = Cx(self.env);
        let _handles = HandleScope::open(cx)?;
        let scope = match self.context {
            Some(context) => Some(CallbackScope::open(cx, context)?),
            None => None,
        };
        let called = self.call_drain_in_scope(cx, batch, converted);
        report_exception(cx);
        drop(scope);
        called
    }

    fn call_drain_in_scope(
        &self,
        cx: Cx,
        batch: Vec<Completion>,
        converted: &mut Vec<RowSet>,
    ) -> Result<()> {
        let batch = completions_to_js(cx, batch, converted)?;
        let mut drain = ptr::null_mut();
        // SAFETY: the reference was made in this environment by `init` and
        // lives as long as it.
        check(unsafe { sys::napi_get_reference_value(cx.0, self.drain, &mut drain) })?;
        let receiver = cx.undefined()?;
        // SAFETY: live env, a function and one argument of this scope.
        check(unsafe {
            sys::napi_call_function(cx.0, receiver.0, drain, 1, &batch.0, ptr::null_mut())
        })
    }
}

/// Takes the exception a failed call left pending, if any. One thrown by
/// running JS becomes an uncaught exception, as one thrown from any other
/// event-loop callback; one that only says JS cannot run any more (a worker
/// being terminated, an environment tearing down) is dropped, as Node drops
/// it for its own callbacks. A trivial call tells the two apart.
fn report_exception(cx: Cx) {
    let mut pending = false;
    // SAFETY: live env on its JS thread, inside a handle scope (the value
    // taken is a handle).
    unsafe { sys::napi_is_exception_pending(cx.0, &mut pending) };
    if !pending {
        return;
    }
    let mut error = ptr::null_mut();
    // SAFETY: as above; an exception is pending.
    unsafe { sys::napi_get_and_clear_last_exception(cx.0, &mut error) };
    if js_can_run(cx) {
        // SAFETY: live env, and the error value taken just above.
        unsafe { sys::napi_fatal_exception(cx.0, error) };
    }
}

/// Whether JS runs now: calls `pack` with no arguments, and clears what
/// that call left pending if it could not run.
fn js_can_run(cx: Cx) -> bool {
    if packer::packers(cx)
        .and_then(|(pack, _)| cx.call(pack, &[]))
        .is_ok()
    {
        return true;
    }
    let mut pending = false;
    let mut ignored = ptr::null_mut();
    // SAFETY: live env on its JS thread, inside a handle scope.
    unsafe {
        sys::napi_is_exception_pending(cx.0, &mut pending);
        if pending {
            sys::napi_get_and_clear_last_exception(cx.0, &mut ignored);
        }
    }
    false
}

/// A Node-API handle scope, closed on drop.
struct HandleScope(Cx, sys::napi_handle_scope);

impl HandleScope {
    fn open(cx: Cx) -> Result<HandleScope> {
        let mut scope = ptr::null_mut();
        // SAFETY: live env on its JS thread.
        check(unsafe { sys::napi_open_handle_scope(cx.0, &mut scope) })?;
        Ok(HandleScope(cx, scope))
    }
}

impl Drop for HandleScope {
    fn drop(&mut self) {
        // SAFETY: the scope opened by `open`, closed once, innermost (the
        // callback scope inside it is dropped first).
        unsafe { sys::napi_close_handle_scope(self.0 .0, self.1) };
    }
}

/// A Node-API callback scope: closing it runs the microtask queue and
/// `process.nextTick` callbacks.
struct CallbackScope(Cx, sys::napi_callback_scope);

impl CallbackScope {
    fn open(cx: Cx, context: sys::napi_async_context) -> Result<CallbackScope> {
        let mut scope = ptr::null_mut();
        // SAFETY: live env and its async context; the resource argument is
        // ignored by Node (the context carries its own).
        check(unsafe {
            sys::napi_open_callback_scope(cx.0, ptr::null_mut(), context, &mut scope)
        })?;
        if scope.is_null() {
            return Err(Error::new(Status::GenericFailure, "no callback scope"));
        }
        Ok(CallbackScope(cx, scope))
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        // SAFETY: the scope opened by `open`, closed once.
        unsafe { sys::napi_close_callback_scope(self.0 .0, self.1) };
    }
}

/// The environment is ending: forget its state, and close the waker's
/// handle (and the linger's); `done` runs once the host is done with them.
fn tear_down(done: Box<dyn FnOnce()>) {
    let environment = catch_unwind(|| {
        packer::forget_environment();
        ENVIRONMENT.with(|e| e.borrow_mut().take())
    })
    .ok()
    .flatten();
    let Some(environment) = environment else {
        return done();
    };
    if let Some(context) = environment.context {
        // SAFETY: live env (teardown has not freed it); the context was
        // made by `init` and is destroyed once, here.
        unsafe { sys::napi_async_destroy(environment.env, context) };
    }
    // SQLite threads may still push (and fire) until their databases close:
    // they keep the queue, whose waker now does nothing.
    let queue = environment.queue.clone();
    close_all(
        environment.linger.as_ref(),
        Box::new(move || queue.waker.close(done)),
    );
}

/// Teardown on the libuv path: Node waits (running the loop) until
/// `napi_remove_async_cleanup_hook` says libuv is done with the handles.
unsafe extern "C" fn on_async_teardown(
    hook: sys::napi_async_cleanup_hook_handle,
    _arg: *mut c_void,
) {
    tear_down(Box::new(move || {
        // SAFETY: the handle Node passed to this hook, removed once, after
        // libuv closed both handles.
        unsafe { sys::napi_remove_async_cleanup_hook(hook) };
    }));
}

/// Teardown on the thread-safe function's path: releasing it is all, and
/// the host frees it. (Deno frees an async hook's handle itself once the
/// hook ran, so removing it there, as Node requires, frees it twice.)
unsafe extern "C" fn on_teardown(_arg: *mut c_void) {
    tear_down(Box::new(|| {}));
}

/// Closes the linger, if any, then runs `then` (once libuv is done with it).
fn close_all(linger: Option<&Linger>, then: Box<dyn FnOnce()>) {
    match linger {
        Some(linger) => linger.close(then),
        None => then(),
    }
}
