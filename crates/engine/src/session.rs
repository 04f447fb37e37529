//! Sessions and changesets (`db.createSession()`, `db.applyChangeset()`):
//! SQLite's session extension on the writer's connection. This file owns
//! the writer's sessions, addressed by the ids their callers chose, and
//! applying a changeset with the caller's filter and conflict handlers. It
//! runs only on the writer's thread (every call here is a writer job) and
//! never decides what a handler answers: the handlers are
//! [`ScalarFunction`]s implemented outside the engine.
//!
//! SQLite is built with `SQLITE_ENABLE_SESSION` (see `.cargo/config.toml`);
//! rusqlite's `session` feature would need bindgen, so the few functions
//! used are declared here by hand, as `sqlite3session.h` declares them.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use rusqlite::ffi;

use crate::error::{cstr_to_string, Error, Result};
use crate::functions::{FunctionError, ScalarFunction};
use crate::value::Value;

/// `sqlite3_session`, opaque.
#[repr(C)]
struct RawSession {
    _opaque: [u8; 0],
}

/// `sqlite3_changeset_iter`, opaque.
#[repr(C)]
struct ChangesetIter {
    _opaque: [u8; 0],
}

type FilterFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type ConflictFn = unsafe extern "C" fn(*mut c_void, c_int, *mut ChangesetIter) -> c_int;

extern "C" {
    fn sqlite3session_create(
        db: *mut ffi::sqlite3,
        db_name: *const c_char,
        session: *mut *mut RawSession,
    ) -> c_int;
    fn sqlite3session_delete(session: *mut RawSession);
    fn sqlite3session_attach(session: *mut RawSession, table: *const c_char) -> c_int;
    fn sqlite3session_changeset(
        session: *mut RawSession,
        size: *mut c_int,
        changeset: *mut *mut c_void,
    ) -> c_int;
    fn sqlite3session_patchset(
        session: *mut RawSession,
        size: *mut c_int,
        patchset: *mut *mut c_void,
    ) -> c_int;
    fn sqlite3changeset_apply(
        db: *mut ffi::sqlite3,
        size: c_int,
        changeset: *mut c_void,
        filter: Option<FilterFn>,
        conflict: Option<ConflictFn>,
        context: *mut c_void,
    ) -> c_int;
}

/// `SQLITE_CHANGESET_ABORT`: what a conflict gets when nobody decides.
const CHANGESET_ABORT: c_int = 2;

/// What a caller asks of one session.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionRequest {
    /// Starts recording the changes to `table` (every table when `None`) of
    /// schema `db`, under `id`.
    Create {
        id: u64,
        db: String,
        table: Option<String>,
    },
    /// The changes recorded so far, as a changeset.
    Changeset(u64),
    /// The changes recorded so far, as a patchset.
    Patchset(u64),
    /// Stops recording and frees the session.
    Close(u64),
}

/// `applyChangeset`'s handlers. `filter` is called with a table's name
/// and answers whether its changes apply (truthy); `conflict` is called
/// with a conflict's kind (`SQLITE_CHANGESET_DATA`, ...) and answers
/// what to do (`SQLITE_CHANGESET_OMIT`, `REPLACE` or `ABORT`); without
/// it every conflict aborts. An error from either stops the apply, which
/// is then undone and fails with that error.
#[derive(Clone, Default)]
pub struct ChangesetHandlers {
    pub filter: Option<Arc<dyn ScalarFunction>>,
    pub conflict: Option<Arc<dyn ScalarFunction>>,
}

impl std::fmt::Debug for ChangesetHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangesetHandlers")
            .field("filter", &self.filter.is_some())
            .field("conflict", &self.conflict.is_some())
            .finish()
    }
}

/// The writer's sessions. Dropped before its connection closes (SQLite
/// requires every session deleted first; see the executor's field order).
#[derive(Default)]
pub struct Sessions {
    live: HashMap<u64, NonNull<RawSession>>,
}

impl Sessions {
    /// Whether any session is open (it lives on the connection).
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Runs `request` on the connection `db`, which owns every session
    /// here: the bytes a changeset or patchset asked for, else `None`.
    pub fn run(
        &mut self,
        db: *mut ffi::sqlite3,
        request: SessionRequest,
    ) -> Result<Option<Vec<u8>>> {
        match request {
            SessionRequest::Create {
                id,
                db: name,
                table,
            } => {
                let session = create(db, &name, table.as_deref())?;
                if let Some(old) = self.live.insert(id, session) {
                    // SAFETY: a session of this connection, no longer listed.
                    unsafe { sqlite3session_delete(old.as_ptr()) };
                }
                Ok(None)
            }
            SessionRequest::Changeset(id) => self.changes(id, sqlite3session_changeset),
            SessionRequest::Patchset(id) => self.changes(id, sqlite3session_patchset),
            SessionRequest::Close(id) => {
                let session = self.live.remove(&id).ok_or_else(not_open)?;
                // SAFETY: a session of this connection, removed from the list.
                unsafe { sqlite3session_delete(session.as_ptr()) };
                Ok(None)
            }
        }
    }

    fn changes(
        &self,
        id: u64,
        read: unsafe extern "C" fn(*mut RawSession, *mut c_int, *mut *mut c_void) -> c_int,
    ) -> Result<Option<Vec<u8>>> {
        let session = self.live.get(&id).ok_or_else(not_open)?;
        let mut size: c_int = 0;
        let mut bytes: *mut c_void = ptr::null_mut();
        // SAFETY: a live session of this thread's connection; SQLite fills
        // both out-pointers, and the buffer is ours to free.
        let rc = unsafe { read(session.as_ptr(), &mut size, &mut bytes) };
        if rc != ffi::SQLITE_OK {
            return Err(Error::sqlite(rc, Error::errstr(rc)));
        }
        let copy = if bytes.is_null() || size <= 0 {
            Vec::new()
        } else {
            // SAFETY: SQLite returned `size` readable bytes at `bytes`.
            unsafe { std::slice::from_raw_parts(bytes as *const u8, size as usize) }.to_vec()
        };
        // SAFETY: the buffer came from sqlite3_malloc (null is allowed).
        unsafe { ffi::sqlite3_free(bytes) };
        Ok(Some(copy))
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        for (_, session) in self.live.drain() {
            // SAFETY: each listed session belongs to the connection, which
            // is still open (it closes after this).
            unsafe { sqlite3session_delete(session.as_ptr()) };
        }
    }
}

fn not_open() -> Error {
    Error::invalid_state("session is not open")
}

fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::sqlite(ffi::SQLITE_MISUSE, "a name holds a NUL byte"))
}

fn create(db: *mut ffi::sqlite3, name: &str, table: Option<&str>) -> Result<NonNull<RawSession>> {
    let name = c_string(name)?;
    let table = table.map(c_string).transpose()?;
    let mut session = ptr::null_mut();
    // SAFETY: a live connection of this thread; the name outlives the call.
    let rc = unsafe { sqlite3session_create(db, name.as_ptr(), &mut session) };
    let session = match NonNull::new(session) {
        Some(s) if rc == ffi::SQLITE_OK => s,
        _ => return Err(Error::sqlite(rc, Error::errstr(rc))),
    };
    let table_ptr = table.as_ref().map_or(ptr::null(), |t| t.as_ptr());
    // SAFETY: the session just created; a null table attaches every table.
    let rc = unsafe { sqlite3session_attach(session.as_ptr(), table_ptr) };
    if rc != ffi::SQLITE_OK {
        // SAFETY: the session just created, listed nowhere.
        unsafe { sqlite3session_delete(session.as_ptr()) };
        return Err(Error::sqlite(rc, Error::errstr(rc)));
    }
    Ok(session)
}

/// What the C callbacks of one apply share: the handlers, and the first
/// error one of them reported (after which nothing more applies).
struct ApplyContext<'a> {
    handlers: &'a ChangesetHandlers,
    error: Option<FunctionError>,
}

impl ApplyContext<'_> {
    fn ask(&mut self, handler: &Arc<dyn ScalarFunction>, arg: Value) -> Option<Value> {
        let answer = catch_unwind(AssertUnwindSafe(|| handler.call(vec![arg])))
            .unwrap_or_else(|_| Err("offloop internal error: a changeset handler panicked".into()));
        match answer {
            Ok(value) => Some(value),
            Err(error) => {
                self.error = Some(error);
                None
            }
        }
    }
}

unsafe extern "C" fn filter_table(context: *mut c_void, table: *const c_char) -> c_int {
    // SAFETY: `context` is the ApplyContext `apply_changeset` passed, alive
    // and used by this thread only for the length of the apply.
    let context = unsafe { &mut *(context as *mut ApplyContext<'_>) };
    let Some(filter) = context.handlers.filter.clone() else {
        return 1;
    };
    if context.error.is_some() {
        return 0;
    }
    // SAFETY: SQLite passes the table's NUL-terminated name.
    let table = unsafe { cstr_to_string(table) };
    // Zero and NULL skip the table; any other answer applies it.
    let applies = match context.ask(&filter, Value::Text(table)) {
        Some(Value::Integer(v)) => v != 0,
        Some(Value::Real(v)) => v != 0.0,
        Some(Value::Null) | None => false,
        Some(_) => true,
    };
    c_int::from(applies)
}

unsafe extern "C" fn on_conflict(
    context: *mut c_void,
    kind: c_int,
    _: *mut ChangesetIter,
) -> c_int {
    // SAFETY: as in `filter_table`.
    let context = unsafe { &mut *(context as *mut ApplyContext<'_>) };
    let Some(conflict) = context.handlers.conflict.clone() else {
        return CHANGESET_ABORT;
    };
    if context.error.is_some() {
        return CHANGESET_ABORT;
    }
    match context.ask(&conflict, Value::Integer(kind.into())) {
        Some(Value::Integer(v)) => c_int::try_from(v).unwrap_or(-1),
        // The caller hands over an int32 as a number; anything else is
        // an answer SQLite refuses (SQLITE_MISUSE), as node:sqlite's.
        Some(Value::Real(v)) if v.fract() == 0.0 && v.abs() <= f64::from(c_int::MAX) => v as c_int,
        Some(_) => -1,
        None => CHANGESET_ABORT,
    }
}

/// Applies `changeset` on the connection `db`: true when it applied,
/// false when a conflict aborted it (nothing applied).
/// A handler's error undoes what applied and is returned.
pub fn apply_changeset(
    db: *mut ffi::sqlite3,
    changeset: &[u8],
    handlers: &ChangesetHandlers,
    exec: impl Fn(&str) -> Result<()>,
) -> Result<bool> {
    let size = c_int::try_from(changeset.len())
        .map_err(|_| Error::sqlite(ffi::SQLITE_TOOBIG, Error::errstr(ffi::SQLITE_TOOBIG)))?;
    let mut context = ApplyContext {
        handlers,
        error: None,
    };
    // A filter's error cannot abort the apply the way a conflict's can:
    // the savepoint undoes what applied before it.
    exec("SAVEPOINT offloop_apply_changeset")?;
    // SAFETY: a live connection of this thread; SQLite only reads the
    // changeset (the pointer is not const in its declaration); `context`
    // outlives the call, and the callbacks use it on this thread only.
    let rc = unsafe {
        sqlite3changeset_apply(
            db,
            size,
            changeset.as_ptr() as *mut c_void,
            handlers.filter.as_ref().map(|_| filter_table as FilterFn),
            Some(on_conflict as ConflictFn),
            &mut context as *mut ApplyContext<'_> as *mut c_void,
        )
    };
    let result = match (context.error.take(), rc) {
        (Some(error), _) => Err(Error::sqlite(ffi::SQLITE_ERROR, error)),
        (None, ffi::SQLITE_OK) => Ok(true),
        (None, ffi::SQLITE_ABORT) => Ok(false),
        (None, rc) => Err(Error::sqlite(rc, Error::errstr(rc))),
    };
    let end = if result.is_err() {
        "ROLLBACK TO offloop_apply_changeset; RELEASE offloop_apply_changeset"
    } else {
        "RELEASE offloop_apply_changeset"
    };
    exec(end)?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    const SCHEMA: &str = "CREATE TABLE a(id INTEGER PRIMARY KEY, v); \
                          CREATE TABLE b(id INTEGER PRIMARY KEY, v)";

    struct Answer(std::result::Result<Value, FunctionError>);

    impl ScalarFunction for Answer {
        fn call(&self, _: Vec<Value>) -> std::result::Result<Value, FunctionError> {
            self.0.clone()
        }
    }

    /// A changeset of one insert into each table.
    fn recorded() -> Vec<u8> {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        // SAFETY: a live connection used on this thread only.
        let db = unsafe { conn.handle() };
        let mut sessions = Sessions::default();
        let create = SessionRequest::Create {
            id: 1,
            db: "main".into(),
            table: None,
        };
        sessions.run(db, create).unwrap();
        conn.execute_batch("INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (1, 'y')")
            .unwrap();
        sessions
            .run(db, SessionRequest::Changeset(1))
            .unwrap()
            .expect("a changeset is bytes")
    }

    fn apply(conn: &Connection, changeset: &[u8], handlers: &ChangesetHandlers) -> Result<bool> {
        // SAFETY: a live connection used on this thread only.
        let db = unsafe { conn.handle() };
        apply_changeset(db, changeset, handlers, |sql| {
            conn.execute_batch(sql).map_err(Error::from)
        })
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row(
            "SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn a_recorded_changeset_applies_elsewhere_and_then_conflicts_abort() {
        let changeset = recorded();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let none = ChangesetHandlers::default();
        assert!(apply(&conn, &changeset, &none).unwrap());
        assert_eq!(count(&conn), 2);
        assert!(!apply(&conn, &changeset, &none).unwrap());
    }

    #[test]
    fn a_handler_error_undoes_the_tables_applied_before_it() {
        let changeset = recorded();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        // The first table applies, the second table's filter fails.
        struct SecondFails(std::sync::atomic::AtomicU32);
        impl ScalarFunction for SecondFails {
            fn call(&self, _: Vec<Value>) -> std::result::Result<Value, FunctionError> {
                match self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
                    0 => Ok(Value::Integer(1)),
                    _ => Err("the filter failed".into()),
                }
            }
        }
        let handlers = ChangesetHandlers {
            filter: Some(Arc::new(SecondFails(Default::default()))),
            conflict: None,
        };
        let error = apply(&conn, &changeset, &handlers).unwrap_err();
        assert_eq!(error.to_string(), "the filter failed");
        assert_eq!(count(&conn), 0);
    }

    #[test]
    fn a_conflict_answer_sqlite_refuses_is_its_misuse_error() {
        let changeset = recorded();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch("INSERT INTO a VALUES (1, 'taken')")
            .unwrap();
        let handlers = ChangesetHandlers {
            filter: None,
            conflict: Some(Arc::new(Answer(Ok(Value::Real(99.0))))),
        };
        let error = apply(&conn, &changeset, &handlers).unwrap_err();
        assert!(matches!(
            error,
            Error::Sqlite {
                code: ffi::SQLITE_MISUSE,
                ..
            }
        ));
        assert_eq!(count(&conn), 1, "nothing applied");
    }

    #[test]
    fn a_closed_session_is_not_open() {
        let conn = Connection::open_in_memory().unwrap();
        // SAFETY: a live connection used on this thread only.
        let db = unsafe { conn.handle() };
        let mut sessions = Sessions::default();
        let error = sessions.run(db, SessionRequest::Close(7)).unwrap_err();
        assert_eq!(error, not_open());
    }
}
