//! The follower's checks of its replica, each one pass of its thread's
//! loop (`follow`): by name (the next TXID's L0 file, one request), by
//! name for a promotion (that file and a full image at that TXID, at
//! once), or with a listing of every level; and the apply of each file
//! found, on the writer.
//!
//! A child of `follow`, which owns the thread, the state and the
//! counters these read and update. Nothing here decides which check runs
//! next, and nothing here runs on the JS thread.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use crossbeam_channel::bounded;
use offloop_engine::{self as engine, Job, Outcome, Privileged, Request};
use offloop_ltx::Txid;

use super::{lock, OnApplied, Shared, PROBE_EVERY};
use crate::follow_apply::{anything_after, apply_file, next_file, Applied};
use crate::follow_record::{FollowRecord, Position};
use crate::stager::now_ms;
use crate::store::{LtxFile, ReplicaStore, Store, Timestamps, SNAPSHOT_LEVEL};

/// What one check found.
pub(super) enum Check {
    /// Nothing newer: the database holds the replica's newest TXID.
    Fresh,
    /// A file was applied; look again at once.
    Applied,
    /// The next L0 file will never come: list the replica.
    Suspect,
}

impl Shared {
    /// One request: the next TXID's L0 file by name (or, every
    /// `PROBE_EVERY` misses, the one after it).
    pub(super) fn quick_check(
        &self,
        store: &ReplicaStore,
        misses: &mut u64,
        on_applied: &OnApplied,
    ) -> std::result::Result<Check, String> {
        let Some(at) = self.settled_at() else {
            return Ok(Check::Suspect);
        };
        let probe = *misses > 0 && misses.is_multiple_of(PROBE_EVERY);
        let txid = if probe { next(next(at)?)? } else { next(at)? };
        self.gets.fetch_add(1, Ordering::Relaxed);
        let found = store.get_named(0, txid, txid).map_err(|e| e.to_string())?;
        match found {
            None => {
                *misses += 1;
                Ok(Check::Fresh)
            }
            Some(_) if probe => {
                *misses = 0;
                Ok(Check::Suspect)
            }
            Some((file, bytes)) => {
                *misses = 0;
                self.apply_fetched(&file, bytes, on_applied)
            }
        }
    }

    /// The TXID the database is at, when a check by name can carry it on:
    /// known, and no apply was cut short past the next TXID (whose file,
    /// by name, reaches that far). `None`: only a listing will do.
    fn settled_at(&self) -> Option<Txid> {
        let Position { at, reach } = lock(&self.state).position;
        let at = at?;
        reach.is_none_or(|r| r <= at.next()).then_some(at)
    }

    /// Counts the bytes of `file`, fetched by name, and applies it.
    fn apply_fetched(
        &self,
        file: &LtxFile,
        bytes: Bytes,
        on_applied: &OnApplied,
    ) -> std::result::Result<Check, String> {
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.apply(file, bytes, on_applied)?;
        Ok(Check::Applied)
    }

    /// Two requests at once: the next TXID's L0 file and a full image that
    /// starts the chain again at that TXID, by name; applies the one found.
    pub(super) fn named_check(
        &self,
        store: &ReplicaStore,
        on_applied: &OnApplied,
    ) -> std::result::Result<Check, String> {
        let Some(at) = self.settled_at() else {
            return Ok(Check::Suspect);
        };
        let txid = next(at)?;
        self.gets.fetch_add(2, Ordering::Relaxed);
        let (next, full) = std::thread::scope(|s| {
            let full = s.spawn(|| store.get_named(0, Txid::FIRST, txid));
            let next = store.get_named(0, txid, txid);
            (next, full.join())
        });
        let full = full.map_err(|_| "offloop internal error: a fetch panicked".to_string())?;
        let found = next.map_err(|e| e.to_string())?;
        let found = match found {
            Some(f) => Some(f),
            None => full.map_err(|e| e.to_string())?,
        };
        let Some((file, bytes)) = found else {
            return Ok(Check::Fresh);
        };
        self.apply_fetched(&file, bytes, on_applied)
    }

    /// Lists every level (`from_head`: L0 from the next TXID on) and
    /// applies what continues the database, as far as the listing reaches.
    pub(super) fn listed_check(
        &self,
        store: &ReplicaStore,
        from_head: bool,
        on_applied: &OnApplied,
    ) -> std::result::Result<Check, String> {
        let at = lock(&self.state).position.at;
        let head = at.map(Txid::next).filter(|_| from_head);
        let sent = store.list_requests();
        let levels = match head {
            Some(next) => store.list_all_from(next, Timestamps::Listed),
            None => store.list_all(Timestamps::Listed),
        };
        self.lists
            .fetch_add(store.list_requests() - sent, Ordering::Relaxed);
        let levels = levels.map_err(|e| e.to_string())?;
        lock(&self.state).snapshot_ms = levels
            .get(usize::from(SNAPSHOT_LEVEL))
            .and_then(|l9| l9.iter().map(|f| f.timestamp_ms).max());
        let mut applied = false;
        loop {
            let position = lock(&self.state).position;
            let at = position.at;
            let Some(file) = next_file(&levels, position) else {
                if head.is_some() && anything_after(&levels, at).is_some() {
                    // What continues it may be a full image in L0.
                    return Ok(Check::Suspect);
                }
                if let Some(newest) = anything_after(&levels, at) {
                    let from = at.map_or("a state not known".into(), |at| {
                        format!("TXID {}", at.get())
                    });
                    return Err(format!(
                        "the replica holds TXIDs up to {} but no file that continues this \
                         database from {from} (a gap, and no full image past it)",
                        newest.get()
                    ));
                }
                return Ok(if applied {
                    Check::Applied
                } else {
                    Check::Fresh
                });
            };
            self.gets.fetch_add(1, Ordering::Relaxed);
            let bytes = store.get(&file).map_err(|e| e.to_string())?;
            self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            self.apply(&file, bytes, on_applied)?;
            applied = true;
        }
    }

    /// Applies `file` on the writer: the record first announces it, then
    /// one transaction writes it.
    fn apply(
        &self,
        file: &LtxFile,
        bytes: Bytes,
        on_applied: &OnApplied,
    ) -> std::result::Result<(), String> {
        let to = file.max_txid;
        FollowRecord {
            url: self.settings.url.clone(),
            position: lock(&self.state).position.announcing(to),
        }
        .write(&self.db)
        .map_err(|e| format!("cannot write {}-follow: {e}", self.db.display()))?;
        let label = file.label();
        let (done, result) = bounded(1);
        let work = Privileged(Box::new(move |conn| {
            let applied = apply_file(conn, &label, &bytes).map_err(|m| engine::Error::Misuse {
                code: "ERR_OFFLOOP_REPLICA",
                message: m,
            })?;
            Ok(Outcome::Run {
                changes: applied.pages as i64,
                last_insert_rowid: i64::from(applied.commit),
            })
        }));
        let job = Job::new(
            Request::Privileged(work),
            Box::new(move |r| {
                let _ = done.send(r);
            }),
        );
        match lock(&self.writer).as_ref() {
            Some(writer) => writer.submit(job),
            None => return Err("the database closed".into()),
        }
        let applied = match result.recv() {
            Ok(Ok(Outcome::Run {
                changes,
                last_insert_rowid,
            })) => Applied {
                pages: changes as u64,
                commit: last_insert_rowid as u32,
            },
            Ok(Ok(_)) => return Err("offloop internal error: an apply answered oddly".into()),
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => return Err("the database closed".into()),
        };
        {
            let mut state = lock(&self.state);
            state.position = Position::settled(Some(to));
            state.applied_at_ms = Some(now_ms());
        }
        on_applied(to, applied.pages);
        Ok(())
    }
}

/// The TXID after `at`, which a replica at the largest TXID has not got.
fn next(at: Txid) -> std::result::Result<Txid, String> {
    at.checked_next()
        .ok_or_else(|| "the replica's TXIDs ran out".to_string())
}
