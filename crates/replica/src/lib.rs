//! offloop's replica side, Litestream-compatible: continuous replication
//! of a database, the replica store (a folder or S3), restore plans and
//! restore.
//!
//! # Design
//!
//! Data types sit below threads: [`store`] is the only module that talks to
//! the replica (its [`Store`] interface; `object_store` on one small tokio
//! runtime shared by every store of the process, blocking to its callers), [`plan`] is pure arithmetic over listings,
//! and [`restore`] runs plain threads that decode LTX files (the format
//! lives in `offloop-ltx`) into a database file. Nothing here is async to
//! its callers and nothing knows of Node.
//!
//! The [`Replicator`] is the engine's WAL observer and runs on the
//! process's replicator [`pool`] (a few threads for every database): woken
//! by commits, it copies committed WAL frames into a capture
//! log ([`wal`], [`capture`]), turns them into LTX files each sync interval
//! ([`stager`], [`pending`]) and uploads them through the [`store`], then
//! compacts and trims the replica ([`compact`]). Before every checkpoint it
//! captures what the WAL holds, so no frame is overwritten unseen.

mod adopt;
mod backlog;
pub mod capture;
pub mod compact;
mod create_only;
pub mod error;
mod fault;
pub mod follow;
mod follow_apply;
mod follow_open;
mod follow_record;
mod housekeeping;
pub mod lease;
mod lease_record;
mod page_io;
pub mod paged;
pub mod pending;
pub mod plan;
mod plan_files;
pub mod pool;
pub mod process_lease;
pub mod promotion;
mod rejoin;
mod renewer;
mod replica_url;
mod replication;
pub mod replicator;
mod rest;
pub mod restore;
mod restore_at_open;
pub mod settings;
mod shared;
pub mod stager;
pub mod store;
mod upload;
pub mod wal;
mod worker;
mod worker_lease;

pub use adopt::{continue_after_restore, LeaseHolder};
pub use error::{Error, Result};
pub use follow::{FollowSettings, FollowStats, Follower, OnApplied};
pub use offloop_ltx::Txid;
pub use paged::PagedReplica;
pub use plan::{plan_restore, restore_plan, Target};
pub use promotion::LeaseState;
pub use rejoin::set_aside;
pub use replicator::{state_dir, Connect, Handover, ReplicaStats, Replicator, Reply};
pub use restore::{restore, RestoreOptions, RestoreReport};
pub use restore_at_open::{FillStats, RestoreAtOpen, RestoreMode, RestoreSource};
pub use settings::{PagedGate, ReplicaSettings};
pub use shared::Answer;
pub use store::{
    Comparison, Expect, Fault, LeaseRoot, LtxFile, ReplicaStore, S3Options, Store, StoreError,
    Timestamps, Versioned, WriteMode, LEVELS, SNAPSHOT_LEVEL,
};
