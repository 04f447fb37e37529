//! The operating system under offloop's files, in one place so that every
//! other crate is the same on every platform:
//!
//! - [`PositionedIo`]: reads and writes at an offset (`pread`/`pwrite` on
//!   Unix, `ReadFile`/`WriteFile` with an offset on Windows);
//! - [`sync_dir`]: making a rename or a new file in a directory durable
//!   (an fsync of the directory on Unix; nothing on Windows, which cannot
//!   open a directory as a file and whose file system journals names);
//! - [`wrap`]: what every offloop SQLite VFS that wraps the platform's
//!   default VFS shares.
//!
//! Nothing here knows of databases, replicas or Node; nothing outside this
//! crate names `std::os::unix` or `std::os::windows`.

mod dir;
mod positioned;
pub mod wrap;

pub use dir::sync_dir;
pub use positioned::PositionedIo;
