//! The operating system under offloop's files, in one place so that every
//! other crate is the same on every platform:
//!
//! - [`PositionedIo`]: reads and writes at an offset (`pread`/`pwrite` on
//!   Unix, `ReadFile`/`WriteFile` with an offset on Windows);
//! - [`WritableFile`] and [`replace_file`]: the only way a file is opened
//!   to be synced and the only sync of one, always through a handle open
//!   for writing (Windows flushes no other);
//! - [`sync_dir`], [`sync_parent`]: making a rename or a new file in a
//!   directory durable (an fsync of the directory on Unix; nothing on
//!   Windows, which cannot open a directory as a file and whose file system
//!   journals names);
//! - [`wrap`]: what every offloop SQLite VFS that wraps the platform's
//!   default VFS shares.
//!
//! Nothing here knows of databases, replicas or Node; nothing outside this
//! crate names `std::os::unix` or `std::os::windows`.

mod dir;
mod durable;
mod positioned;
pub mod wrap;

pub use dir::{sync_dir, sync_parent};
pub use durable::{replace_file, WritableFile};
pub use positioned::PositionedIo;
