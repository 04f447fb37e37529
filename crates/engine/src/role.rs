//! `Role`: which of a database's connections (and threads) something
//! belongs to. Plain data, named in stats, settings reports and cursors.

use std::fmt;

/// The connections of one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Writer,
    Reader(usize),
    Checkpointer,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Writer => f.write_str("the writer"),
            Role::Reader(i) => write!(f, "reader {i}"),
            Role::Checkpointer => f.write_str("the checkpointer"),
        }
    }
}

impl Role {
    /// The name a trace gives the connection that ran a call:
    /// `offloop-writer`, `offloop-reader-2`, `offloop-checkpointer`. Any
    /// thread of the pool may run it (see `pool`); the name says which
    /// connection, and so which queue, the call went through.
    pub fn lane_name(self) -> String {
        match self {
            Role::Writer => "offloop-writer".to_string(),
            Role::Reader(i) => format!("offloop-reader-{i}"),
            Role::Checkpointer => "offloop-checkpointer".to_string(),
        }
    }
}
