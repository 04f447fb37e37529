//! Owned SQLite values that cross threads: parameters on the way in, rows on
//! the way out. Nothing here touches a connection.

use std::sync::Arc;

/// One SQLite value, owned, so it can travel between the JS thread and the
/// SQLite threads without borrowing either side's memory.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// The parameters of one call, in the shape `node:sqlite` accepts them: an
/// optional leading object of named parameters, then anonymous ones that
/// fill the unnamed slots (`?`) in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// Keys exactly as the caller wrote them (`$id`, `:id`, `@id` or a bare
    /// `id`), in the caller's order.
    pub named: Option<Vec<(String, Value)>>,
    pub anonymous: Vec<Value>,
}

impl Params {
    pub fn positional(values: Vec<Value>) -> Self {
        Params {
            named: None,
            anonymous: values,
        }
    }
}

/// How named keys are matched to the statement's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindOptions {
    /// A key without a prefix (`id`) may name `$id`, `:id` or `@id`.
    pub allow_bare_named: bool,
    /// A key that names no parameter is skipped instead of being an error.
    pub allow_unknown_named: bool,
}

impl Default for BindOptions {
    fn default() -> Self {
        BindOptions {
            allow_bare_named: true,
            allow_unknown_named: false,
        }
    }
}

/// Rows as one flat list of values plus the column names once, which is the
/// cheapest shape to build on a SQLite thread and to turn into JS objects.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSet {
    pub columns: Arc<[String]>,
    /// Row-major: row `r`, column `c` is at `r * columns.len() + c`.
    pub values: Vec<Value>,
}

impl RowSet {
    pub fn new(columns: Arc<[String]>) -> Self {
        RowSet {
            columns,
            values: Vec::new(),
        }
    }

    pub fn row_count(&self) -> usize {
        match self.columns.len() {
            0 => 0,
            n => self.values.len() / n,
        }
    }

    pub fn row(&self, index: usize) -> &[Value] {
        let n = self.columns.len();
        &self.values[index * n..(index + 1) * n]
    }
}
