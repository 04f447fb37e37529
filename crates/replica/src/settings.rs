//! `ReplicaSettings`: where a database replicates to and on what schedule,
//! validated by the caller (lib/options.js) before it reaches here. Plain
//! data; it never opens a connection or starts a thread.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use offloop_vfs::Paged;

/// Milliseconds between uploads when the caller does not say (Litestream's
/// default sync interval).
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// A full snapshot (L9) a day, as Litestream takes them.
pub const DEFAULT_SNAPSHOT_INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// A day of history kept restorable.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 3600);
/// Litestream's default compaction levels: L1 every 30 s, L2 every 5 min,
/// L3 every hour.
pub const DEFAULT_LEVELS: [Duration; 3] = [
    Duration::from_secs(30),
    Duration::from_secs(300),
    Duration::from_secs(3600),
];
/// L0 files stay this long after an L1 file covers them (Litestream's
/// `l0-retention`), so a point-in-time restore of the last minutes can
/// still stop at any sync.
pub const DEFAULT_L0_RETENTION: Duration = Duration::from_secs(300);
/// How long, by default, after a round for the replica ends the next one
/// may wait for the writers it answered to commit again
/// (`ReplicaSettings::gather_window`). Those it answered come back
/// within a few milliseconds; started at once, the next round would carry
/// only the first of them and the rest would wait for it, then for their
/// own: two rounds each. Waiting for them (a fraction of a network round
/// trip) lets them share one round. The wait ends as soon as they all are
/// back, so a lone writer never waits.
pub const DEFAULT_GATHER_WINDOW: Duration = Duration::from_millis(4);
/// Bytes waiting for upload (captured pages and staged files) beyond which
/// offloop stops keeping them: 1 GiB is hours of a busy server's writes,
/// and what a small server's disk can spare. See `Replicator` for what
/// happens at the cap.
pub const DEFAULT_MAX_PENDING_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaSettings {
    /// `file:///absolute/dir` or `s3://bucket/prefix`.
    pub url: String,
    pub sync_interval: Duration,
    pub snapshot_interval: Duration,
    pub retention: Duration,
    /// Compaction intervals of L1, L2, L3, … (at most 8 levels).
    pub levels: Vec<Duration>,
    pub l0_retention: Duration,
    pub max_pending_bytes: u64,
    /// The database is being filled from the replica (a paged restore):
    /// full images wait until it is whole, and the replicator's own
    /// connections read through the paged VFS.
    pub paged: Option<PagedGate>,
    /// Hold the replica's lease (see `lease`), renewed every third of this.
    /// `None`: no lease, as before leases existed.
    pub lease_ttl: Option<Duration>,
    /// The database at this path is put in place from the replica as it
    /// opens (the `restore` open option): the lease is then taken as soon
    /// as the replicator has connected, beside the restore's reads, and the
    /// restore writes nothing before it is held
    /// ([`Replicator::wait_for_lease`](crate::Replicator::wait_for_lease)).
    /// `None`: the lease is taken once the database has opened.
    pub restore_at: Option<PathBuf>,
    /// `durability: 'replica'`: a write is acknowledged once its commit is
    /// in the replica (`Replicator::durable`).
    pub durable: bool,
    /// How long a round for durable writes waits for the writers the last
    /// round answered to come back ([`DEFAULT_GATHER_WINDOW`]); zero: it
    /// starts as soon as one write waits.
    pub gather_window: Duration,
}

/// The database file a paged restore fills, as the replicator sees it:
/// set once the restore has put the file in place (before the database's
/// first connection opens), empty when the file needed no restore.
#[derive(Clone, Default)]
pub struct PagedGate(pub Arc<OnceLock<Arc<Paged>>>);

impl PagedGate {
    /// Whether a paged restore put the file in place (filled or not).
    pub fn is_set(&self) -> bool {
        self.0.get().is_some()
    }

    /// Whether the file holds every page (or was never paged).
    pub fn is_filled(&self) -> bool {
        self.0.get().is_none_or(|p| p.is_filled())
    }
}

impl std::fmt::Debug for PagedGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PagedGate({:?})", self.0.get())
    }
}

impl PartialEq for PagedGate {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ReplicaSettings {
    pub fn new(url: impl Into<String>) -> Self {
        ReplicaSettings {
            url: url.into(),
            sync_interval: DEFAULT_SYNC_INTERVAL,
            snapshot_interval: DEFAULT_SNAPSHOT_INTERVAL,
            retention: DEFAULT_RETENTION,
            levels: DEFAULT_LEVELS.to_vec(),
            l0_retention: DEFAULT_L0_RETENTION,
            max_pending_bytes: DEFAULT_MAX_PENDING_BYTES,
            paged: None,
            lease_ttl: None,
            restore_at: None,
            durable: false,
            gather_window: DEFAULT_GATHER_WINDOW,
        }
    }
}
