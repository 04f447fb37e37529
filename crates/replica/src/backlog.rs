//! `Backlog`: what reached the replica since the replicator's housekeeping
//! last looked, which decides whether its next look (a compaction, a
//! snapshot, a retention pass) is needed at all, so that an idle database
//! asks nothing of its replica.
//!
//! Plain data on the ground floor: it never makes a request, and learns
//! what it knows from the replicator's own uploads and from listings
//! read for other reasons.

use std::time::Duration;

use offloop_ltx::Txid;

use crate::compact::{doomed, next_retention};
use crate::settings::ReplicaSettings;
use crate::stager::now_ms;
use crate::store::{LtxFile, SNAPSHOT_LEVEL};

/// What reached the replica since housekeeping last looked: why its next
/// look is needed. Known from this writer's own uploads and merges (under
/// its lease nobody else writes the replica) and from the listing each
/// reconcile reads anyway, so keeping it costs no request.
#[derive(Debug)]
pub(crate) struct Backlog {
    /// `unmerged[i]`: level `i` received a file since the last merge into
    /// level `i + 1` (one entry per compaction level).
    unmerged: Vec<bool>,
    /// The newest snapshot's TXID; `None` while none is known.
    snapshot_txid: Option<Txid>,
    /// Something new was compacted or snapshotted: retention looks.
    retain: bool,
    /// When (ms since the epoch) retention finds something to delete in
    /// the replica as last seen, though nothing new reaches it.
    retain_at: Option<i64>,
    /// The retention window (`ReplicaSettings::retention`).
    window: Duration,
}

impl Backlog {
    /// Before anything is known of the replica: every level may hold
    /// files to merge, and retention looks once.
    pub(crate) fn unknown(settings: &ReplicaSettings) -> Backlog {
        Backlog {
            unmerged: vec![true; settings.levels.len()],
            snapshot_txid: None,
            retain: true,
            retain_at: None,
            window: settings.retention,
        }
    }

    /// From a listing of the whole replica: which levels hold files past
    /// the last merge into the level above, the newest snapshot, and when
    /// retention has something to delete.
    pub(crate) fn listed(files: &[LtxFile], settings: &ReplicaSettings) -> Backlog {
        let top = |level: usize| {
            files
                .iter()
                .filter(|f| usize::from(f.level) == level)
                .map(|f| f.max_txid)
                .max()
        };
        let now = now_ms();
        let (retention, l0) = (settings.retention, settings.l0_retention);
        Backlog {
            unmerged: (0..settings.levels.len())
                .map(|i| top(i) > top(i + 1))
                .collect(),
            snapshot_txid: top(usize::from(SNAPSHOT_LEVEL)),
            retain: !doomed(files, now, retention, l0).is_empty(),
            retain_at: next_retention(files, now, retention, l0),
            window: retention,
        }
    }

    /// A file reached the replica. A snapshot changes what retention
    /// deletes only once it ages into the window's base, so it only
    /// brings the next look forward to then.
    pub(crate) fn uploaded(&mut self, file: &LtxFile) {
        if file.level == SNAPSHOT_LEVEL {
            self.snapshot_txid = self.snapshot_txid.max(Some(file.max_txid));
            let base_at = file.timestamp_ms + self.window.as_millis() as i64;
            self.retain_at = Some(self.retain_at.map_or(base_at, |at| at.min(base_at)));
        } else if let Some(slot) = self.unmerged.get_mut(usize::from(file.level)) {
            *slot = true;
        }
    }

    /// Whether level `i` received a file since the last merge into `i + 1`.
    pub(crate) fn unmerged(&self, i: usize) -> bool {
        self.unmerged[i]
    }

    /// The newest snapshot's TXID; `None` while none is known.
    pub(crate) fn snapshot_txid(&self) -> Option<Txid> {
        self.snapshot_txid
    }

    /// Level `i` was merged into level `i + 1`: `merged` is the new file.
    pub(crate) fn compacted(&mut self, i: usize, merged: Option<&LtxFile>) {
        self.unmerged[i] = false;
        if let Some(file) = merged {
            self.uploaded(file);
            self.retain = true;
        }
    }

    /// Whether retention should look at `now_ms`.
    pub(crate) fn retention_due(&self, now_ms: i64) -> bool {
        self.retain || self.retain_at.is_some_and(|at| now_ms >= at)
    }

    /// Retention looked; it is due next at `next` (ms since the epoch),
    /// unless something new reaches the replica first.
    pub(crate) fn retained(&mut self, next: Option<i64>) {
        self.retain = false;
        self.retain_at = next;
    }
}
