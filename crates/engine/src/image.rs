//! A schema's whole database as one byte image: `sqlite3_serialize` and
//! `sqlite3_deserialize` on one connection (`db.serialize()`,
//! `db.deserialize()`). This file owns the copy in and out of SQLite's
//! memory and nothing else: it never decides which connection may take an
//! image (the caller runs it on the writer, and lib/ refuses it where
//! readers would keep seeing the file).

use std::ffi::CString;

use rusqlite::ffi;

use crate::error::{Error, Result};

/// Where the header keeps its file format write and read versions: 1 for a
/// rollback journal, 2 for WAL (SQLite's file format, "1.3 The database
/// header").
const FORMAT_VERSIONS: std::ops::Range<usize> = 18..20;
const ROLLBACK: u8 = 1;
const WAL: u8 = 2;

/// Marks a WAL database's image as a rollback-journal one. An in-memory
/// database has no WAL, and SQLite cannot open an image whose header says
/// it has one ("unable to open database file" at its first statement);
/// every file offloop opens is in WAL mode, so without this none of its
/// images would open in memory. A file written from the image opens in
/// rollback mode, and offloop's open puts it back into WAL.
fn without_wal(image: &mut [u8]) {
    if let Some(versions) = image.get_mut(FORMAT_VERSIONS) {
        if versions.iter().all(|&v| v == WAL) {
            versions.fill(ROLLBACK);
        }
    }
}

fn schema_name(schema: &str) -> Result<CString> {
    CString::new(schema).map_err(|_| Error::sqlite(ffi::SQLITE_MISUSE, "schema name holds a NUL"))
}

/// The bytes of schema `schema` as SQLite would write them to a file.
/// An unknown schema fails as SQLite leaves it: with the connection's last
/// error (node:sqlite reports that too, often "not an error").
pub fn serialize(db: *mut ffi::sqlite3, schema: &str) -> Result<Vec<u8>> {
    let name = schema_name(schema)?;
    let mut size: ffi::sqlite3_int64 = 0;
    // SAFETY: `db` is the calling thread's live connection; with flags 0
    // SQLite returns a buffer from sqlite3_malloc64 of `size` bytes that
    // we own, or NULL.
    let data = unsafe { ffi::sqlite3_serialize(db, name.as_ptr(), &mut size, 0) };
    if data.is_null() {
        // SAFETY: the same live connection, read right after the failure.
        return Err(unsafe { Error::from_handle(db) });
    }
    // SAFETY: `data` holds `size` initialised bytes (SQLite's contract for
    // a non-NULL result); they are copied before the buffer is freed once.
    let mut bytes = unsafe {
        let bytes = std::slice::from_raw_parts(data, size as usize).to_vec();
        ffi::sqlite3_free(data.cast());
        bytes
    };
    without_wal(&mut bytes);
    Ok(bytes)
}

/// Replaces schema `schema` with an in-memory database holding `image`
/// (which may grow as it is written). An image marked as a WAL database is
/// taken as a rollback-journal one (see `without_wal`). Every statement prepared against the
/// old schema must be finalized or reset by the caller first.
pub fn deserialize(db: *mut ffi::sqlite3, schema: &str, image: &[u8]) -> Result<()> {
    let name = schema_name(schema)?;
    let size = image.len() as u64;
    // SAFETY: sqlite3_malloc64 returns NULL or a buffer of `size` bytes.
    let data = unsafe { ffi::sqlite3_malloc64(size.max(1)) }.cast::<u8>();
    if data.is_null() {
        return Err(Error::sqlite(
            ffi::SQLITE_NOMEM,
            Error::errstr(ffi::SQLITE_NOMEM),
        ));
    }
    // SAFETY: `data` has room for `image.len()` bytes and does not overlap
    // `image`. With FREEONCLOSE SQLite owns the buffer from the call on,
    // and frees it even when the call fails; RESIZEABLE lets it grow the
    // buffer with sqlite3_realloc64, which is how it was allocated.
    let rc = unsafe {
        std::ptr::copy_nonoverlapping(image.as_ptr(), data, image.len());
        without_wal(std::slice::from_raw_parts_mut(data, image.len()));
        ffi::sqlite3_deserialize(
            db,
            name.as_ptr(),
            data,
            size as ffi::sqlite3_int64,
            size as ffi::sqlite3_int64,
            (ffi::SQLITE_DESERIALIZE_FREEONCLOSE | ffi::SQLITE_DESERIALIZE_RESIZEABLE) as _,
        )
    };
    if rc != ffi::SQLITE_OK {
        // SAFETY: the same live connection, read right after the failure.
        return Err(unsafe { Error::from_handle(db) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn an_image_taken_from_one_connection_opens_in_another() {
        let from = Connection::open_in_memory().unwrap();
        from.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);")
            .unwrap();
        // SAFETY: both handles are live and used only on this thread.
        let image = serialize(unsafe { from.handle() }, "main").unwrap();
        let to = Connection::open_in_memory().unwrap();
        deserialize(unsafe { to.handle() }, "main", &image).unwrap();
        to.execute("INSERT INTO t VALUES (3)", []).unwrap();
        assert_eq!(count(&to, "SELECT count(*) FROM t"), 3);
        assert_eq!(count(&from, "SELECT count(*) FROM t"), 2);
    }

    #[test]
    fn a_wal_databases_image_opens_in_memory() {
        let dir = std::env::temp_dir().join(format!("offloop-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = Connection::open(dir.join("wal.db")).unwrap();
        file.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
        // SAFETY: both handles are live and used only on this thread.
        let image = serialize(unsafe { file.handle() }, "main").unwrap();
        assert_eq!(image[FORMAT_VERSIONS], [ROLLBACK, ROLLBACK]);
        let mut marked = image.clone();
        marked[FORMAT_VERSIONS].fill(WAL);
        let to = Connection::open_in_memory().unwrap();
        deserialize(unsafe { to.handle() }, "main", &marked).unwrap();
        assert_eq!(count(&to, "SELECT count(*) FROM t"), 1);
        drop(file);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unknown_schema_fails_with_the_connections_last_error() {
        let conn = Connection::open_in_memory().unwrap();
        // SAFETY: the handle is live and used only on this thread.
        let handle = unsafe { conn.handle() };
        assert!(matches!(
            serialize(handle, "nope"),
            Err(Error::Sqlite { .. })
        ));
        assert!(deserialize(handle, "nope", &[0; 512]).is_err());
    }
}
