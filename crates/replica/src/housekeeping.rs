//! A database's replication schedule after a clean upload round:
//! compaction of each level when its interval has passed, an L9 snapshot
//! every `snapshot_interval`, and retention once something was compacted.
//!
//! Each of them looks at the replica only when something new reached it
//! since its last look (the `Backlog`, in `backlog`): an idle database makes no request
//! for them. Compaction of level N runs when level N−1 received a file
//! since the last merge into N; a snapshot is taken when the replica moved
//! past the newest one; retention runs after something new was compacted
//! or snapshotted, and otherwise only at the moment its last listing says
//! a file will age out of the window (`next_retention`).
//!
//! It runs only in the database's replication steps, as a method of its
//! `Worker`. It never compacts by itself (`compact` does the work) and
//! never uploads but through the sync round.

use std::time::{Duration, Instant};

use offloop_ltx::Txid;

use crate::compact::{compact_level, enforce_retention};
use crate::error::{Error, Result};
use crate::stager::{now_ms, Chain, ImageLevels};
use crate::upload::unavailable;
use crate::worker::{guarded, Worker};

/// How long after a retention pass failed the next one is tried: the
/// rounds that follow come every sync interval, and a replica that is down
/// must not be listed at that rate for retention's sake.
const RETENTION_RETRY: Duration = Duration::from_secs(30);

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
    /// when due, retention; each only when the `Backlog` says something
    /// new is there to work on.
    pub(crate) fn housekeeping(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        let settings = &shared.settings;
        let now = now_ms();
        for (i, interval) in settings.levels.iter().enumerate() {
            if !self.backlog.unmerged(i) || self.last_compaction[i].elapsed() < *interval {
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
            && self.txid() > self.backlog.snapshot_txid()
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
            // A replica that failed is tried again later, not every round.
            self.backlog.retained(match &retained {
                Ok(next) => *next,
                Err(_) => Some(now + RETENTION_RETRY.as_millis() as i64),
            });
            retained?;
        }
        Ok(())
    }
}
