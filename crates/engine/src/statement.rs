//! `RawStatement`: one prepared statement, stepped by hand.
//!
//! rusqlite's `Statement` borrows its connection and resets itself when its
//! `Rows` drop, which makes a cursor that lives across jobs impossible to
//! hold. This small wrapper over the C API owns its `sqlite3_stmt` and lives
//! on the thread of the connection that prepared it; it is never sent.

use std::collections::HashMap;
use std::os::raw::{c_char, c_int};
use std::ptr::NonNull;
use std::sync::Arc;

use rusqlite::ffi;

use crate::error::{cstr_to_string, Error, Result};
use crate::value::{BindOptions, Params, Value};

pub struct RawStatement {
    db: *mut ffi::sqlite3,
    stmt: NonNull<ffi::sqlite3_stmt>,
    /// Bare name (`id`) to full name (`$id`), built on the first bind that
    /// needs it, as `node:sqlite` does; a conflict is reported then.
    bare_names: Option<std::result::Result<HashMap<String, String>, Error>>,
    /// The result columns' names with SQLite's count of the times it
    /// prepared this statement again (a changed schema can change what a
    /// `SELECT *` returns): read once per preparation, not once per call.
    columns: Option<(c_int, Arc<[String]>)>,
}

impl RawStatement {
    /// Prepares the first statement of `sql`. `Ok(None)` when `sql` holds no
    /// statement at all (only whitespace or comments).
    ///
    /// # Safety
    /// `db` must be a live connection owned by the calling thread, and must
    /// outlive the returned statement.
    pub unsafe fn prepare(db: *mut ffi::sqlite3, sql: &str) -> Result<Option<RawStatement>> {
        let mut stmt = std::ptr::null_mut();
        let len = c_int::try_from(sql.len())
            .map_err(|_| Error::sqlite(ffi::SQLITE_TOOBIG, "string or blob too big"))?;
        // SAFETY: `db` is live per the caller; the SQL pointer and length
        // describe a valid UTF-8 buffer that SQLite only reads during the
        // call; `stmt` receives an owned handle or NULL.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                db,
                sql.as_ptr() as *const c_char,
                len,
                &mut stmt,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            // SAFETY: `db` is live and the error belongs to the call above.
            return Err(match unsafe { Error::from_handle(db) } {
                // Given a length, SQLite refuses a text over the SQL length
                // limit as "statement too long"; node:sqlite gives it a
                // NUL-terminated text, where SQLite's tokenizer reports the
                // same limit as "string or blob too big". Same code either
                // way.
                Error::Sqlite { code, message }
                    if code & 0xff == ffi::SQLITE_TOOBIG && message == "statement too long" =>
                {
                    Error::sqlite(code, "string or blob too big")
                }
                other => other,
            });
        }
        Ok(NonNull::new(stmt).map(|stmt| RawStatement {
            db,
            stmt,
            bare_names: None,
            columns: None,
        }))
    }

    fn ptr(&self) -> *mut ffi::sqlite3_stmt {
        self.stmt.as_ptr()
    }

    fn last_error(&self) -> Error {
        // SAFETY: `self.db` outlives the statement (prepare's contract).
        unsafe { Error::from_handle(self.db) }
    }

    pub fn readonly(&self) -> bool {
        // SAFETY: `self.ptr()` is a live statement handle.
        unsafe { ffi::sqlite3_stmt_readonly(self.ptr()) != 0 }
    }

    pub fn parameter_count(&self) -> c_int {
        // SAFETY: live statement handle.
        unsafe { ffi::sqlite3_bind_parameter_count(self.ptr()) }
    }

    /// The name of parameter `index` (1-based), `None` for an anonymous `?`.
    pub fn parameter_name(&self, index: c_int) -> Option<String> {
        // SAFETY: live handle; the name is owned by the statement and copied.
        let name = unsafe { ffi::sqlite3_bind_parameter_name(self.ptr(), index) };
        if name.is_null() {
            None
        } else {
            // SAFETY: non-null names are NUL-terminated.
            Some(unsafe { cstr_to_string(name) })
        }
    }

    fn parameter_index(&self, name: &str) -> c_int {
        let Ok(name) = std::ffi::CString::new(name) else {
            return 0;
        };
        // SAFETY: live handle and a NUL-terminated name read during the call.
        unsafe { ffi::sqlite3_bind_parameter_index(self.ptr(), name.as_ptr()) }
    }

    /// Binds a call's parameters with `node:sqlite`'s rules: clear every
    /// binding, bind the named object key by key, then the anonymous values
    /// into the slots that have no name, in order. A missing parameter stays
    /// NULL; an extra anonymous value is SQLite's `SQLITE_RANGE`.
    /// (Node 24.22's `node:sqlite` is the reference for every rule here.)
    pub fn bind(&mut self, params: &Params, options: BindOptions) -> Result<()> {
        // SAFETY: live handle.
        let rc = unsafe { ffi::sqlite3_clear_bindings(self.ptr()) };
        if rc != ffi::SQLITE_OK {
            return Err(self.last_error());
        }
        if let Some(named) = &params.named {
            if options.allow_bare_named {
                // node:sqlite refuses every named call of a statement whose
                // bare names clash, even when each key is fully prefixed.
                if self.bare_names.is_none() {
                    self.bare_names = Some(self.collect_bare_names());
                }
                if let Some(Err(conflict)) = &self.bare_names {
                    return Err(conflict.clone());
                }
            }
            for (key, value) in named {
                let mut index = self.parameter_index(key);
                if index == 0 && options.allow_bare_named {
                    if let Some(Ok(map)) = &self.bare_names {
                        if let Some(full) = map.get(key) {
                            index = self.parameter_index(full);
                        }
                    }
                }
                if index == 0 {
                    if options.allow_unknown_named {
                        continue;
                    }
                    return Err(Error::invalid_state(format!(
                        "Unknown named parameter '{key}'"
                    )));
                }
                self.bind_value(index, value)?;
            }
        }
        // Anonymous values fill `?` and `?NNN` slots in index order; `:a`,
        // `@a` and `$a` slots are only reachable by name.
        let mut index: c_int = 1;
        for value in &params.anonymous {
            while self
                .parameter_name(index)
                .is_some_and(|name| !name.starts_with('?'))
            {
                index += 1;
            }
            self.bind_value(index, value)?;
            index += 1;
        }
        Ok(())
    }

    fn collect_bare_names(&self) -> std::result::Result<HashMap<String, String>, Error> {
        let mut map: HashMap<String, String> = HashMap::new();
        for i in 1..=self.parameter_count() {
            let Some(full) = self.parameter_name(i) else {
                continue;
            };
            let bare = full.chars().skip(1).collect::<String>();
            match map.get(&bare) {
                Some(existing) if *existing != full => {
                    return Err(Error::invalid_state(format!(
                        "Cannot create bare named parameter '{bare}' because of conflicting names '{existing}' and '{full}'."
                    )));
                }
                Some(_) => {}
                None => {
                    map.insert(bare, full);
                }
            }
        }
        Ok(map)
    }

    fn bind_value(&mut self, index: c_int, value: &Value) -> Result<()> {
        let stmt = self.ptr();
        // SAFETY: live handle; text and blob bytes are copied by SQLite
        // (SQLITE_TRANSIENT) before the call returns, so the borrowed buffers
        // need not outlive it. A zero-length Vec/String has a dangling but
        // non-null pointer, which SQLite binds as an empty value, not NULL.
        let rc = unsafe {
            match value {
                Value::Null => ffi::sqlite3_bind_null(stmt, index),
                Value::Integer(v) => ffi::sqlite3_bind_int64(stmt, index, *v),
                Value::Real(v) => ffi::sqlite3_bind_double(stmt, index, *v),
                Value::Text(s) => ffi::sqlite3_bind_text64(
                    stmt,
                    index,
                    s.as_ptr() as *const c_char,
                    s.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                Value::Blob(b) => ffi::sqlite3_bind_blob64(
                    stmt,
                    index,
                    b.as_ptr() as *const _,
                    b.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                ),
            }
        };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(self.last_error())
        }
    }

    /// Steps once: `Ok(true)` when a row is ready, `Ok(false)` when done.
    pub fn step(&mut self) -> Result<bool> {
        // SAFETY: live handle, stepped only by the owning thread.
        match unsafe { ffi::sqlite3_step(self.ptr()) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            _ => Err(self.last_error()),
        }
    }

    /// Resets the statement so it can run again and releases its read
    /// snapshot. An earlier step's error is already reported; the code reset
    /// repeats is ignored.
    pub fn reset(&mut self) {
        // SAFETY: live handle.
        unsafe {
            ffi::sqlite3_reset(self.ptr());
        }
    }

    pub fn column_count(&self) -> usize {
        // SAFETY: live handle.
        unsafe { ffi::sqlite3_column_count(self.ptr()) as usize }
    }

    /// The result columns' names: the same list (one allocation) on every
    /// call until SQLite prepares the statement again.
    pub fn column_names(&mut self) -> Arc<[String]> {
        // SAFETY: live handle; reading a counter without resetting it.
        let prepared =
            unsafe { ffi::sqlite3_stmt_status(self.ptr(), ffi::SQLITE_STMTSTATUS_REPREPARE, 0) };
        if let Some((at, names)) = &self.columns {
            if *at == prepared {
                return names.clone();
            }
        }
        let names: Arc<[String]> = (0..self.column_count())
            .map(|i| {
                // SAFETY: live handle, `i` below the column count; the name is
                // copied at once.
                unsafe { cstr_to_string(ffi::sqlite3_column_name(self.ptr(), i as c_int)) }
            })
            .collect();
        self.columns = Some((prepared, names.clone()));
        names
    }

    /// Origin metadata of column `i`: (database, table, origin column,
    /// declared type), each `None` when the column is an expression.
    pub fn column_origin(&self, i: usize) -> [Option<String>; 4] {
        let stmt = self.ptr();
        let i = i as c_int;
        let text = |p: *const c_char| {
            if p.is_null() {
                None
            } else {
                // SAFETY: non-null metadata strings are NUL-terminated and
                // live until the statement is finalized or re-prepared.
                Some(unsafe { cstr_to_string(p) })
            }
        };
        // SAFETY: live handle and an index below the column count; the
        // bundled SQLite is built with SQLITE_ENABLE_COLUMN_METADATA.
        unsafe {
            [
                text(ffi::sqlite3_column_database_name(stmt, i)),
                text(ffi::sqlite3_column_table_name(stmt, i)),
                text(ffi::sqlite3_column_origin_name(stmt, i)),
                text(ffi::sqlite3_column_decltype(stmt, i)),
            ]
        }
    }

    /// Column `i` of the current row. Call only after `step` returned true.
    pub fn column_value(&self, i: usize) -> Value {
        let stmt = self.ptr();
        let i = i as c_int;
        // SAFETY: live handle on a row; text and blob pointers are valid until
        // the next step/reset and are copied before returning. The byte count
        // is read after the pointer, as SQLite's docs require.
        unsafe {
            match ffi::sqlite3_column_type(stmt, i) {
                ffi::SQLITE_INTEGER => Value::Integer(ffi::sqlite3_column_int64(stmt, i)),
                ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_column_double(stmt, i)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_column_text(stmt, i);
                    let n = ffi::sqlite3_column_bytes(stmt, i) as usize;
                    if p.is_null() {
                        Value::Text(String::new())
                    } else {
                        let bytes = std::slice::from_raw_parts(p, n);
                        Value::Text(String::from_utf8_lossy(bytes).into_owned())
                    }
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_column_blob(stmt, i) as *const u8;
                    let n = ffi::sqlite3_column_bytes(stmt, i) as usize;
                    if p.is_null() {
                        Value::Blob(Vec::new())
                    } else {
                        Value::Blob(std::slice::from_raw_parts(p, n).to_vec())
                    }
                }
                _ => Value::Null,
            }
        }
    }

    /// `sqlite3_changes64` and `sqlite3_last_insert_rowid` of the connection.
    pub fn changes(&self) -> (i64, i64) {
        // SAFETY: `self.db` is live (prepare's contract).
        unsafe {
            (
                ffi::sqlite3_changes64(self.db),
                ffi::sqlite3_last_insert_rowid(self.db),
            )
        }
    }

    /// `sqlite3_total_changes64`: rows changed on the connection since it
    /// opened, triggers included. Unlike `changes`, it moves only when a
    /// statement changes a row.
    pub fn total_changes(&self) -> i64 {
        // SAFETY: `self.db` is live (prepare's contract).
        unsafe { ffi::sqlite3_total_changes64(self.db) }
    }

    /// The SQL with the currently bound values substituted.
    pub fn expanded_sql(&self) -> Option<String> {
        // SAFETY: live handle; the returned buffer is ours to free.
        unsafe {
            let p = ffi::sqlite3_expanded_sql(self.ptr());
            if p.is_null() {
                return None;
            }
            let s = cstr_to_string(p);
            ffi::sqlite3_free(p as *mut _);
            Some(s)
        }
    }
}

impl Drop for RawStatement {
    fn drop(&mut self) {
        // SAFETY: we own the handle and drop it once, on the thread that owns
        // the connection (the type is not Send).
        unsafe {
            ffi::sqlite3_finalize(self.ptr());
        }
    }
}
