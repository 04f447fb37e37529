//! offloop's paged VFS: a database file that is usable before all of its
//! pages are there. A `Paged` knows which pages are local and where the
//! missing ones come from (a `PageSource`: for offloop, the replica); the
//! `offloop-paged` VFS brings a missing page in when SQLite reads it, and
//! leaves pages SQLite wrote alone. A background fill (the caller's)
//! brings in the rest; when every page is local the file is an ordinary
//! database and the VFS passes every call straight through.
//!
//! Nothing here knows of replicas, LTX files or Node, and nothing here
//! starts a thread.

mod map;
mod paged;
mod vfs;

pub use map::{map_path, read_map, MapRecord, PageBits};
pub use paged::{PageSource, Paged, PagedStats};
pub use vfs::{install, is_installed, register, take_read_error, uninstall, VFS_NAME};
