//! Which setting goes on which connection, and the form in which a request
//! and a read-back value compare. No connection is touched here.

use std::fmt;

use rusqlite::types::Value as SqlValue;

use super::keywords::keyword_at;
use crate::role::Role;

/// A setting as requested or as read back, in a form where the two compare:
/// keywords are lower-case text (`"wal"`, `"normal"`), flags are booleans,
/// and `Null` is "no value" (the pragma returned no row).
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Null,
    Bool(bool),
    Integer(i64),
    Real(f64),
    Text(String),
}

impl fmt::Display for SettingValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingValue::Null => f.write_str("null"),
            SettingValue::Bool(b) => write!(f, "{b}"),
            SettingValue::Integer(i) => write!(f, "{i}"),
            SettingValue::Real(r) => write!(f, "{r}"),
            SettingValue::Text(t) => write!(f, "'{t}'"),
        }
    }
}

/// The settings offloop has an option for, in the order they are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    BusyTimeout,
    JournalMode,
    Synchronous,
    JournalSizeLimit,
    ForeignKeys,
    MmapSize,
    CacheSize,
    TempStore,
}

impl Key {
    pub const ALL: [Key; 8] = [
        Key::BusyTimeout,
        Key::JournalMode,
        Key::Synchronous,
        Key::JournalSizeLimit,
        Key::ForeignKeys,
        Key::MmapSize,
        Key::CacheSize,
        Key::TempStore,
    ];

    /// The pragma's name, which also names the setting in reports.
    pub fn pragma(self) -> &'static str {
        match self {
            Key::BusyTimeout => "busy_timeout",
            Key::JournalMode => "journal_mode",
            Key::Synchronous => "synchronous",
            Key::JournalSizeLimit => "journal_size_limit",
            Key::ForeignKeys => "foreign_keys",
            Key::MmapSize => "mmap_size",
            Key::CacheSize => "cache_size",
            Key::TempStore => "temp_store",
        }
    }

    /// Whether offloop applies this setting on a connection of `role`.
    /// Every connection reads every setting back; only these are compared
    /// with the request.
    ///
    /// - The busy timeout matters wherever a lock is taken: everywhere.
    /// - The journal mode is set by the writer. WAL is a property of the
    ///   file, which readers and the checkpointer then see; the other modes
    ///   only shape how a connection writes, and only the writer writes.
    /// - `synchronous` and `journal_size_limit` shape how writes and
    ///   checkpoints sync and trim files: the writer and the checkpointer.
    /// - Statements run on the writer and the readers, so whatever shapes
    ///   how a query runs goes there: foreign keys, mmap, page cache, temp
    ///   storage. The checkpointer copies WAL frames with plain reads and
    ///   writes and never runs a query.
    pub fn applies_to(self, role: Role) -> bool {
        use Role::*;
        match self {
            Key::BusyTimeout => true,
            Key::JournalMode => role == Writer,
            Key::Synchronous | Key::JournalSizeLimit => matches!(role, Writer | Checkpointer),
            Key::ForeignKeys | Key::MmapSize | Key::CacheSize | Key::TempStore => {
                matches!(role, Writer | Reader(_))
            }
        }
    }

    /// The value read back from SQLite, in the form requests take.
    pub(crate) fn normalize(self, value: SqlValue) -> SettingValue {
        match (self, value) {
            (_, SqlValue::Null) => SettingValue::Null,
            (Key::JournalMode, SqlValue::Text(t)) => SettingValue::Text(t.to_ascii_lowercase()),
            (Key::Synchronous, SqlValue::Integer(i)) => keyword_or_number(SYNCHRONOUS_LEVELS, i),
            (Key::TempStore, SqlValue::Integer(i)) => keyword_or_number(TEMP_STORE_LEVELS, i),
            (Key::ForeignKeys, SqlValue::Integer(i)) => SettingValue::Bool(i != 0),
            (_, other) => plain(other),
        }
    }
}

const SYNCHRONOUS_LEVELS: &[&str] = &["off", "normal", "full", "extra"];
const TEMP_STORE_LEVELS: &[&str] = &["default", "file", "memory"];

fn keyword_or_number(levels: &[&'static str], level: i64) -> SettingValue {
    match keyword_at(levels, level) {
        Some(k) => SettingValue::Text(k.to_string()),
        None => SettingValue::Integer(level),
    }
}

pub(crate) fn plain(value: SqlValue) -> SettingValue {
    match value {
        SqlValue::Null | SqlValue::Blob(_) => SettingValue::Null,
        SqlValue::Integer(i) => SettingValue::Integer(i),
        SqlValue::Real(r) => SettingValue::Real(r),
        SqlValue::Text(t) => SettingValue::Text(t.to_ascii_lowercase()),
    }
}

/// Whether the free-form `pragmas` are applied on a connection of `role`:
/// the connections that run statements.
pub fn pragmas_apply_to(role: Role) -> bool {
    matches!(role, Role::Writer | Role::Reader(_))
}
