//! The replicator thread's schedule after a clean upload round:
//! compaction of each level when its interval has passed, an L9 snapshot
//! every `snapshot_interval`, and retention once something was compacted.
//!
//! Each of them looks at the replica only when something new reached it
//! since its last look (the [`Backlog`]): an idle database makes no request
//! for them. Compaction of level N runs when level N−1 received a file
//! since the last merge into N; a snapshot is taken when the replica moved
//! past the newest one; retention runs after something new was compacted
//! or snapshotted, and otherwise only at the moment its last listing says
//! a file will age out of the window (`next_retention`).
//!
//! It runs only on the replicator thread, as a method of its `Worker`. It
//! never compacts by itself (`compact` does the work) and never uploads
//! but through the sync round.

use std::time::{Duration, Instant};

use offloop_ltx::Txid;

use crate::compact::{compact_level, doomed, enforce_retention, next_retention};
use crate::error::{Error, Result};
use crate::settings::ReplicaSettings;
use crate::stager::{now_ms, Chain, ImageLevels};
use crate::store::{LtxFile, SNAPSHOT_LEVEL};
use crate::upload::unavailable;
use crate::worker::{guarded, Worker};

/// How long after a retention pass failed the next one is tried: the
/// rounds that follow come every sync interval, and a replica that is down
/// must not be listed at that rate for retention's sake.
const RETENTION_RETRY: Duration = Duration::from_secs(30);

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

    /// Level `i` was merged into level `i + 1`: `merged` is the new file.
    fn compacted(&mut self, i: usize, merged: Option<&LtxFile>) {
        self.unmerged[i] = false;
        if let Some(file) = merged {
            self.uploaded(file);
            self.retain = true;
        }
    }

    fn retention_due(&self, now_ms: i64) -> bool {
        self.retain || self.retain_at.is_some_and(|at| now_ms >= at)
    }
}

impl Worker {
    /// After a round that shipped, and once its callers heard back: the
    /// compaction, snapshots and retention due (`tidy`).
    pub(crate) fn tidy_after(&mut self, shipped: bool) {
        if shipped {
            let _ = guarded(|| {
                self.tidy();
                Ok(None)
            });
        }
    }

    /// After a clean upload round: compaction per level, an L9 snapshot
    /// when due, retention; each only when the [`Backlog`] says something
    /// new is there to work on.
    pub(crate) fn housekeeping(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        let settings = &shared.settings;
        let now = now_ms();
        for (i, interval) in settings.levels.iter().enumerate() {
            if !self.backlog.unmerged[i] || self.last_compaction[i].elapsed() < *interval {
                continue;
            }
            self.last_compaction[i] = Instant::now();
            let dir = shared
                .with_stager(|f| f.scratch_dir())
                .ok_or_else(unavailable)?;
            let merged = compact_level(self.store()?.as_ref(), (i + 1) as u8, &dir)?;
            self.backlog.compacted(i, merged.as_ref());
        }
        // A database still being filled is snapshotted once it is whole; a
        // replica that has not moved since its newest snapshot is not.
        if now - self.last_snapshot_ms >= settings.snapshot_interval.as_millis() as i64
            && self.txid() > self.backlog.snapshot_txid
            && shared.database_whole()
        {
            // Staged first, so the snapshot is exactly the last TXID.
            let staged = shared.in_read_snapshot(|| {
                shared.with_stager(|f| -> std::io::Result<bool> {
                    f.capture(shared.take_uncaptured())?;
                    f.stage(now)?;
                    let taken = match (f.chain(), f.next_txid()) {
                        (Chain::Intact(_), Some(next)) if next > Txid::FIRST => f
                            .full_image(
                                next.prev().expect("past the first TXID"),
                                ImageLevels {
                                    l0: false,
                                    l9: true,
                                },
                                now,
                            )?
                            .is_some(),
                        _ => false,
                    };
                    shared.publish_pending(f);
                    Ok(taken)
                })
            });
            match staged {
                Some(Ok(true)) => {
                    self.last_snapshot_ms = now;
                    self.upload_round()?;
                }
                Some(Err(e)) => return Err(Error::io("cannot stage a snapshot", e)),
                _ => {}
            }
        }
        if self.backlog.retention_due(now) {
            let retained = enforce_retention(
                self.store()?.as_ref(),
                now,
                settings.retention,
                settings.l0_retention,
            );
            self.backlog.retain = false;
            // A replica that failed is tried again later, not every round.
            self.backlog.retain_at = match &retained {
                Ok(next) => *next,
                Err(_) => Some(now + RETENTION_RETRY.as_millis() as i64),
            };
            retained?;
        }
        Ok(())
    }
}
