//! What `db.limits`, `db.enableDefensive()`, `db.setAuthorizer()` and
//! `db.loadExtension()` ask of every connection: turned into engine changes
//! (`offloop_engine::Change`) or, for an extension, a job on the writer. Validation and the JS-side
//! state (`db.limits`' values, whether loading is allowed) live in
//! lib/connection-changes.js; nothing here runs SQLite on the JS thread.

use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use offloop_engine::{self as engine, Change, Request, UserAuthorizer};

use super::database::NativeDatabase;
use super::dispatch::{Cancel, Hold};
use super::functions::handler;
use super::js::{Cx, Js};
use super::protocol;

/// The value of each limit (`protocol::limit`, by number) on a new
/// connection: its default and its ceiling.
#[napi(catch_unwind)]
pub fn limit_defaults() -> Result<Vec<i32>> {
    engine::limit_defaults(protocol::limit::COUNT as i32)
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}

/// Sets limit `id` (`protocol::limit`) to `value` on every connection.
#[napi(catch_unwind)]
pub fn set_limit(db: &NativeDatabase, id: u32, value: i32) -> Result<()> {
    if id >= protocol::limit::COUNT {
        return Err(Error::new(Status::InvalidArg, "unknown limit"));
    }
    db.engine().change(Change::Limit {
        id: id as i32,
        value,
    });
    Ok(())
}

/// Turns SQLite's defensive mode on or off on every connection.
#[napi(catch_unwind)]
pub fn set_defensive(db: &NativeDatabase, on: bool) {
    db.engine().change(Change::Defensive(on));
}

/// Puts `callback` (a function, or null for none) after offloop's own
/// authorizer on every connection; lib/authorizer.js has made its answers
/// 0, 1 or 2. It runs on the JS thread through the reverse path while the
/// connection preparing a statement waits.
#[napi(catch_unwind)]
pub fn set_authorizer(env: Env, db: &NativeDatabase, callback: Js) -> Result<()> {
    let cx = Cx(env.raw());
    let user = if cx.type_of(callback)? == napi::sys::ValueType::napi_function {
        Some(UserAuthorizer(handler(cx, callback)?))
    } else {
        None
    };
    db.engine().change(Change::Authorizer(user));
    Ok(())
}

/// Loads an extension on the writer; `id` completes when it has (or
/// failed). The other connections load it before their next job.
#[napi(catch_unwind)]
pub fn load_extension(db: &NativeDatabase, id: f64, path: String, entry_point: Option<String>) {
    db.dispatcher.dispatch(
        Request::LoadExtension { path, entry_point },
        id,
        0,
        None,
        Cancel::Never,
        Hold::SendNow,
    );
}
