//! A thin, checked layer over raw Node-API calls for the hot paths (turning
//! parameters into Rust values and results into JS values), where napi-rs's
//! generic conversions would allocate or re-check more than needed.
//!
//! Every function takes the `napi_env` of the current call; none may be used
//! off the JS thread.

use std::os::raw::c_char;
use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValueType};
use napi::{sys, Error, Result, Status};

/// A raw JS value handed to or returned from an exported function.
#[derive(Clone, Copy)]
pub struct Js(pub sys::napi_value);

impl FromNapiValue for Js {
    unsafe fn from_napi_value(_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        Ok(Js(value))
    }
}

impl ToNapiValue for Js {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        Ok(value.0)
    }
}

impl TypeName for Js {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

pub fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::from(status),
            "Node-API call failed".to_string(),
        ))
    }
}

/// The env of the current call, with the few operations this addon needs.
#[derive(Clone, Copy)]
pub struct Cx(pub sys::napi_env);

/// Runs a Node-API call that writes its result through an out-pointer.
fn out_ptr<T>(call: impl FnOnce(*mut T) -> sys::napi_status) -> Result<T> {
    let mut result = std::mem::MaybeUninit::<T>::uninit();
    check(call(result.as_mut_ptr()))?;
    // SAFETY: Node-API initialises the out-pointer before returning napi_ok,
    // and `check` returned early otherwise.
    Ok(unsafe { result.assume_init() })
}

macro_rules! out {
    ($r:ident => $call:expr) => {
        out_ptr(|$r| {
            // SAFETY: every use passes the live env of the current call
            // (`Cx` is only built from the env Node gave this call) and
            // values created in it, plus a valid out-pointer.
            unsafe { $call }
        })
    };
}

impl Cx {
    pub fn undefined(self) -> Result<Js> {
        out!(r => sys::napi_get_undefined(self.0, r)).map(Js)
    }

    pub fn null(self) -> Result<Js> {
        out!(r => sys::napi_get_null(self.0, r)).map(Js)
    }

    pub fn boolean(self, v: bool) -> Result<Js> {
        out!(r => sys::napi_get_boolean(self.0, v, r)).map(Js)
    }

    pub fn number(self, v: f64) -> Result<Js> {
        out!(r => sys::napi_create_double(self.0, v, r)).map(Js)
    }

    pub fn bigint(self, v: i64) -> Result<Js> {
        out!(r => sys::napi_create_bigint_int64(self.0, v, r)).map(Js)
    }

    /// ASCII text is created as Latin-1, which V8 copies as it is instead
    /// of decoding UTF-8 (most text in a database is ASCII).
    pub fn string(self, s: &str) -> Result<Js> {
        if s.is_ascii() {
            out!(r => sys::napi_create_string_latin1(self.0, s.as_ptr() as *const c_char, s.len() as isize, r))
                .map(Js)
        } else {
            out!(r => sys::napi_create_string_utf8(self.0, s.as_ptr() as *const c_char, s.len() as isize, r))
                .map(Js)
        }
    }

    pub fn opt_string(self, s: Option<&str>) -> Result<Js> {
        match s {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    /// A `Uint8Array` over a fresh copy of `bytes`.
    pub fn uint8array(self, bytes: &[u8]) -> Result<Js> {
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let buffer: sys::napi_value =
            out!(r => sys::napi_create_arraybuffer(self.0, bytes.len(), &mut data, r))?;
        if !bytes.is_empty() {
            // SAFETY: Node allocated `bytes.len()` writable bytes at `data`
            // for the new ArrayBuffer; the regions cannot overlap.
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len()) };
        }
        out!(r => sys::napi_create_typedarray(
            self.0,
            sys::TypedarrayType::uint8_array,
            bytes.len(),
            buffer,
            0,
            r
        ))
        .map(Js)
    }

    pub fn array(self, len: usize) -> Result<Js> {
        out!(r => sys::napi_create_array_with_length(self.0, len, r)).map(Js)
    }

    pub fn set_element(self, array: Js, index: u32, value: Js) -> Result<()> {
        // SAFETY: live env and values of this call.
        check(unsafe { sys::napi_set_element(self.0, array.0, index, value.0) })
    }

    /// Calls `function` with `this` undefined and `args`.
    pub fn call(self, function: Js, args: &[sys::napi_value]) -> Result<Js> {
        let this = self.undefined()?;
        out!(r => sys::napi_call_function(self.0, this.0, function.0, args.len(), args.as_ptr(), r))
            .map(Js)
    }

    pub fn get_element(self, array: Js, index: u32) -> Result<Js> {
        out!(r => sys::napi_get_element(self.0, array.0, index, r)).map(Js)
    }

    pub fn array_length(self, array: Js) -> Result<u32> {
        out!(r => sys::napi_get_array_length(self.0, array.0, r))
    }

    pub fn type_of(self, value: Js) -> Result<sys::napi_valuetype> {
        out!(r => sys::napi_typeof(self.0, value.0, r))
    }

    pub fn get_f64(self, value: Js) -> Result<f64> {
        out!(r => sys::napi_get_value_double(self.0, value.0, r))
    }

    pub fn get_bool(self, value: Js) -> Result<bool> {
        out!(r => sys::napi_get_value_bool(self.0, value.0, r))
    }

    /// The BigInt as i64 and whether that was lossless.
    pub fn get_bigint(self, value: Js) -> Result<(i64, bool)> {
        let mut lossless = false;
        let v = out!(r => sys::napi_get_value_bigint_int64(self.0, value.0, r, &mut lossless))?;
        Ok((v, lossless))
    }

    pub fn get_string(self, value: Js) -> Result<String> {
        let len: usize = out!(r => sys::napi_get_value_string_utf8(
            self.0,
            value.0,
            ptr::null_mut(),
            0,
            r
        ))?;
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        // SAFETY: `buf` has room for `len` bytes plus the NUL Node writes.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                self.0,
                value.0,
                buf.as_mut_ptr() as *mut c_char,
                buf.len(),
                &mut written,
            )
        })?;
        buf.truncate(written);
        // Node writes valid UTF-8 (lone surrogates become U+FFFD).
        String::from_utf8(buf).map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
    }

    /// The bytes behind a TypedArray, DataView or ArrayBuffer, copied; `None`
    /// for any other value.
    pub fn view_bytes(self, value: Js) -> Result<Option<Vec<u8>>> {
        let is_typed: bool = out!(r => sys::napi_is_typedarray(self.0, value.0, r))?;
        let (data, len) = if is_typed {
            let mut kind = 0;
            let mut length = 0usize;
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut offset = 0usize;
            // SAFETY: live env; `value` is a TypedArray; out-pointers valid.
            check(unsafe {
                sys::napi_get_typedarray_info(
                    self.0,
                    value.0,
                    &mut kind,
                    &mut length,
                    &mut data,
                    ptr::null_mut(),
                    &mut offset,
                )
            })?;
            (data, length * element_size(kind))
        } else {
            let is_view: bool = out!(r => sys::napi_is_dataview(self.0, value.0, r))?;
            if !is_view {
                let is_buffer: bool = out!(r => sys::napi_is_arraybuffer(self.0, value.0, r))?;
                if !is_buffer {
                    return Ok(None);
                }
                let mut data: *mut std::ffi::c_void = ptr::null_mut();
                let length: usize =
                    out!(r => sys::napi_get_arraybuffer_info(self.0, value.0, &mut data, r))?;
                return Ok(Some(copy_bytes(data, length)));
            }
            let mut length = 0usize;
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut offset = 0usize;
            // SAFETY: live env; `value` is a DataView; out-pointers valid.
            check(unsafe {
                sys::napi_get_dataview_info(
                    self.0,
                    value.0,
                    &mut length,
                    &mut data,
                    ptr::null_mut(),
                    &mut offset,
                )
            })?;
            (data, length)
        };
        Ok(Some(copy_bytes(data, len)))
    }

    pub fn is_arraybuffer(self, value: Js) -> Result<bool> {
        out!(r => sys::napi_is_arraybuffer(self.0, value.0, r))
    }

    /// The bytes of a SharedArrayBuffer, copied; `None` for any other value.
    /// Node-API (before Node 24) has no accessor for them, so this views
    /// the buffer through a new `Uint8Array`. Only reached for objects that
    /// are no TypedArray, DataView or ArrayBuffer.
    pub fn shared_array_buffer_bytes(self, value: Js) -> Result<Option<Vec<u8>>> {
        let global = out!(r => sys::napi_get_global(self.0, r))?;
        let class = out!(r => sys::napi_get_named_property(
            self.0,
            global,
            c"SharedArrayBuffer".as_ptr(),
            r
        ))?;
        if self.type_of(Js(class))? != sys::ValueType::napi_function {
            return Ok(None);
        }
        let is_shared: bool = out!(r => sys::napi_instanceof(self.0, value.0, class, r))?;
        if !is_shared {
            return Ok(None);
        }
        let uint8 = out!(r => sys::napi_get_named_property(
            self.0,
            global,
            c"Uint8Array".as_ptr(),
            r
        ))?;
        let view = out!(r => sys::napi_new_instance(self.0, uint8, 1, &value.0, r))?;
        self.view_bytes(Js(view))
    }

    /// Own enumerable string keys, as `Object.keys` (what `node:sqlite`
    /// reads from a named-parameter object).
    pub fn own_keys(self, object: Js) -> Result<Js> {
        out!(r => sys::napi_get_all_property_names(
            self.0,
            object.0,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            r
        ))
        .map(Js)
    }

    pub fn get_property(self, object: Js, key: Js) -> Result<Js> {
        out!(r => sys::napi_get_property(self.0, object.0, key.0, r)).map(Js)
    }
}

/// Copies `len` bytes Node reported at `data` for a live buffer, at once,
/// before any JS can run and detach or resize it.
fn copy_bytes(data: *mut std::ffi::c_void, len: usize) -> Vec<u8> {
    if len == 0 || data.is_null() {
        return Vec::new();
    }
    // SAFETY: Node reported `data` (already offset to the view's start) and
    // `len` readable bytes inside a buffer that no JS can touch during this
    // native call.
    unsafe { std::slice::from_raw_parts(data as *const u8, len) }.to_vec()
}

fn element_size(kind: sys::napi_typedarray_type) -> usize {
    use sys::TypedarrayType as T;
    match kind {
        T::int16_array | T::uint16_array => 2,
        T::int32_array | T::uint32_array | T::float32_array => 4,
        T::float64_array | T::bigint64_array | T::biguint64_array => 8,
        _ => 1,
    }
}
