//! `Schemas`: the schemas of the writer's connection (`main`, `temp`, each
//! ATTACHed database) and the file behind each, as the writer last saw
//! them, for `db.location(dbName)` on any thread without a round trip.
//! The writer refreshes the list after each job, before the job's caller
//! hears back; this file never runs a statement, and never decides when a
//! refresh is due.

use std::ffi::{c_char, CStr};
use std::sync::Mutex;

use rusqlite::ffi;

/// A schema's name and its file's absolute path (`None` for an in-memory
/// or temporary database, or one that took an image).
type Entry = (String, Option<String>);

#[derive(Default)]
pub struct Schemas {
    entries: Mutex<Vec<Entry>>,
}

/// A C string SQLite returned, borrowed; `None` for NULL.
///
/// # Safety
/// `text` is NULL or NUL-terminated and lives while the result is used.
unsafe fn text<'a>(text: *const c_char) -> Option<&'a str> {
    // SAFETY: per the caller's guarantee.
    (!text.is_null())
        .then(|| unsafe { CStr::from_ptr(text) }.to_str().ok())
        .flatten()
}

impl Schemas {
    /// Reads the connection's schemas again; the list is rewritten only
    /// when it changed, so the usual case (nothing attached or detached)
    /// allocates nothing. `db` must be the calling thread's live connection.
    pub fn refresh(&self, db: *mut ffi::sqlite3) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut index = 0;
        let mut same = true;
        let mut seen = Vec::new();
        loop {
            // SAFETY: `db` is live and ours; sqlite3_db_name returns NULL
            // past the last schema, and the names and file names it and
            // sqlite3_db_filename return stay valid until the schemas
            // change, which cannot happen on another thread meanwhile.
            let (name, file) = unsafe {
                let name = ffi::sqlite3_db_name(db, index);
                if name.is_null() {
                    break;
                }
                (text(name), text(ffi::sqlite3_db_filename(db, name)))
            };
            let Some(name) = name else {
                index += 1;
                continue;
            };
            let file = file.filter(|f| !f.is_empty());
            if same {
                same = entries
                    .get(seen.len())
                    .is_some_and(|(n, f)| n == name && f.as_deref() == file);
            }
            seen.push((name, file));
            index += 1;
        }
        if same && seen.len() == entries.len() {
            return;
        }
        *entries = seen
            .into_iter()
            .map(|(n, f)| (n.to_string(), f.map(str::to_string)))
            .collect();
    }

    /// The file behind schema `name` (matched without regard to ASCII
    /// case, as SQLite matches schema names).
    pub fn location(&self, name: &str) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, f)| f.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn attached_files_are_listed_until_detached() {
        let dir = std::env::temp_dir().join(format!("offloop-schemas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conn = Connection::open(dir.join("main.db")).unwrap();
        let schemas = Schemas::default();
        // SAFETY: the handle is live and used only on this thread.
        let handle = unsafe { conn.handle() };
        schemas.refresh(handle);
        assert!(schemas.location("main").unwrap().ends_with("main.db"));
        assert_eq!(schemas.location("aux"), None);
        let other = dir.join("other.db");
        conn.execute("ATTACH ?1 AS aux", [other.to_str().unwrap()])
            .unwrap();
        conn.execute_batch("ATTACH ':memory:' AS mem").unwrap();
        schemas.refresh(handle);
        assert!(schemas.location("AUX").unwrap().ends_with("other.db"));
        assert_eq!(schemas.location("mem"), None);
        assert_eq!(schemas.location("temp"), None);
        conn.execute_batch("DETACH aux").unwrap();
        schemas.refresh(handle);
        assert_eq!(schemas.location("aux"), None);
        drop(conn);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
