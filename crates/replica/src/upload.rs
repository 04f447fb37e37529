//! The sync round of a database's replication: capture and stage what was
//! committed, drop the outbox past `max_pending_bytes`, check the replica's
//! position against the outbox (continue its chain, or start again from a
//! full image), repair a broken chain and upload the outbox in TXID order,
//! with backoff after a failure.
//!
//! It runs only in the database's replication steps (on a pool thread), as
//! methods of its `Worker`. It never decides when a round is due (the step
//! does, `replication`) and never compacts or trims the replica
//! (housekeeping does, after a clean round).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use offloop_ltx::Txid;

use crate::backlog::Backlog;
use crate::error::{Error, Result};
use crate::pending::Staged;
use crate::shared::Answer;
use crate::stager::{now_ms, Chain, ImageLevels};
use crate::store::{Comparison, Fault, LtxFile, Timestamps, WriteMode, SNAPSHOT_LEVEL};
use crate::worker::{Worker, FIRST_BACKOFF};

/// Retries of a replica that stays down settle at this interval: often
/// enough to catch up soon after it returns, rare enough to cost nothing.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How the replica's position relates to the local state.
enum Verdict {
    /// The outbox continues the replica; the local chain goes on.
    Continues,
    /// No local state: start with a full image after the replica's last.
    Start,
    /// The replica has a gap before the outbox, is ahead, or is someone
    /// else's: start again with a full image after its last. `newer`: it
    /// holds commits this database lacks (ahead, or someone else's).
    Diverged { why: String, newer: bool },
}

impl Worker {
    /// One round: `ship`, then, when it shipped, `tidy`.
    pub(crate) fn sync(&mut self, forced: bool) -> Answer {
        let shipped = self.ship(forced);
        if shipped.is_ok() {
            self.tidy();
        }
        shipped
    }

    /// Compaction, snapshots and retention when due. A failure shows in
    /// `lastError` until the next round; nothing waits on it, so a write
    /// waiting for the replica hears back before it runs.
    pub(crate) fn tidy(&mut self) {
        if let Err(e) = self.housekeeping() {
            self.shared.set_error(e.to_string());
        }
    }

    /// Capture and stage, repair the chain if it broke, and upload the
    /// outbox: once it answers Ok, every commit made before it is in the
    /// replica. `forced` (a `sync()` call) ignores the retry backoff.
    pub(crate) fn ship(&mut self, forced: bool) -> Answer {
        if let Some(why) = &self.permanent_error {
            return Err(why.clone());
        }
        let shared = self.shared.clone();
        if let Some(why) = shared.refusal() {
            shared.set_error(why.clone());
            return Err(why);
        }
        let staged = shared.with_stager(|f| {
            let r = f
                .capture(shared.take_uncaptured())
                .and_then(|_| f.stage(now_ms()));
            shared.publish_pending(f);
            r
        });
        match staged {
            None => return Err("replication state is unavailable".into()),
            Some(Err(e)) => {
                let why = format!("could not stage changes for upload: {e}");
                shared.set_error(why.clone());
                return Err(why);
            }
            Some(Ok(_)) => {}
        }
        self.enforce_cap();
        if !forced && self.retry_at.is_some_and(|r| Instant::now() < r) {
            return Err(self.current_error());
        }
        match self.upload_round() {
            Ok(()) => {
                self.failures = 0;
                self.retry_at = None;
                match self.notice.take() {
                    Some(notice) => shared.set_error(notice),
                    None => shared.clear_error(),
                }
                Ok(self.txid())
            }
            Err(_) if shared.refusal().is_some() => {
                let why = shared.refusal().unwrap_or_default();
                shared.set_error(why.clone());
                Err(why)
            }
            Err(e) => {
                self.verified = false;
                self.failures += 1;
                let backoff = FIRST_BACKOFF
                    .saturating_mul(1 << self.failures.min(8))
                    .min(MAX_BACKOFF);
                self.retry_at = Some(Instant::now() + backoff);
                let why = format!("replica {}: {e}", shared.settings.url);
                shared.set_error(why.clone());
                if e.is_permanent() && self.txid().is_none() {
                    self.permanent_error = Some(why.clone());
                }
                Err(why)
            }
        }
    }

    /// Past the cap, what waits is dropped: the replica will start again
    /// from a full image once it answers, instead of the disk filling up.
    pub(crate) fn enforce_cap(&mut self) {
        let c = &self.shared.counters;
        let cap = self.shared.settings.max_pending_bytes;
        if c.pending_bytes.load(Ordering::Relaxed) <= cap {
            return;
        }
        let shared = self.shared.clone();
        shared.with_stager(|f| {
            let _ = f.outbox_mut().clear();
            f.restart_at(
                None,
                format!("more than {cap} bytes waited for upload; dropped"),
            );
            shared.publish_pending(f);
        });
        self.verified = false;
        shared.set_error(format!(
            "more than {cap} bytes waited for the replica: dropped them; a full snapshot follows once it answers"
        ));
    }

    pub(crate) fn current_error(&self) -> String {
        self.shared
            .counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the replica is unavailable".into())
    }

    /// Checks the replica's position if needed, starts the chain again
    /// with a full image when it must, and uploads the outbox in order.
    pub(crate) fn upload_round(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        if !self.verified {
            let levels = self.store()?.list_all(Timestamps::Listed)?;
            self.reconcile(&levels.concat())?;
            self.verified = true;
        }
        self.repair_chain()?;
        let outbox = shared
            .with_stager(|f| f.outbox().staged().to_vec())
            .ok_or_else(unavailable)?;
        for staged in outbox {
            self.write_staged(&staged)?;
            shared.with_stager(|f| {
                let _ = f.outbox_mut().remove(&staged);
                shared.publish_pending(f);
            });
            self.shipped(&staged);
        }
        Ok(())
    }

    /// Uploads one staged file. Under a lease every L0 file (a TXID) is
    /// created only if its name is free: a name that is taken fences this
    /// writer, whatever its lease says and whatever holds the name (another
    /// writer's LTX file, an empty object, bytes that are no LTX file at
    /// all): the store's answer decides, and the object there is never
    /// decoded. The one exception is this writer's own earlier create of
    /// the name, whose answer was lost: the object is then byte for byte
    /// the file sent. A refusal that finds nothing there fences nothing:
    /// the round fails and the next one tries again. Without a lease it
    /// overwrites.
    fn write_staged(&mut self, staged: &Staged) -> Result<()> {
        let store = self.store()?;
        let Some(lease) = self.shared.lease.clone() else {
            return store.write(&staged.file, &staged.path, WriteMode::Overwrite);
        };
        if let Some(why) = self.shared.refusal() {
            return Err(Error::State(why));
        }
        if staged.file.level != 0 {
            return store.write(&staged.file, &staged.path, WriteMode::Overwrite);
        }
        match store.write(&staged.file, &staged.path, WriteMode::CreateNew) {
            Err(e) if e.fault() == Some(Fault::Conflict) => {
                match store.compare(&staged.file, &staged.path)? {
                    Comparison::Same => return Ok(()),
                    // Refused, yet nothing there (S3's 409 for a create
                    // racing another on that key): a later round tries
                    // again, after listing the replica afresh.
                    Comparison::Absent => return Err(e),
                    Comparison::Different => {}
                }
                let why = format!(
                    "TXID {} is already in the replica ({} is taken by an object this \
                     database did not write): this database no longer writes to it",
                    staged.file.max_txid,
                    staged.file.label()
                );
                lease.fence(why.clone());
                Err(Error::State(why))
            }
            result => result,
        }
    }

    pub(crate) fn shipped(&mut self, staged: &Staged) {
        let c = &self.shared.counters;
        c.bytes_shipped
            .fetch_add(staged.file.size, Ordering::Relaxed);
        c.txid
            .fetch_max(staged.file.max_txid.get(), Ordering::Relaxed);
        c.last_sync_at_ms.store(now_ms(), Ordering::Relaxed);
        self.backlog.uploaded(&staged.file);
        if staged.file.level == SNAPSHOT_LEVEL {
            self.has_snapshot = true;
            self.last_snapshot_ms = staged.file.timestamp_ms;
        }
    }

    /// Compares the replica's files with what waits locally, and decides:
    /// the outbox continues the replica's chain (upload it), or the chain
    /// must start again with a full image at the replica's next TXID.
    pub(crate) fn reconcile(&mut self, files: &[LtxFile]) -> Result<()> {
        let newest = files
            .iter()
            .min_by_key(|f| (std::cmp::Reverse(f.max_txid), f.level));
        // A newest file with the TXID of one staged here may be that very
        // file, put by a round whose answer was lost: it is ours only if it
        // holds the staged file's bytes exactly. It is never decoded, so an
        // object that is no LTX file counts as someone else's.
        let staged_as_newest = match newest {
            Some(newest) => self
                .shared
                .with_stager(|f| {
                    f.outbox()
                        .staged()
                        .iter()
                        .find(|s| s.file.level == 0 && s.file.max_txid == newest.max_txid)
                        .cloned()
                })
                .ok_or_else(unavailable)?,
            None => None,
        };
        let newest_is_ours = match (newest, staged_as_newest) {
            (Some(newest), Some(staged)) => {
                self.store()?.compare(newest, &staged.path)? == Comparison::Same
            }
            _ => false,
        };
        // `None`: the replica holds nothing yet.
        let replica_max = newest.map(|f| f.max_txid);
        // Where a chain that starts again begins: after the replica's last.
        let replica_next = replica_max.map_or(Txid::FIRST, Txid::next);
        let snapshots = files.iter().filter(|f| f.level == SNAPSHOT_LEVEL);
        self.has_snapshot = snapshots.clone().next().is_some();
        self.last_snapshot_ms = snapshots.map(|f| f.timestamp_ms).max().unwrap_or(0);
        self.backlog = Backlog::listed(files, &self.shared.settings);
        self.shared
            .counters
            .txid
            .store(replica_max.map_or(0, Txid::get), Ordering::Relaxed);
        let shared = self.shared.clone();
        let verdict = shared
            .with_stager(|f| -> std::io::Result<Verdict> {
                let staged = f.outbox().staged();
                let Some(next) = f.next_txid() else {
                    return Ok(Verdict::Start);
                };
                let first = staged
                    .iter()
                    .filter(|s| s.file.level == 0)
                    .map(|s| s.file.min_txid)
                    .min()
                    .unwrap_or(next);
                let ends = replica_max.map_or_else(
                    || "holds nothing".to_string(),
                    |m| format!("ends at TXID {m}"),
                );
                Ok(if replica_next < first {
                    Verdict::Diverged {
                        why: format!("the replica {ends}, before this database's next ({first})"),
                        newer: false,
                    }
                } else if let Some(ahead) = replica_max.filter(|&m| m >= next) {
                    Verdict::Diverged {
                        why: format!(
                            "the replica (TXID {ahead}) is ahead of this database (TXID {})",
                            next.get() - 1
                        ),
                        newer: true,
                    }
                } else if let Some(theirs) = replica_max.filter(|&m| m >= first && !newest_is_ours)
                {
                    Verdict::Diverged {
                        why: format!("the replica's TXID {theirs} was written by someone else"),
                        newer: true,
                    }
                } else {
                    Verdict::Continues
                })
            })
            .ok_or_else(unavailable)?
            .map_err(|e| Error::State(format!("cannot read the outbox: {e}")))?;
        if let (Verdict::Diverged { why, .. }, Some(lease), true) =
            (&verdict, &self.shared.lease, self.tenure)
        {
            // Under this holder's lease only this database writes TXIDs:
            // a replica that moved otherwise has another writer.
            let why = format!(
                "{why}: another writer wrote to the replica, so this database no longer does"
            );
            lease.fence(why.clone());
            return Err(Error::State(why));
        }
        if let (Verdict::Diverged { why, newer: true }, Some(_)) = (&verdict, &self.shared.lease) {
            // A writer that takes the lease never starts the replica again
            // from a database older than it (a fenced old primary, a stale
            // restore): that would drop the newer writer's commits.
            return Err(Error::State(format!(
                "{why}: it holds commits this database lacks; open a fresh path with restore \
                 to carry on from it"
            )));
        }
        self.tenure = self.shared.lease.is_some();
        if let Verdict::Start | Verdict::Diverged { .. } = &verdict {
            if let Verdict::Diverged { why, .. } = &verdict {
                self.notice = Some(format!(
                    "replica {}: {why}: starting it again from a full snapshot",
                    shared.settings.url
                ));
            }
            shared.with_stager(|f| {
                let _ = f.outbox_mut().clear();
                f.restart_at(Some(replica_next), "the replica starts again here");
            });
        }
        Ok(())
    }

    /// A broken chain starts again: a full image at its next TXID (also an
    /// L9 snapshot when the replica has none).
    /// Until a paged restore is whole the image waits (the outbox still
    /// uploads); the next round tries again.
    pub(crate) fn repair_chain(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        if !shared.database_whole() {
            return Ok(());
        }
        let l9 = !self.has_snapshot;
        let result = shared.in_read_snapshot(|| {
            shared.with_stager(|f| {
                let r = match (f.chain(), f.next_txid()) {
                    (Chain::Broken { .. }, Some(txid)) => f
                        .full_image(txid, ImageLevels { l0: true, l9 }, now_ms())
                        .map(|_| ()),
                    _ => Ok(()),
                };
                shared.publish_pending(f);
                r
            })
        });
        match result {
            Some(Err(e)) => Err(Error::State(format!(
                "cannot stage a snapshot of the database: {e}"
            ))),
            _ => Ok(()),
        }
    }
}

/// The local state is gone (it failed to open, or the database closed).
pub(crate) fn unavailable() -> Error {
    Error::State("replication state is unavailable".into())
}
