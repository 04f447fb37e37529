//! `Cursors`: the open `iterate()` cursors of one connection, and the
//! stepping of rows into chunks. A cursor is either live (its statement,
//! taken out of the statement cache, still holds a read snapshot) or
//! buffered (stepped to the end ahead of its consumer, so the connection
//! could do other work). It lives on the connection's thread and never sees
//! a job or a queue; `executor.rs` turns its chunks into outcomes.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::cache::StatementCache;
use crate::error::{Error, Result};
use crate::sql::Sql;
use crate::statement::RawStatement;
use crate::steps::step_rows;
use crate::value::{RowSet, Value};

enum Cursor {
    /// Still stepping its statement, which holds a read snapshot open.
    Live {
        sql: Arc<Sql>,
        stmt: RawStatement,
        columns: Arc<[String]>,
    },
    /// Stepped to the end ahead of the consumer (see `Cursors::park`).
    Buffered {
        columns: Arc<[String]>,
        values: VecDeque<Value>,
        error: Option<Error>,
    },
}

/// Cursor ids, unique in the process: a reader that died and was replaced
/// by a fresh connection must never take an id its dead predecessor handed
/// out, or a stale iterator would read another query's rows.
static NEXT_CURSOR_ID: AtomicU64 = AtomicU64::new(1);

#[derive(Default)]
pub struct Cursors {
    open: HashMap<u64, Cursor>,
}

impl Cursors {
    /// Cursors open on this connection, live or buffered.
    pub fn count(&self) -> usize {
        self.open.len()
    }

    pub fn has_live(&self) -> bool {
        self.open.values().any(|c| matches!(c, Cursor::Live { .. }))
    }

    fn insert(&mut self, cursor: Cursor) -> u64 {
        let id = NEXT_CURSOR_ID.fetch_add(1, Ordering::Relaxed);
        self.open.insert(id, cursor);
        id
    }

    /// Keeps `stmt`, stepped part way, as a live cursor.
    pub fn open(&mut self, sql: Arc<Sql>, stmt: RawStatement, columns: Arc<[String]>) -> u64 {
        self.insert(Cursor::Live { sql, stmt, columns })
    }

    /// A cursor whose next chunk is `error`.
    pub fn defer_error(&mut self, columns: Arc<[String]>, error: Error) -> u64 {
        self.insert(Cursor::Buffered {
            columns,
            values: VecDeque::new(),
            error: Some(error),
        })
    }

    /// Up to `chunk_rows` rows of cursor `id`, and the id to ask for the
    /// next chunk (None once the cursor is finished and closed).
    pub fn next_chunk(
        &mut self,
        id: u64,
        chunk_rows: usize,
        cache: &mut StatementCache,
    ) -> Result<(RowSet, Option<u64>)> {
        let Some(state) = self.open.get_mut(&id) else {
            return Err(Error::invalid_state("the iterator is already finished"));
        };
        let mut deferred = None;
        let (rows, finished) = match state {
            Cursor::Live { stmt, columns, .. } => {
                let mut rows = RowSet::new(columns.clone());
                match step_rows(stmt, &mut rows, chunk_rows) {
                    Ok(done) => (Ok(rows), done),
                    Err(e) if rows.values.is_empty() => (Err(e), true),
                    // As in `iterate`: these rows now, the error next.
                    Err(e) => {
                        deferred = Some((columns.clone(), e));
                        (Ok(rows), true)
                    }
                }
            }
            Cursor::Buffered {
                columns,
                values,
                error,
            } => {
                let take = (chunk_rows.saturating_mul(columns.len())).min(values.len());
                let rows = RowSet {
                    columns: columns.clone(),
                    values: values.drain(..take).collect(),
                };
                if values.is_empty() {
                    match error.take() {
                        Some(e) if rows.values.is_empty() => (Err(e), true),
                        Some(e) => {
                            *error = Some(e);
                            (Ok(rows), false)
                        }
                        None => (Ok(rows), true),
                    }
                } else {
                    (Ok(rows), false)
                }
            }
        };
        if finished {
            self.close(id, cache);
        }
        let rows = rows?;
        if let Some((columns, e)) = deferred {
            return Ok((rows, Some(self.defer_error(columns, e))));
        }
        Ok((rows, (!finished).then_some(id)))
    }

    /// Ends cursor `id`, returning a live one's statement to `cache`.
    pub fn close(&mut self, id: u64, cache: &mut StatementCache) {
        if let Some(Cursor::Live { sql, stmt, .. }) = self.open.remove(&id) {
            cache.put(sql.text(), stmt);
        }
    }

    /// Steps every live cursor to its end and keeps the rows in memory, so
    /// the connection holds no read snapshot.
    pub fn park(&mut self, cache: &mut StatementCache) {
        let ids: Vec<u64> = self
            .open
            .iter()
            .filter(|(_, c)| matches!(c, Cursor::Live { .. }))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let Some(Cursor::Live {
                sql,
                mut stmt,
                columns,
            }) = self.open.remove(&id)
            else {
                continue;
            };
            let mut rows = RowSet::new(columns.clone());
            let error = step_rows(&mut stmt, &mut rows, usize::MAX).err();
            cache.put(sql.text(), stmt);
            self.open.insert(
                id,
                Cursor::Buffered {
                    columns,
                    values: rows.values.into(),
                    error,
                },
            );
        }
    }

    /// The id the next cursor will get: cursors opened after this mark can
    /// be told from older ones.
    pub fn mark(&self) -> u64 {
        NEXT_CURSOR_ID.load(Ordering::Relaxed)
    }

    /// Ends the cursors opened since `mark`.
    pub fn close_from(&mut self, mark: u64, cache: &mut StatementCache) {
        let ids: Vec<u64> = self.open.keys().copied().filter(|id| *id >= mark).collect();
        for id in ids {
            self.close(id, cache);
        }
    }

    /// Finalizes every cursor's statement (before the connection closes).
    pub fn clear(&mut self) {
        self.open.clear();
    }
}
