//! `Settings`: everything that shapes how a database is opened, validated by
//! the caller before it reaches the engine.

use std::time::Duration;

/// Reader threads when the caller does not say. Four keeps a 2-core server
/// busy while one reader waits on I/O, and costs four connections.
pub const DEFAULT_READERS: usize = 4;
/// `node:sqlite`'s default busy timeout is 0; a server wants to wait for a
/// competing writer instead, and here the wait is on a SQLite thread.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

#[derive(Debug, Clone)]
pub struct Settings {
    pub path: String,
    /// Reader threads; 0 runs every statement on the writer.
    pub readers: usize,
    pub read_only: bool,
    pub busy_timeout: Duration,
    pub foreign_keys: bool,
    pub double_quoted_string_literals: bool,
    /// SQLITE_DBCONFIG_DEFENSIVE: no writes to the schema through
    /// `writable_schema` and other ways to corrupt the file from SQL.
    pub defensive: bool,
}

impl Settings {
    pub fn new(path: impl Into<String>) -> Self {
        Settings {
            path: path.into(),
            readers: DEFAULT_READERS,
            read_only: false,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            foreign_keys: true,
            double_quoted_string_literals: false,
            defensive: true,
        }
    }

    /// In-memory and temporary databases are private to one connection, so
    /// readers could not see the writer's data: the writer runs everything.
    pub fn is_private(&self) -> bool {
        let p = self.path.as_str();
        p.is_empty()
            || p == ":memory:"
            || p.starts_with("file::memory:")
            || (p.starts_with("file:") && p.contains("mode=memory"))
    }

    /// Reader threads actually started.
    pub fn reader_count(&self) -> usize {
        if self.is_private() {
            0
        } else {
            self.readers
        }
    }
}
