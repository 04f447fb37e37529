//! JS call arguments to engine parameters, with `node:sqlite`'s type rules.
//! A value that cannot be bound is reported here, on the JS thread, so the
//! call throws synchronously as it would in `node:sqlite`.

use napi::{sys, Result};
use offloop_engine::{Params, Sql, Value};

use super::js::{Cx, Js};

/// A misuse to throw as a Node error (`code`, message).
pub struct ArgError {
    pub code: &'static str,
    pub message: String,
}

/// Reads `args` (a JS array): a leading plain object is the named
/// parameters, everything after it fills the anonymous slots in order.
pub fn read_params(cx: Cx, sql: &Sql, args: Js) -> Result<std::result::Result<Params, ArgError>> {
    let count = cx.array_length(args)?;
    let mut params = Params::default();
    let mut start = 0;
    if count > 0 {
        let first = cx.get_element(args, 0)?;
        if cx.type_of(first)? == sys::ValueType::napi_object && cx.view_bytes(first)?.is_none() {
            let keys = cx.own_keys(first)?;
            let key_count = cx.array_length(keys)?;
            let mut named = Vec::with_capacity(key_count as usize);
            for k in 0..key_count {
                let key = cx.get_element(keys, k)?;
                let name = cx.get_string(key)?;
                let value = cx.get_property(first, key)?;
                match read_value(cx, value)? {
                    Ok(v) => named.push((name, v)),
                    Err(kind) => {
                        return Ok(Err(kind.error(named_index(sql, &name, k as usize))));
                    }
                }
            }
            params.named = Some(named);
            start = 1;
        }
    }
    let mut anonymous = Vec::with_capacity((count - start) as usize);
    for i in start..count {
        let value = cx.get_element(args, i)?;
        match read_value(cx, value)? {
            Ok(v) => anonymous.push(v),
            Err(kind) => {
                return Ok(Err(kind.error(anonymous_index(sql, (i - start) as usize))));
            }
        }
    }
    params.anonymous = anonymous;
    Ok(Ok(params))
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
/// when integral, a BigInt is INTEGER, a boolean is 1 or 0, views are BLOBs.
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
            Some(bytes) => Value::Blob(bytes),
            None => return Ok(Err(Unbindable::Type)),
        },
        _ => return Ok(Err(Unbindable::Type)),
    }))
}

/// The 1-based parameter index an anonymous value lands in: the `n`-th `?`
/// or `?NNN` slot. Exact once the statement has been prepared; before that,
/// the statement is assumed to have no named slots.
fn anonymous_index(sql: &Sql, n: usize) -> usize {
    match sql.parameters() {
        Some(names) => names
            .iter()
            .enumerate()
            .filter(|(_, name)| name.as_deref().is_none_or(|n| n.starts_with('?')))
            .nth(n)
            .map_or(names.len() + 1 + n, |(i, _)| i + 1),
        None => n + 1,
    }
}

/// The index a named key binds to, as `node:sqlite` resolves it (exact key,
/// then the bare forms). Before the statement was ever prepared, the key's
/// position stands in.
fn named_index(sql: &Sql, key: &str, position: usize) -> usize {
    let Some(names) = sql.parameters() else {
        return position + 1;
    };
    let matches = |name: &Option<String>| match name {
        Some(name) => name == key || (name.len() > 1 && &name[1..] == key),
        None => false,
    };
    names.iter().position(matches).map_or(0, |i| i + 1)
}
