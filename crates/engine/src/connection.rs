//! Opening and configuring a connection for its role. Runs on the thread
//! that will own the connection. Each returns the connection with its
//! settings as read back once applied (see `settings`).

use rusqlite::config::DbConfig;
use rusqlite::hooks::AuthContext;
use rusqlite::{ffi, Connection, OpenFlags};

use crate::authorizer::reader_decision;
use crate::error::{Error, Result};
use crate::role::Role;
use crate::settings::{self, ConnectionSettings, Key, SettingValue, Settings};

/// Opens a connection. rusqlite appends the path to SQLite's "unable to open
/// database file"; the message is SQLite's own again here, as node:sqlite
/// reports it (the path is the caller's already).
pub(crate) fn open(path: &str, flags: OpenFlags, vfs: Option<&str>) -> Result<Connection> {
    let opened = match vfs {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
        None => Connection::open_with_flags(path, flags),
    };
    // Read before anything else can change it.
    let os_error = std::io::Error::last_os_error();
    opened.map_err(|e| match Error::from(e) {
        Error::Sqlite { code, message } => {
            let suffix = format!(": {path}");
            let mut message = message
                .strip_suffix(&suffix)
                .map_or(message.clone(), str::to_string);
            if code & 0xff == ffi::SQLITE_CANTOPEN && out_of_descriptors(&os_error) {
                message = too_many_open_files(&message);
            }
            Error::Sqlite { code, message }
        }
        other => other,
    })
}

/// What follows SQLite's message when a connection could not open for
/// want of file descriptors.
const TOO_MANY_OPEN_FILES: &str = ": too many open files (";

fn too_many_open_files(message: &str) -> String {
    format!("{message}{TOO_MANY_OPEN_FILES}{})", what_to_change())
}

/// What a caller out of file descriptors can change.
fn what_to_change() -> String {
    format!(
        "offloop keeps up to {} connections open in this process: lower \
         Database.configure({{ connections }}), or raise the limit on open files",
        crate::doze::connection_limit()
    )
}

/// An error, for a message: when it is, or was caused by, the operating
/// system's out of file descriptors (an object store's error wraps the
/// file's), it says what to change, as a connection's open does.
pub fn explain_os_error(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if out_of_descriptors(io) {
                return format!("{error} ({})", what_to_change());
            }
            // An io::Error that carries another error hands out that
            // error's source as its own, skipping the error itself.
            if let Some(inner) = io.get_ref() {
                cause = Some(inner);
                continue;
            }
        }
        cause = e.source();
    }
    error.to_string()
}

/// What follows SQLite's message when, the database file open, a file
/// SQLite opens next (the WAL, its `-shm`) was not found. Out of
/// descriptors, SQLite tries a file it could not open read-write again
/// read-only, which cannot create it: when a descriptor freed meanwhile,
/// that second try says the file does not exist.
const NOT_FOUND: &str = ": a file it needs could not be opened (";

/// Whether a connection's open failed for want of file descriptors, or
/// may have (see `NOT_FOUND`): the lane may wait for connections to close
/// and try again (`doze::make_room`).
pub(crate) fn ran_out_of_descriptors(error: &Error) -> bool {
    matches!(error, Error::Sqlite { code, message }
        if code & 0xff == ffi::SQLITE_CANTOPEN
            && (message.contains(TOO_MANY_OPEN_FILES) || message.contains(NOT_FOUND)))
}

/// Configures a freshly opened connection. SQLite opens the WAL and the
/// `-shm` at the connection's first read (reading the journal mode, here):
/// when one of those runs out of descriptors, the error says so as the
/// open's own does.
fn configure<T>(conn: &Connection, configure: impl FnOnce() -> Result<T>) -> Result<T> {
    configure().map_err(|error| match error {
        Error::Sqlite { code, message } if code & 0xff == ffi::SQLITE_CANTOPEN => {
            // SAFETY: the handle is live and used by this thread only; the
            // call reads the errno SQLite kept from its last failed call.
            let errno = unsafe { ffi::sqlite3_system_errno(conn.handle()) };
            let os_error = std::io::Error::from_raw_os_error(errno);
            let message = if out_of_descriptors(&os_error) {
                too_many_open_files(&message)
            } else if os_error.kind() == std::io::ErrorKind::NotFound {
                format!("{message}{NOT_FOUND}{os_error})")
            } else {
                message
            };
            Error::Sqlite { code, message }
        }
        other => other,
    })
}

/// Whether opening failed for want of file descriptors (the process's or
/// the system's).
fn out_of_descriptors(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        // ERROR_TOO_MANY_OPEN_FILES
        error.raw_os_error() == Some(4)
    }
}

/// A URI filename's `mode=rw`/`rwc` would be less restrictive than a
/// reader's read-only flags, which SQLite refuses; readers ask for `ro`.
pub(crate) fn read_only_uri(path: &str) -> String {
    let Some((base, query)) = path.split_once('?').filter(|_| path.starts_with("file:")) else {
        return path.to_string();
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some(("mode", "rw" | "rwc")) => "mode=ro".to_string(),
            _ => pair.to_string(),
        })
        .collect();
    format!("{base}?{}", query.join("&"))
}

pub(crate) fn base_flags() -> OpenFlags {
    // NO_MUTEX: each connection is used by one thread at a time (its lane's).
    OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

/// The connection-level switches that are not pragmas.
fn apply_db_config(conn: &Connection, settings: &Settings) -> Result<()> {
    let dqs = settings.double_quoted_string_literals;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, dqs)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DDL, dqs)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, settings.defensive)?;
    Ok(())
}

/// The writer's read-write connection (read-only when the database is).
/// It sets the journal mode (WAL by default, which readers need to read
/// while the writer writes).
pub fn open_writer(settings: &Settings) -> Result<(Connection, ConnectionSettings)> {
    let flags = if settings.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    };
    let conn = open(
        &settings.path,
        base_flags() | flags,
        settings.vfs.as_deref(),
    )?;
    if !settings.read_only && conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(if may_write(conn.path()) {
            opened_read_only_when_short()
        } else {
            not_writable()
        });
    }
    let report = configure(&conn, || {
        apply_db_config(&conn, settings)?;
        let report = settings::apply(&conn, Role::Writer, settings)?;
        if settings.follower {
            conn.pragma_update(None, "query_only", true)?;
        }
        Ok(report)
    })?;
    if !settings.read_only && wal_opened_read_only_when_short(&conn) {
        return Err(opened_read_only_when_short());
    }
    Ok((conn, report))
}

/// SQLite opens read-only a file it could not open read-write, and a
/// descriptor short at the first try may be free at the second: a
/// connection that asked to write a file this process may write, and got
/// read-only, ran out of descriptors.
fn opened_read_only_when_short() -> Error {
    Error::sqlite(
        ffi::SQLITE_CANTOPEN,
        too_many_open_files(&Error::errstr(ffi::SQLITE_CANTOPEN)),
    )
}

/// The same for the WAL and its `-shm`, which SQLite opens when the
/// connection first reads (while it is configured): either opened
/// read-only leaves a connection that cannot write or checkpoint. A NOOP
/// checkpoint says so (SQLITE_READONLY) without a lock or a copied frame.
/// It is a shortage only where this process may write both files; where
/// it may not, the connection is left as SQLite opened it.
fn wal_opened_read_only_when_short(conn: &Connection) -> bool {
    let read_only = matches!(crate::wal::checkpoint(conn, None),
        Err(Error::Sqlite { code, .. }) if code & 0xff == ffi::SQLITE_READONLY);
    read_only
        && conn.path().is_some_and(|path| {
            may_write(Some(&format!("{path}-wal"))) && may_write(Some(&format!("{path}-shm")))
        })
}

/// Whether this process may write the file at `path` (`access(2)`, which
/// takes no descriptor).
fn may_write(path: Option<&str>) -> bool {
    #[cfg(unix)]
    {
        let Some(path) = path.and_then(|p| std::ffi::CString::new(p).ok()) else {
            return false;
        };
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// SQLite opens a file it may not write read-only without a word, and in
/// WAL mode nothing fails until the first write: refuse at open instead,
/// in every journal mode.
fn not_writable() -> Error {
    Error::sqlite(
        rusqlite::ffi::SQLITE_READONLY,
        "attempt to write a readonly database: the database file cannot be opened for \
         writing (pass readOnly: true to open it read-only)",
    )
}

/// The checkpointer's connection: read-write, so it can take the checkpoint
/// lock and reset the WAL. It runs nothing but checkpoints.
pub fn open_checkpointer(settings: &Settings) -> Result<(Connection, ConnectionSettings)> {
    let flags = base_flags() | OpenFlags::SQLITE_OPEN_READ_WRITE;
    let conn = open(&settings.path, flags, settings.vfs.as_deref())?;
    if conn.is_readonly(rusqlite::MAIN_DB)? && may_write(conn.path()) {
        return Err(opened_read_only_when_short());
    }
    // Reading the journal mode (which applying the settings does) opens the
    // WAL on this connection; until then SQLite treats the connection as
    // not in WAL mode and every checkpoint is a no-op.
    let report = configure(&conn, || {
        settings::apply(&conn, Role::Checkpointer, settings)
    })?;
    if wal_opened_read_only_when_short(&conn) {
        return Err(opened_read_only_when_short());
    }
    match report.get(Key::JournalMode) {
        SettingValue::Text(mode) if mode == "wal" => Ok((conn, report)),
        mode => Err(crate::error::Error::invalid_state(format!(
            "the database is in {mode} journal mode, not WAL"
        ))),
    }
}

/// A reader's connection: opened read-only, `query_only`, and an authorizer
/// that refuses anything but reading, so a misrouted statement fails loudly
/// instead of writing behind the writer's back.
pub fn open_reader(settings: &Settings, index: usize) -> Result<(Connection, ConnectionSettings)> {
    let flags = base_flags() | OpenFlags::SQLITE_OPEN_READ_ONLY;
    let mut conn = open(
        &read_only_uri(&settings.path),
        flags,
        settings.vfs.as_deref(),
    )?;
    let report = configure(&conn, || {
        apply_db_config(&conn, settings)?;
        let report = settings::apply(&conn, Role::Reader(index), settings)?;
        conn.pragma_update(None, "query_only", true)?;
        // The schema, read now: the WAL and the `-shm` open here, where
        // running out of descriptors is the open's to handle, not the
        // first query's.
        conn.prepare("SELECT 1 FROM sqlite_schema LIMIT 1")?;
        Ok(report)
    })?;
    conn.authorizer(Some(|ctx: AuthContext<'_>| reader_decision(&ctx)))?;
    Ok((conn, report))
}

/// The options the bundled SQLite was compiled with (`PRAGMA
/// compile_options`), without the `SQLITE_` prefix.
pub fn compile_options() -> Vec<String> {
    let mut options = Vec::new();
    for i in 0.. {
        // SAFETY: sqlite3_compileoption_get takes any index and returns a
        // static NUL-terminated string, or NULL past the last option; it
        // needs no connection and no initialisation.
        let ptr = unsafe { ffi::sqlite3_compileoption_get(i) };
        if ptr.is_null() {
            break;
        }
        // SAFETY: non-null, static and NUL-terminated, per the above.
        options.push(unsafe { crate::error::cstr_to_string(ptr) });
    }
    options
}

#[cfg(test)]
mod tests {
    use super::{explain_os_error, read_only_uri};

    #[test]
    fn out_of_descriptors_an_os_error_says_what_to_change() {
        #[cfg(unix)]
        let emfile = libc::EMFILE;
        #[cfg(not(unix))]
        let emfile = 4;
        let explained = explain_os_error(&std::io::Error::from_raw_os_error(emfile));
        assert!(
            explained.contains("lower Database.configure({ connections }), or raise the limit"),
            "{explained}"
        );
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(explain_os_error(&other), other.to_string());
        // Wrapped, as an object store wraps a file's error.
        let wrapped = std::io::Error::other(std::io::Error::from_raw_os_error(emfile));
        assert!(
            explain_os_error(&wrapped).contains("raise the limit on open files"),
            "{}",
            explain_os_error(&wrapped)
        );
    }

    #[test]
    fn readers_open_uri_filenames_read_only() {
        assert_eq!(
            read_only_uri("file:a.db?mode=rwc&cache=private"),
            "file:a.db?mode=ro&cache=private"
        );
        assert_eq!(read_only_uri("file:a.db?mode=ro"), "file:a.db?mode=ro");
        assert_eq!(read_only_uri("a.db"), "a.db");
        assert_eq!(read_only_uri("file:a.db"), "file:a.db");
    }
}
