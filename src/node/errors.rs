//! Engine errors as the tuples lib/errors.js turns into JS errors
//! (`protocol::error` names each position), and a value a user function
//! threw, handed back as it is. It builds values only; it never throws.

use napi::Result;
use offloop_engine as engine;

pub use super::protocol::error as error_slot;

use super::js::{Cx, Js};
use super::thrown::{take_thrown, THROWN_CODE};

/// `[code, message, errcode, errstr, sqliteCode]`; the last three are null
/// unless SQLite produced the error. A failed batch adds the failing
/// statement's index as a sixth element.
pub fn error_to_js(cx: Cx, error: &engine::Error) -> Result<Js> {
    // What a user function threw is rejected with as it is.
    if let Some(thrown) = take_thrown(cx, error)? {
        let out = cx.array(2)?;
        cx.set_element(out, error_slot::CODE, cx.string(THROWN_CODE)?)?;
        cx.set_element(out, error_slot::MESSAGE, thrown)?;
        return Ok(out);
    }
    let out = cx.array(5)?;
    let (code, errcode) = match error {
        engine::Error::Sqlite { code, .. } => ("ERR_SQLITE_ERROR", Some(*code)),
        engine::Error::Misuse { code, .. } => (*code, None),
        engine::Error::Aborted { .. } => ("ABORT_ERR", None),
        engine::Error::Panic { .. } => ("ERR_OFFLOOP_INTERNAL", None),
    };
    cx.set_element(out, error_slot::CODE, cx.string(code)?)?;
    cx.set_element(out, error_slot::MESSAGE, cx.string(&error.to_string())?)?;
    match errcode {
        Some(errcode) => {
            let errstr = engine::Error::errstr(errcode);
            let name = engine::result_code_name(errcode);
            cx.set_element(out, error_slot::ERRCODE, cx.number(errcode as f64)?)?;
            cx.set_element(out, error_slot::ERRSTR, cx.string(&errstr)?)?;
            cx.set_element(out, error_slot::SQLITE_CODE, cx.string(name)?)?;
        }
        None => {
            for slot in [
                error_slot::ERRCODE,
                error_slot::ERRSTR,
                error_slot::SQLITE_CODE,
            ] {
                cx.set_element(out, slot, cx.null()?)?;
            }
        }
    }
    Ok(out)
}
