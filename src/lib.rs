//! offloop: SQLite for Node.js servers, run on threads of its own.
//!
//! The engine (the `offloop-engine` crate) owns the threads and the SQLite
//! connections; `node` is the Node-API boundary. This file only wires them.

mod node;

pub use node::*;

/// Every Rust allocation of the addon (rows, jobs, completions) goes to
/// mimalloc: a reader allocates a row that the JS thread frees, and glibc's
/// malloc makes such a free take the reader's arena lock. mimalloc's v2
/// line (see Cargo.toml for why not v3).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
