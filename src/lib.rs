//! offloop: SQLite for Node.js servers, run on threads of its own.
//!
//! The engine (the `offloop-engine` crate) owns the threads and the SQLite
//! connections; `node` is the Node-API boundary. This file only wires them.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod alloc;
mod node;

pub use node::*;
