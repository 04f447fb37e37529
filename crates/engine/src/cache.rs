//! `StatementCache`: the prepared statements of one connection, least
//! recently used evicted first. Lives on the connection's thread.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::statement::RawStatement;

/// Statements kept prepared per connection. Preparing costs tens of
/// microseconds; a server's working set of statements is usually well
/// under this, and each entry holds only a few KiB.
pub const STATEMENT_CACHE_CAPACITY: usize = 256;

pub struct StatementCache {
    entries: HashMap<Box<str>, Entry, BuildHasherDefault<TextHasher>>,
    tick: u64,
    capacity: usize,
}

/// A text's slot: it stays in the map while its statement is out, so a
/// call that takes and returns a statement allocates nothing.
struct Entry {
    stmt: Option<RawStatement>,
    used: u64,
}

impl StatementCache {
    pub fn new(capacity: usize) -> Self {
        StatementCache {
            entries: HashMap::default(),
            tick: 0,
            capacity,
        }
    }

    /// Takes a statement out of the cache; `put` returns it after use. While
    /// it is out (an open cursor), a second call of the same text prepares
    /// its own.
    pub fn take(&mut self, sql: &str) -> Option<RawStatement> {
        self.entries.get_mut(sql)?.stmt.take()
    }

    /// Returns a statement, reset. One of the same text already in the
    /// cache is replaced (finalized).
    pub fn put(&mut self, sql: &str, mut stmt: RawStatement) {
        stmt.reset();
        if self.capacity == 0 {
            return;
        }
        self.tick += 1;
        if let Some(entry) = self.entries.get_mut(sql) {
            entry.stmt = Some(stmt);
            entry.used = self.tick;
            return;
        }
        if self.entries.len() >= self.capacity {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(key, _)| key.clone())
            {
                self.entries.remove(&oldest);
            }
        }
        let entry = Entry {
            stmt: Some(stmt),
            used: self.tick,
        };
        self.entries.insert(sql.into(), entry);
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// The cache's hash: a word at a time (the multiply-rotate of rustc's
/// FxHash). Every call hashes its text twice (take and put), and SipHash's
/// rounds were most of a cached statement's lookup. Its keys are the
/// application's own SQL texts, and at most `STATEMENT_CACHE_CAPACITY` of
/// them, so hash flooding is not a concern here.
#[derive(Default)]
struct TextHasher(u64);

impl TextHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for TextHasher {
    /// Eight bytes a word, the last word padded with zeros.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    fn prepared(conn: &Connection, sql: &str) -> RawStatement {
        // SAFETY: the connection is live on this thread and outlives every
        // statement of the test (they are dropped with the cache first).
        unsafe { RawStatement::prepare(conn.handle(), sql) }
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_statement_taken_is_out_until_put_back() {
        let conn = Connection::open_in_memory().unwrap();
        let mut cache = StatementCache::new(4);
        cache.put("SELECT 1", prepared(&conn, "SELECT 1"));
        assert!(cache.take("SELECT 1").is_some());
        assert!(cache.take("SELECT 1").is_none());
        cache.put("SELECT 1", prepared(&conn, "SELECT 1"));
        assert!(cache.take("SELECT 1").is_some());
        assert!(cache.take("SELECT 2").is_none());
    }

    #[test]
    fn the_least_recently_returned_text_leaves_first() {
        let conn = Connection::open_in_memory().unwrap();
        let mut cache = StatementCache::new(2);
        for sql in ["SELECT 1", "SELECT 2"] {
            cache.put(sql, prepared(&conn, sql));
        }
        let one = cache.take("SELECT 1").unwrap();
        cache.put("SELECT 1", one);
        cache.put("SELECT 3", prepared(&conn, "SELECT 3"));
        assert!(cache.take("SELECT 2").is_none());
        assert!(cache.take("SELECT 1").is_some());
        assert!(cache.take("SELECT 3").is_some());
    }

    #[test]
    fn texts_that_share_a_prefix_or_differ_past_a_word_are_apart() {
        let conn = Connection::open_in_memory().unwrap();
        let mut cache = StatementCache::new(8);
        let names = ["a", "b", "abcdefgh", "abcdefgi", "abcdefghx"];
        let texts = names.map(|name| format!("SELECT 1 AS {name}"));
        for sql in &texts {
            cache.put(sql, prepared(&conn, sql));
        }
        for (sql, name) in texts.iter().zip(names) {
            let mut stmt = cache.take(sql).unwrap();
            assert_eq!(&*stmt.column_names(), [name.to_string()]);
        }
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let conn = Connection::open_in_memory().unwrap();
        let mut cache = StatementCache::new(0);
        cache.put("SELECT 1", prepared(&conn, "SELECT 1"));
        assert!(cache.take("SELECT 1").is_none());
    }
}
