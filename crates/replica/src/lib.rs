//! Continuous replication of an offloop database to a Litestream-compatible
//! replica (a folder or S3), and restore from one.
//!
//! # Design
//!
//! The [`Replicator`] is the engine's WAL observer and runs on a thread of
//! its own: woken by commits, it copies committed WAL frames into a capture
//! log ([`wal`], [`capture`]), turns them into LTX files each sync interval
//! ([`follower`]) and uploads them ([`remote`]), then compacts and trims the
//! replica ([`compact`]). Before every checkpoint it captures what the WAL
//! holds, so no frame is overwritten unseen.

pub mod capture;
pub mod compact;
pub mod follower;
pub mod pending;
pub mod remote;
pub mod replicator;
pub mod settings;
pub mod wal;

pub use remote::{Remote, RemoteError, RemoteFile, RemoteResult, SNAPSHOT_LEVEL};
pub use replicator::{forget_state, state_dir, ReplicaStats, Replicator, Reply};
pub use settings::{ReplicaSettings, S3Settings};
