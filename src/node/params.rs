//! JS call arguments to engine parameters, with `node:sqlite`'s type rules.
//! A value that cannot be bound is reported here, on the JS thread, so the
//! call throws synchronously as it would in `node:sqlite`.

use std::borrow::Cow;

use napi::{sys, Result};
use offloop_engine::{Params, Sql, Value};

use super::js::{Cx, Js};

/// A misuse to throw as a Node error (`code`, message).
pub struct ArgError {
    pub code: &'static str,
    pub message: String,
}

/// A call's arguments: a JS array, or values a native function received
/// as its own arguments (no element reads through Node-API, which cost a
/// property lookup each).
#[derive(Clone, Copy)]
pub enum Args<'a> {
    Array(Js),
    Values(&'a [sys::napi_value]),
}

impl Args<'_> {
    fn len(self, cx: Cx) -> Result<u32> {
        match self {
            Args::Array(array) => cx.array_length(array),
            Args::Values(values) => Ok(values.len() as u32),
        }
    }

    fn get(self, cx: Cx, index: u32) -> Result<Js> {
        match self {
            Args::Array(array) => cx.get_element(array, index),
            Args::Values(values) => Ok(Js(values[index as usize])),
        }
    }
}

/// Reads `args`: a leading object (not a buffer or view) is the named
/// parameters, everything after it fills the anonymous slots in order.
/// Values are checked in the order `node:sqlite` binds them, so the same
/// argument is reported, with the same parameter index.
pub fn read_params(
    cx: Cx,
    sql: &Sql,
    args: Args<'_>,
) -> Result<std::result::Result<Params, ArgError>> {
    let count = args.len(cx)?;
    // Known once any connection prepared the statement, scanned from its
    // text before that: the same answer either way, so the error a call
    // gets never depends on whether the text ran before.
    let names = if count > 0 {
        parameters(sql)
    } else {
        Cow::Borrowed(&[][..])
    };
    let mut params = Params::default();
    let mut start = 0;
    if count > 0 {
        let first = args.get(cx, 0)?;
        // node:sqlite takes any object as the map, functions included.
        let is_object = matches!(
            cx.type_of(first)?,
            sys::ValueType::napi_object | sys::ValueType::napi_function
        );
        if is_object && cx.view_bytes(first)?.is_none() {
            let keys = cx.own_keys(first)?;
            let key_count = cx.array_length(keys)?;
            // A SharedArrayBuffer has no own keys and binds as a BLOB.
            if key_count > 0 || cx.shared_array_buffer_bytes(first)?.is_none() {
                let mut named = Vec::with_capacity(key_count as usize);
                for k in 0..key_count {
                    let key = cx.get_element(keys, k)?;
                    let name = cx.get_string(key)?;
                    let value = cx.get_property(first, key)?;
                    match read_value(cx, value)? {
                        Ok(v) => named.push((name, v)),
                        // node:sqlite never converts the value of a key that
                        // names no parameter: binding reports the key as
                        // unknown, or skips it when unknown keys are allowed.
                        Err(_) if named_index(&names, &name) == 0 => {
                            named.push((name, Value::Null))
                        }
                        Err(kind) => {
                            let index = named_index(&names, &name);
                            return Ok(Err(kind.error(index)));
                        }
                    }
                }
                params.named = Some(named);
                start = 1;
            }
        }
    }
    let mut anonymous = Vec::with_capacity((count - start) as usize);
    // Once a value lands past the last parameter, binding fails there with
    // SQLITE_RANGE and node:sqlite never looks at the values after it.
    let mut past_end = false;
    for i in start..count {
        let value = args.get(cx, i)?;
        if past_end {
            anonymous.push(Value::Null);
            continue;
        }
        let n = (i - start) as usize;
        match read_value(cx, value)? {
            Ok(v) => {
                past_end = anonymous_index(&names, n) > names.len();
                anonymous.push(v)
            }
            Err(kind) => {
                let index = anonymous_index(&names, n);
                return Ok(Err(kind.error(index)));
            }
        }
    }
    params.anonymous = anonymous;
    Ok(Ok(params))
}

/// The statement's parameter names by index: known exactly once any
/// connection prepared it, otherwise read from the SQL text.
fn parameters(sql: &Sql) -> Cow<'_, [Option<String>]> {
    match sql.parameters() {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(scan_parameters(sql.text())),
    }
}

enum Unbindable {
    Type,
    BigIntRange,
}

impl Unbindable {
    fn error(self, index: usize) -> ArgError {
        match self {
            Unbindable::Type => ArgError {
                code: "ERR_INVALID_ARG_TYPE",
                message: format!("Provided value cannot be bound to SQLite parameter {index}."),
            },
            Unbindable::BigIntRange => ArgError {
                // node:sqlite names no parameter here.
                code: "ERR_INVALID_ARG_VALUE",
                message: "BigInt value is too large to bind.".to_string(),
            },
        }
    }
}

/// One JS value as SQLite binds it in `node:sqlite`: a number is REAL even
/// when integral, a BigInt is INTEGER, a boolean is 1 or 0, views and
/// buffers are BLOBs, except that an empty ArrayBuffer or SharedArrayBuffer
/// binds NULL (node:sqlite passes SQLite its null data pointer).
fn read_value(cx: Cx, value: Js) -> Result<std::result::Result<Value, Unbindable>> {
    use sys::ValueType as T;
    Ok(Ok(match cx.type_of(value)? {
        T::napi_number => Value::Real(cx.get_f64(value)?),
        T::napi_string => Value::Text(cx.get_string(value)?),
        T::napi_null => Value::Null,
        T::napi_boolean => Value::Integer(cx.get_bool(value)? as i64),
        T::napi_bigint => match cx.get_bigint(value)? {
            (v, true) => Value::Integer(v),
            (_, false) => return Ok(Err(Unbindable::BigIntRange)),
        },
        T::napi_object => match cx.view_bytes(value)? {
            Some(bytes) if bytes.is_empty() && cx.is_arraybuffer(value)? => Value::Null,
            Some(bytes) => Value::Blob(bytes),
            None => match cx.shared_array_buffer_bytes(value)? {
                Some(bytes) if bytes.is_empty() => Value::Null,
                Some(bytes) => Value::Blob(bytes),
                None => return Ok(Err(Unbindable::Type)),
            },
        },
        _ => return Ok(Err(Unbindable::Type)),
    }))
}

/// The 1-based parameter index the `n`-th anonymous value lands in, as
/// node:sqlite walks the slots: `?` and `?NNN` slots in index order, named
/// ones skipped, and past the last parameter one index per value.
fn anonymous_index(names: &[Option<String>], n: usize) -> usize {
    let mut slots = 0;
    for (i, name) in names.iter().enumerate() {
        if name.as_deref().is_none_or(|name| name.starts_with('?')) {
            if slots == n {
                return i + 1;
            }
            slots += 1;
        }
    }
    names.len() + 1 + (n - slots)
}

/// The index a named key binds to, as `node:sqlite` resolves it (the exact
/// name, then the name without its prefix); 0 when it names no parameter.
fn named_index(names: &[Option<String>], key: &str) -> usize {
    let exact = names.iter().position(|name| name.as_deref() == Some(key));
    let bare = || {
        names.iter().position(|name| {
            name.as_deref()
                .is_some_and(|name| name.len() > 1 && &name[1..] == key)
        })
    };
    exact.or_else(bare).map_or(0, |i| i + 1)
}

/// The parameters of the first statement in `sql`, by index as SQLite
/// numbers them (`None` for an anonymous `?`), found by scanning the text
/// as SQLite's tokenizer does. Used only to name the parameter in an
/// argument error before the statement was ever prepared.
fn scan_parameters(sql: &str) -> Vec<Option<String>> {
    // SQLite's IdChar: ASCII letters and digits, '_', '$' and any byte of a
    // multi-byte UTF-8 character.
    fn id_char(c: u8) -> bool {
        c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
    }
    let b = sql.as_bytes();
    let mut names: Vec<Option<String>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b'\'' | b'"' | b'`' | b'[' => {
                let close = if c == b'[' { b']' } else { c };
                i += 1;
                while i < b.len() {
                    if b[i] == close {
                        // A doubled quote is an escaped one ('it''s').
                        if close != b']' && b.get(i + 1) == Some(&close) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b';' => break,
            b'?' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i == start + 1 {
                    names.push(None);
                    continue;
                }
                // An out-of-range number fails to prepare; stop there.
                let Ok(n) = sql[start + 1..i].parse::<usize>() else {
                    break;
                };
                if n == 0 || n > 32766 {
                    break;
                }
                if n > names.len() {
                    names.resize(n, None);
                }
                if names[n - 1].is_none() {
                    names[n - 1] = Some(sql[start..i].to_string());
                }
            }
            b'$' | b'@' | b':' | b'#' => {
                let start = i;
                let mut chars = 0;
                i += 1;
                while i < b.len() {
                    if id_char(b[i]) {
                        chars += 1;
                        i += 1;
                    } else if b[i] == b'(' && chars > 0 {
                        // Tcl-style `$a(x)`.
                        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b')' {
                            i += 1;
                        }
                        if i < b.len() && b[i] == b')' {
                            i += 1;
                        }
                        break;
                    } else if b[i] == b':' && b.get(i + 1) == Some(&b':') {
                        // Tcl-style `$a::b`.
                        i += 2;
                    } else {
                        break;
                    }
                }
                if chars > 0 {
                    let name = &sql[start..i];
                    if !names.iter().any(|n| n.as_deref() == Some(name)) {
                        names.push(Some(name.to_string()));
                    }
                }
            }
            // Identifiers and numbers, which may hold '$'.
            c if id_char(c) => {
                while i < b.len() && id_char(b[i]) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    names
}
