//! `Sql`: one SQL text and where it runs. The route is learned the first time
//! any connection prepares the text and is shared by every later call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Not prepared yet: the writer runs it and learns the route.
    Unknown,
    /// A read-only query: any reader may run it.
    Reader,
    /// Writes, transaction control, pragmas and everything else.
    Writer,
}

#[derive(Debug)]
pub struct Sql {
    text: Box<str>,
    route: AtomicU8,
    /// The statement's parameter names by index (`None` for `?`), known once
    /// prepared: lets the caller name the exact parameter in a type error.
    parameters: OnceLock<Box<[Option<String>]>>,
}

impl Sql {
    pub fn new(text: impl Into<Box<str>>) -> Self {
        Sql {
            text: text.into(),
            route: AtomicU8::new(0),
            parameters: OnceLock::new(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn route(&self) -> Route {
        match self.route.load(Ordering::Relaxed) {
            1 => Route::Reader,
            2 => Route::Writer,
            _ => Route::Unknown,
        }
    }

    /// Whether the text is a query that never writes whatever it names: it
    /// starts with SELECT or VALUES (a WITH may end in a write).
    pub fn is_plain_query(&self) -> bool {
        starts_with_any(&self.text, &["SELECT", "VALUES"])
    }

    /// Parameter names by 1-based index minus one, once any connection has
    /// prepared this text.
    pub fn parameters(&self) -> Option<&[Option<String>]> {
        self.parameters.get().map(|p| &p[..])
    }

    /// Records what preparing this text taught: its parameters, and, from
    /// the writer (`readonly` is `Some`), whether a reader may run it. The
    /// first answer stands.
    pub(crate) fn learn(
        &self,
        readonly: Option<bool>,
        parameters: impl FnOnce() -> Box<[Option<String>]>,
    ) {
        if self.parameters.get().is_none() {
            let _ = self.parameters.set(parameters());
        }
        let Some(readonly) = readonly else { return };
        if self.route() != Route::Unknown {
            return;
        }
        let route = if readonly && is_query(&self.text) {
            1
        } else {
            2
        };
        self.route.store(route, Ordering::Relaxed);
    }
}

/// Whether the first keyword makes this a query. `sqlite3_stmt_readonly` is
/// also true for BEGIN, COMMIT, SAVEPOINT, ATTACH and PRAGMA reads, which
/// change or depend on the state of one connection; those stay on the writer.
fn is_query(sql: &str) -> bool {
    starts_with_any(sql, &["SELECT", "WITH", "VALUES"])
}

/// Whether `sql`'s first keyword is one of `keywords` (in any case).
fn starts_with_any(sql: &str, keywords: &[&str]) -> bool {
    let keyword = first_keyword(sql);
    keywords.iter().any(|k| keyword.eq_ignore_ascii_case(k))
}

/// The first keyword of `sql`, after comments and opening parentheses.
pub(crate) fn first_keyword(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix('(') {
            rest = after;
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// How many distinct SQL texts a database remembers the route of. Servers
/// use a few hundred statements; texts built per request fall out oldest
/// first and cost one writer round trip to learn again.
const SQL_REGISTRY_CAPACITY: usize = 2048;

/// Interned texts with the tick of their last use.
type Entries = HashMap<Box<str>, (Arc<Sql>, u64)>;

/// Interns SQL texts per database so a statement prepared again for every
/// request (`db.prepare(sql).get()`) still finds its learned route.
#[derive(Default)]
pub struct SqlRegistry {
    entries: Mutex<Entries>,
    tick: std::sync::atomic::AtomicU64,
}

impl SqlRegistry {
    pub fn get(&self, text: &str) -> Arc<Sql> {
        let tick = self.tick.fetch_add(1, Ordering::Relaxed);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((sql, used)) = entries.get_mut(text) {
            *used = tick;
            return sql.clone();
        }
        if entries.len() >= SQL_REGISTRY_CAPACITY {
            // Evict the oldest half at once so the scan is paid rarely.
            let mut ticks: Vec<u64> = entries.values().map(|(_, t)| *t).collect();
            ticks.sort_unstable();
            let cutoff = ticks[ticks.len() / 2];
            entries.retain(|_, (_, t)| *t > cutoff);
        }
        let sql = Arc::new(Sql::new(text));
        entries.insert(text.into(), (sql.clone(), tick));
        sql
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_queries_route_to_readers() {
        for (sql, query) in [
            ("SELECT 1", true),
            (
                "  -- c\n /* x */ with a as (select 1) select * from a",
                true,
            ),
            ("values (1)", true),
            ("(SELECT 1)", true),
            ("BEGIN", false),
            ("PRAGMA user_version", false),
            ("ATTACH 'x' AS y", false),
            ("INSERT INTO t VALUES (1)", false),
        ] {
            assert_eq!(is_query(sql), query, "{sql}");
        }
    }

    #[test]
    fn only_select_and_values_are_plain_queries() {
        for (sql, plain) in [
            (" /* x */ (select 1)", true),
            ("VALUES (1)", true),
            ("WITH a AS (SELECT 1) SELECT * FROM a", false),
            ("WITH a AS (SELECT 1) DELETE FROM t", false),
            ("PRAGMA user_version", false),
            ("INSERT INTO t VALUES (1)", false),
        ] {
            assert_eq!(Sql::new(sql).is_plain_query(), plain, "{sql}");
        }
    }

    #[test]
    fn registry_returns_the_same_sql_for_the_same_text() {
        let registry = SqlRegistry::default();
        let a = registry.get("SELECT 1");
        a.learn(Some(true), || Box::new([]));
        assert_eq!(registry.get("SELECT 1").route(), Route::Reader);
        assert!(Arc::ptr_eq(&a, &registry.get("SELECT 1")));
    }

    #[test]
    fn registry_stays_bounded() {
        let registry = SqlRegistry::default();
        for i in 0..(SQL_REGISTRY_CAPACITY * 3) {
            registry.get(&format!("SELECT {i}"));
        }
        assert!(registry.entries.lock().unwrap().len() <= SQL_REGISTRY_CAPACITY);
    }
}
