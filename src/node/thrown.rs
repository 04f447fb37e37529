//! Values kept on the JS thread between calls: a `Values` holder (JS
//! values of any type, by id, inside one referenced object), and the JS
//! values user functions threw, each kept under a token until the error of
//! the statement it failed reaches JS (`node:sqlite` rethrows the value
//! itself). It knows nothing of SQLite threads or queues.

use std::cell::{Cell, RefCell};
use std::ptr;

use napi::{sys, Result};
use offloop_engine as engine;

use super::js::{check, Cx, Js};

/// A thrown JS value travels back to the statement's caller as the SQLite
/// error message `THROWN` followed by a token, which `take_thrown` turns
/// back into the value itself (`node:sqlite` rethrows it as it is).
const THROWN: &str = "\u{1}offloop:thrown:";

/// The code of an error description (see `errors::error_to_js`) whose
/// second element is a thrown value to reject with as it is; lib/errors.js
/// names it too.
pub const THROWN_CODE: &str = "OFFLOOP_THROWN";

thread_local! {
    /// Thrown JS values by token, until their statement's error reaches JS.
    static THROWN_VALUES: RefCell<Option<Values>> = const { RefCell::new(None) };
    static NEXT_THROWN: Cell<u32> = const { Cell::new(0) };
}

/// JS values of any type kept between calls, as the elements of one JS
/// object: Node-API (before Node 22) makes references to objects only.
pub struct Values {
    pub holder: sys::napi_ref,
}

impl Values {
    pub fn new(cx: Cx) -> Result<Values> {
        let mut object = ptr::null_mut();
        // SAFETY: live env, valid out-pointer.
        check(unsafe { sys::napi_create_object(cx.0, &mut object) })?;
        Ok(Values {
            holder: create_reference(cx, Js(object))?,
        })
    }

    pub fn put(&self, cx: Cx, key: u32, value: Js) -> Result<()> {
        let holder = reference_value(cx, self.holder)?;
        cx.set_element(holder, key, value)
    }

    pub fn get(&self, cx: Cx, key: u32) -> Result<Js> {
        cx.get_element(reference_value(cx, self.holder)?, key)
    }

    pub fn remove(&self, cx: Cx, key: u32) -> Result<()> {
        let holder = reference_value(cx, self.holder)?;
        let mut deleted = false;
        // SAFETY: live env, the holder object of this environment.
        check(unsafe { sys::napi_delete_element(cx.0, holder.0, key, &mut deleted) })
    }
}

pub fn create_reference(cx: Cx, value: Js) -> Result<sys::napi_ref> {
    let mut r = ptr::null_mut();
    // SAFETY: live env of this call and one of its values.
    check(unsafe { sys::napi_create_reference(cx.0, value.0, 1, &mut r) })?;
    Ok(r)
}

pub fn reference_value(cx: Cx, r: sys::napi_ref) -> Result<Js> {
    let mut v = ptr::null_mut();
    // SAFETY: `r` was created in this environment and is not deleted yet.
    check(unsafe { sys::napi_get_reference_value(cx.0, r, &mut v) })?;
    Ok(Js(v))
}

pub fn delete_reference(cx: Cx, r: sys::napi_ref) {
    // SAFETY: `r` was created in this environment; every caller deletes it
    // exactly once (it was just removed from where it was kept).
    unsafe {
        sys::napi_delete_reference(cx.0, r);
    }
}

/// Keeps a thrown value until its statement's error reaches JS; returns the
/// message that names it.
pub fn keep_thrown(cx: Cx, value: Js) -> Result<String> {
    let token = NEXT_THROWN.with(|n| {
        let token = n.get().wrapping_add(1);
        n.set(token);
        token
    });
    THROWN_VALUES.with(|t| -> Result<()> {
        let mut t = t.borrow_mut();
        if t.is_none() {
            *t = Some(Values::new(cx)?);
        }
        t.as_ref()
            .map_or(Ok(()), |values| values.put(cx, token, value))
    })?;
    Ok(format!("{THROWN}{token}"))
}

/// The value a user function threw, when `error` is the SQLite error it
/// caused; it is handed over once.
pub fn take_thrown(cx: Cx, error: &engine::Error) -> Result<Option<Js>> {
    let engine::Error::Sqlite { message, .. } = error else {
        return Ok(None);
    };
    let Some(token) = message
        .strip_prefix(THROWN)
        .and_then(|t| t.parse::<u32>().ok())
    else {
        return Ok(None);
    };
    THROWN_VALUES.with(|t| {
        let t = t.borrow();
        let Some(values) = t.as_ref() else {
            return Ok(None);
        };
        let value = values.get(cx, token)?;
        values.remove(cx, token)?;
        Ok(Some(value))
    })
}
