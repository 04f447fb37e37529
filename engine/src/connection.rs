//! Opening and configuring a connection for its role. Runs on the thread
//! that will own the connection.

use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{Connection, OpenFlags};

use crate::error::Result;
use crate::settings::Settings;

fn base_flags() -> OpenFlags {
    // NO_MUTEX: each connection is used by exactly one thread.
    OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

fn apply_common(conn: &Connection, settings: &Settings) -> Result<()> {
    conn.busy_timeout(settings.busy_timeout)?;
    let dqs = settings.double_quoted_string_literals;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, dqs)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DDL, dqs)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, settings.defensive)?;
    conn.pragma_update(None, "foreign_keys", settings.foreign_keys)?;
    Ok(())
}

/// The writer's read-write connection (read-only when the database is).
pub fn open_writer(settings: &Settings) -> Result<Connection> {
    let flags = if settings.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    };
    let conn = Connection::open_with_flags(&settings.path, base_flags() | flags)?;
    apply_common(&conn, settings)?;
    if !settings.read_only && !settings.is_private() {
        // Readers need WAL to read while the writer writes.
        conn.pragma_update(None, "journal_mode", "wal")?;
        conn.pragma_update(None, "synchronous", "normal")?;
        conn.pragma_update(None, "journal_size_limit", settings.journal_size_limit)?;
    }
    Ok(conn)
}

/// The checkpointer's connection: read-write, so it can take the checkpoint
/// lock and reset the WAL. It runs nothing but checkpoints.
pub fn open_checkpointer(settings: &Settings) -> Result<Connection> {
    let flags = base_flags() | OpenFlags::SQLITE_OPEN_READ_WRITE;
    let conn = Connection::open_with_flags(&settings.path, flags)?;
    conn.busy_timeout(settings.busy_timeout)?;
    conn.pragma_update(None, "journal_size_limit", settings.journal_size_limit)?;
    // Reading the journal mode opens the WAL on this connection; until then
    // SQLite treats the connection as not in WAL mode and every checkpoint
    // is a no-op.
    let mode: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(crate::error::Error::invalid_state(format!(
            "the database is in {mode} mode, not WAL"
        )));
    }
    Ok(conn)
}

/// A reader's connection: opened read-only, `query_only`, and an authorizer
/// that refuses anything but reading, so a misrouted statement fails loudly
/// instead of writing behind the writer's back.
pub fn open_reader(settings: &Settings) -> Result<Connection> {
    let flags = base_flags() | OpenFlags::SQLITE_OPEN_READ_ONLY;
    let mut conn = Connection::open_with_flags(&settings.path, flags)?;
    apply_common(&conn, settings)?;
    conn.pragma_update(None, "query_only", true)?;
    conn.authorizer(Some(reader_authorizer))?;
    Ok(conn)
}

fn reader_authorizer(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select
        | AuthAction::Read { .. }
        | AuthAction::Function { .. }
        | AuthAction::Recursive
        | AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. } => Authorization::Allow,
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            if pragma_name.eq_ignore_ascii_case("query_only") && pragma_value.is_some() {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        _ => Authorization::Deny,
    }
}
