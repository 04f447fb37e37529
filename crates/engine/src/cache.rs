//! `StatementCache`: the prepared statements of one connection, least
//! recently used evicted first. Lives on the connection's thread.

use std::collections::HashMap;

use crate::statement::RawStatement;

/// Statements kept prepared per connection. Preparing costs tens of
/// microseconds; a server's working set of statements is usually well
/// under this, and each entry holds only a few KiB.
pub const STATEMENT_CACHE_CAPACITY: usize = 256;

pub struct StatementCache {
    entries: HashMap<Box<str>, (RawStatement, u64)>,
    tick: u64,
    capacity: usize,
}

impl StatementCache {
    pub fn new(capacity: usize) -> Self {
        StatementCache {
            entries: HashMap::new(),
            tick: 0,
            capacity,
        }
    }

    /// Takes a statement out of the cache; `put` returns it after use. While
    /// it is out (an open cursor), a second call of the same text prepares
    /// its own.
    pub fn take(&mut self, sql: &str) -> Option<RawStatement> {
        self.entries.remove(sql).map(|(stmt, _)| stmt)
    }

    pub fn put(&mut self, sql: &str, mut stmt: RawStatement) {
        stmt.reset();
        if self.capacity == 0 {
            return;
        }
        self.tick += 1;
        if self.entries.len() >= self.capacity && !self.entries.contains_key(sql) {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
            {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(sql.into(), (stmt, self.tick));
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
