//! `db.createSession()`, a session's `changeset()`, `patchset()` and
//! `close()`, and `db.applyChangeset()`: each a writer job
//! (`offloop_engine::SessionRequest`, `Request::ApplyChangeset`) completing
//! under the caller's call id. A changeset's `filter` and `onConflict` run
//! on the JS thread through the reverse path (`functions::handler`), while
//! the writer waits for each answer; the deadlock rules of `functions.rs`
//! hold for them as for user functions. Nothing here runs SQLite.

use std::sync::atomic::{AtomicU64, Ordering};

use napi::{Env, Result};
use napi_derive::napi;
use offloop_engine::{ChangesetHandlers, Request, SessionRequest};

use super::database::NativeDatabase;
use super::dispatch::{Cancel, Hold};
use super::functions::handler;
use super::js::{Cx, Js};
use super::protocol;

/// Session ids, unique in the process, so one never names another
/// database's session either.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

fn send(db: &NativeDatabase, id: f64, request: Request) {
    db.dispatcher
        .dispatch(request, id, 0, None, Cancel::Never, Hold::SendNow);
}

/// Starts a session recording the changes to `table` (every table when
/// absent) of schema `db_name` on the writer; `id` completes once it
/// records. Returns the session's id for `session_call`.
#[napi(catch_unwind)]
pub fn create_session(db: &NativeDatabase, id: f64, db_name: String, table: Option<String>) -> f64 {
    let session = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
    let request = SessionRequest::Create {
        id: session,
        db: db_name,
        table,
    };
    send(db, id, Request::Session(request));
    session as f64
}

/// `kind` (`protocol::session`) of session `session`: its changeset, its
/// patchset, or its end.
#[napi(catch_unwind)]
pub fn session_call(db: &NativeDatabase, id: f64, session: f64, kind: u32) {
    let session = session as u64;
    let request = match kind {
        protocol::session::CHANGESET => SessionRequest::Changeset(session),
        protocol::session::PATCHSET => SessionRequest::Patchset(session),
        _ => SessionRequest::Close(session),
    };
    send(db, id, Request::Session(request));
}

/// Applies `changeset` (its bytes, copied now) on the writer; `filter`
/// and `conflict` are functions or undefined (lib/session.js has made
/// their answers plain numbers).
#[napi(catch_unwind)]
pub fn apply_changeset(
    env: Env,
    db: &NativeDatabase,
    id: f64,
    changeset: Js,
    filter: Js,
    conflict: Js,
) -> Result<()> {
    let cx = Cx(env.raw());
    let changeset = cx.view_bytes(changeset)?.unwrap_or_default();
    let optional = |f: Js| -> Result<_> {
        if cx.type_of(f)? == napi::sys::ValueType::napi_function {
            handler(cx, f).map(Some)
        } else {
            Ok(None)
        }
    };
    let handlers = ChangesetHandlers {
        filter: optional(filter)?,
        conflict: optional(conflict)?,
    };
    send(
        db,
        id,
        Request::ApplyChangeset {
            changeset,
            handlers,
        },
    );
    Ok(())
}
