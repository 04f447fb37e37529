//! `db.serialize()` and `db.deserialize()`: each a writer job
//! (`Request::Serialize`, `Request::Deserialize`) completing under the
//! caller's call id. lib/image.js has checked the arguments and whether
//! the database may take an image; nothing here runs SQLite.

use napi::{Env, Result};
use napi_derive::napi;
use offloop_engine::Request;

use super::database::NativeDatabase;
use super::dispatch::{Cancel, Hold};
use super::js::{Cx, Js};

fn send(db: &NativeDatabase, id: f64, request: Request) {
    db.dispatcher
        .dispatch(request, id, 0, None, Cancel::Never, Hold::SendNow);
}

/// Schema `db_name`'s image, as a Uint8Array, under call `id`.
#[napi(catch_unwind)]
pub fn serialize(db: &NativeDatabase, id: f64, db_name: String) {
    send(db, id, Request::Serialize(db_name));
}

/// Replaces schema `db_name` with the image in `buffer` (its bytes copied
/// now, so the caller may change them at once).
#[napi(catch_unwind)]
pub fn deserialize(
    env: Env,
    db: &NativeDatabase,
    id: f64,
    buffer: Js,
    db_name: String,
) -> Result<()> {
    let image = Cx(env.raw()).view_bytes(buffer)?.unwrap_or_default();
    let request = Request::Deserialize {
        schema: db_name,
        image,
    };
    send(db, id, request);
    Ok(())
}
