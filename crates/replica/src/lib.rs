//! offloop's replica side, Litestream-compatible: the replica store (a
//! folder or S3), restore plans and restore.
//!
//! # Design
//!
//! Data types sit below threads: [`store`] is the only module that talks to
//! the replica (through `object_store`, on a small tokio runtime of its
//! own, behind a blocking API), [`plan`] is pure arithmetic over listings,
//! and [`restore`] runs plain threads that decode LTX files (the format
//! lives in `offloop-ltx`) into a database file. Nothing here is async to
//! its callers and nothing knows of Node.

pub mod error;
pub mod plan;
pub mod restore;
pub mod store;

pub use error::{Error, Result};
pub use plan::{plan_restore, restore_plan, Target};
pub use restore::{restore, RestoreOptions, RestoreReport};
pub use store::{LtxFileInfo, ReplicaStore, S3Options, LEVELS, SNAPSHOT_LEVEL};
