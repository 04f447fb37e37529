//! The `restore` open option's domain: a database file that is missing
//! (or a paged restore that has not finished) is put in place from the
//! replica before the database's first connection opens, on the writer's
//! thread (the engine's `before_open`). With [`RestoreMode::Paged`] the
//! file is created empty and an `offloop-fill` thread brings in the rest
//! while the database answers; [`RestoreAtOpen::wait`] and
//! [`RestoreAtOpen::stats`] say how far it got.
//!
//! It owns the fill thread, the map file's tag (which replica, at which
//! TXID) and the process-wide registry of fills, so that a reopen of the
//! same file waits for the last fill to end. It never runs on the JS
//! thread and knows nothing of Node: the binding turns its answers into
//! promises.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::thread::JoinHandle;

use offloop_engine as engine;
use offloop_ltx::Txid;
use offloop_vfs::{install, is_installed, map_path, read_map, uninstall, Paged};

use crate::adopt::{continue_after_restore, LeaseHolder};
use crate::error::{Error, Result};
use crate::paged::PagedReplica;
use crate::plan::Target;
use crate::replicator::Replicator;
use crate::restore::{restore, RestoreOptions};
use crate::settings::PagedGate;
use crate::shared::{Answer, Reply};
use crate::store::{ReplicaStore, S3Options};

/// What a map file's tag starts with; the restored TXID and the replica's
/// URL follow.
const TAG: &[u8] = b"offloop-paged\0";

/// How a missing file is put in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreMode {
    /// Created empty; pages come on demand and from the fill.
    Paged,
    /// Restored whole before the open resolves.
    Full,
}

/// Where a missing file comes from.
#[derive(Clone, Debug)]
pub struct RestoreSource {
    pub mode: RestoreMode,
    pub url: String,
    pub s3: S3Options,
    /// For a follower (`follow`): the restored file is not the start of a
    /// replication of its own, so no replicator state is written for it.
    pub follower: bool,
}

/// How far a paged restore has come (`stats().restore`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillStats {
    pub pages_local: u32,
    pub pages_total: u32,
    pub bytes_fetched: u64,
    pub requests: u64,
    pub filled: bool,
    pub last_error: Option<String>,
}

/// A file being filled and where its pages come from.
type Filling = (Arc<Paged>, Arc<PagedReplica>);

/// What the fill has come to.
enum FillState {
    /// Who waits for the fill, before the open has resolved.
    NotStarted(Vec<Reply>),
    Running(Vec<Reply>),
    /// The restored TXID (`None` when nothing was restored), or why the
    /// fill ended without every page.
    Done(Answer),
}

/// One database's restore at open: the file being filled (once the
/// writer's thread put it in place) and its fill.
pub struct RestoreAtOpen {
    gate: PagedGate,
    source: Arc<OnceLock<Arc<PagedReplica>>>,
    state: Arc<Mutex<FillState>>,
    stop: Arc<AtomicBool>,
    /// Set by [`RestoreAtOpen::write_after`]; weak, so that the handle does
    /// not outlive the database's own.
    lease: Arc<OnceLock<Weak<Replicator>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Fill threads by database path: a reopen waits for the last one to end
/// before it touches the same file.
static FILLS: Mutex<Option<HashMap<PathBuf, JoinHandle<()>>>> = Mutex::new(None);

impl RestoreAtOpen {
    /// Sets up `settings` for the database at `path`: with `source`, the
    /// work that puts a missing file in place before the first connection
    /// opens; without it, a check that refuses a file a paged restore left
    /// unfinished (its missing pages would read as zeros). The open fails
    /// with `fail(why)` when either cannot be done.
    pub fn setup(
        path: &str,
        source: Option<RestoreSource>,
        fail: fn(String) -> engine::Error,
        settings: &mut engine::Settings,
    ) -> Result<RestoreAtOpen> {
        let this = RestoreAtOpen {
            gate: PagedGate::default(),
            source: Arc::default(),
            state: Arc::new(Mutex::new(FillState::NotStarted(Vec::new()))),
            stop: Arc::new(AtomicBool::new(false)),
            lease: Arc::default(),
        };
        let db = PathBuf::from(path);
        let Some(RestoreSource {
            mode,
            url,
            s3,
            follower,
        }) = source
        else {
            // Nothing to fill: waiting ends at once.
            *lock(&this.state) = FillState::Done(Ok(None));
            settings.before_open = Some(engine::BeforeOpen(Arc::new(move || {
                if map_path(&db).exists() {
                    return Err(fail(format!(
                        "{} is a paged restore that has not finished: open it with \
                         `restore: 'paged'` (or 'full') and its replica",
                        db.display()
                    )));
                }
                Ok(())
            })));
            return Ok(this);
        };
        if path.is_empty() || path == ":memory:" || path.starts_with("file:") {
            return Err(Error::Config(format!(
                "`restore` needs a database file's path, not '{path}'"
            )));
        }
        offloop_vfs::register().map_err(Error::State)?;
        // A page the VFS could not fetch fails SQLite's read with a bare
        // I/O error; the engine appends the VFS's reason.
        engine::explain_read_errors(offloop_vfs::take_read_error);
        settings.vfs = Some(offloop_vfs::VFS_NAME.to_string());
        let (gate, replica, lease) = (this.gate.clone(), this.source.clone(), this.lease.clone());
        settings.before_open = Some(engine::BeforeOpen(Arc::new(move || {
            let put = || {
                let replicator = lease.get().and_then(Weak::upgrade);
                let prepared = prepare(&db, mode, &url, &s3, follower, replicator.as_ref())?;
                // A file that needed no restore opens only under the lease too.
                replicator.and_then(|r| r.wait_for_lease()).transpose()?;
                Ok(prepared)
            };
            let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(put))
                .unwrap_or_else(|_| Err("offloop internal error: the restore panicked".into()))
                .map_err(fail)?;
            if let Some((paged, source)) = prepared {
                let _ = gate.0.set(paged);
                let _ = replica.set(source);
            }
            Ok(())
        })));
        Ok(this)
    }

    /// Makes the restore wait for `replicator`'s lease, taken beside the
    /// restore's reads when it [leases first](Replicator::leases_first),
    /// before it writes anything, and the open fail with its error: a lease
    /// another writer holds leaves no file behind. Call before the database
    /// opens.
    pub fn write_after(&self, replicator: &Arc<Replicator>) {
        let _ = self.lease.set(Arc::downgrade(replicator));
    }

    /// What the replicator waits on before it reads the whole file.
    pub fn gate(&self) -> PagedGate {
        self.gate.clone()
    }

    fn filling(&self) -> Option<Filling> {
        Some((self.gate.0.get()?.clone(), self.source.get()?.clone()))
    }

    /// Calls `reply` when every page is local (at once when the file was
    /// never paged), or with why the fill ended without them.
    pub fn wait(&self, reply: Reply) {
        match &mut *lock(&self.state) {
            FillState::NotStarted(waiters) | FillState::Running(waiters) => waiters.push(reply),
            FillState::Done(result) => reply(result.clone()),
        }
    }

    /// `None` when the database was not opened paged.
    pub fn stats(&self) -> Option<FillStats> {
        let (paged, source) = self.filling()?;
        let s = paged.stats();
        Some(FillStats {
            pages_local: s.pages_local,
            pages_total: s.pages_total,
            bytes_fetched: source.bytes_fetched(),
            requests: source.requests(),
            filled: s.filled,
            last_error: s.last_error,
        })
    }

    /// Starts the background fill, once; nothing to do when the file was
    /// not paged or is whole.
    pub fn start(&self) -> Result<()> {
        let mut state = lock(&self.state);
        let FillState::NotStarted(waiters) = &mut *state else {
            return Ok(());
        };
        let waiters = std::mem::take(waiters);
        let Some((paged, source)) = self.filling() else {
            *state = FillState::Running(waiters);
            drop(state);
            finish(&self.state, Ok(None));
            return Ok(());
        };
        *state = FillState::Running(waiters);
        drop(state);
        let (shared, stop) = (self.state.clone(), self.stop.clone());
        let path = paged.db_path().to_path_buf();
        let run = move || {
            let fill = || source.fill(&paged, &stop).map_err(|e| e.to_string());
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(fill))
                .unwrap_or_else(|_| Err("offloop internal error: the fill panicked".into()));
            // What arrived stays: a reopen does not fetch it again.
            let _ = paged.save();
            let result = match result {
                Ok(()) if paged.is_filled() => Ok(Some(source.txid())),
                Ok(()) => Err("the database closed before every page was local".to_string()),
                Err(e) => Err(format!("the paged restore failed: {e}")),
            };
            finish(&shared, result);
        };
        let handle = std::thread::Builder::new()
            .name("offloop-fill".into())
            .spawn(run)
            .map_err(|e| Error::io("start the fill thread", e))?;
        lock(&FILLS)
            .get_or_insert_with(HashMap::new)
            .insert(path, handle);
        Ok(())
    }

    /// Stops the fill (the database closes); what arrived is kept. Those
    /// waiting hear why it did not finish.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some((paged, _)) = self.filling() {
            uninstall(&paged);
        }
        let not_started = matches!(*lock(&self.state), FillState::NotStarted(_));
        if not_started {
            let why = match self.filling() {
                Some(_) => Err("the database closed before the fill began".to_string()),
                None => Ok(None),
            };
            finish(&self.state, why);
        }
    }
}

/// Completes the fill: every waiter hears `result`.
fn finish(state: &Mutex<FillState>, result: Answer) {
    let waiters = match std::mem::replace(&mut *lock(state), FillState::Done(result.clone())) {
        FillState::NotStarted(waiters) | FillState::Running(waiters) => waiters,
        FillState::Done(_) => Vec::new(),
    };
    for reply in waiters {
        reply(result.clone());
    }
}

/// The tag a map file carries: which replica, at which TXID.
fn tag(txid: Txid, url: &str) -> Vec<u8> {
    let mut t = TAG.to_vec();
    t.extend_from_slice(&txid.get().to_be_bytes());
    t.extend_from_slice(url.as_bytes());
    t
}

fn untag(tag: &[u8]) -> Option<(Txid, &str)> {
    let rest = tag.strip_prefix(TAG)?;
    let txid = Txid::new(u64::from_be_bytes(rest.get(..8)?.try_into().ok()?))?;
    Some((txid, std::str::from_utf8(&rest[8..]).ok()?))
}

/// The TXID a paged restore of `db` that has not finished restores (its
/// map file's tag), if one is under way.
pub(crate) fn paged_txid(db: &Path) -> Option<Txid> {
    let record = read_map(&map_path(db)).ok()??;
    untag(&record.tag).map(|(txid, _)| txid)
}

/// Puts the file at `db` in place when it must be: restored whole
/// (`Full`), or created empty with its pages to come (`Paged`), or a paged
/// restore a previous process left carried on. Returns the file being
/// filled and where its pages come from, if any. A `follower`'s file gets
/// no replicator state. When `replicator` leases first, nothing is written
/// before its lease is held: the replica is read meanwhile.
fn prepare(
    db: &Path,
    mode: RestoreMode,
    url: &str,
    s3: &S3Options,
    follower: bool,
    replicator: Option<&Arc<Replicator>>,
) -> std::result::Result<Option<Filling>, String> {
    // Once the lease is held: the replica's newest TXID listed under it
    // (`None` when nothing leases first).
    let may_write = || replicator.and_then(|r| r.wait_for_lease()).transpose();
    // The lease was taken under the id the replicator folder keeps.
    let holder = match replicator.is_some_and(|r| r.leases_first()) {
        true => LeaseHolder::Keep,
        false => LeaseHolder::Drop,
    };
    if is_installed(db) {
        return Err(format!(
            "{} is being restored by another open database in this process",
            db.display()
        ));
    }
    // The fill of an earlier open of this file in this process (closed
    // since, so told to stop) ends first.
    let previous = lock(&FILLS).as_mut().and_then(|m| m.remove(db));
    if let Some(handle) = previous {
        let _ = handle.join();
    }
    let map = map_path(db);
    let record = read_map(&map).map_err(|e| e.to_string())?;
    let exists = db.exists();
    if exists && record.is_none() {
        // An ordinary database: opened as it is (see docs/replication.md
        // for one that is behind its replica).
        return Ok(None);
    }
    let store = Arc::new(ReplicaStore::open(url, s3).map_err(|e| e.to_string())?);
    let (paged, source) = match record.filter(|_| exists) {
        Some(record) => {
            let (txid, from) = untag(&record.tag)
                .ok_or_else(|| format!("{} was not written by offloop", map.display()))?;
            if from != url {
                return Err(format!(
                    "{} is being restored from {from}, not {url}",
                    db.display()
                ));
            }
            let source = Arc::new(PagedReplica::open(store, Target::Txid(txid)).map_err(|e| {
                format!(
                    "cannot carry on restoring {} at TXID {txid}: {e}",
                    db.display()
                )
            })?);
            if source.page_size() != record.page_size || source.page_count() != record.local.pages()
            {
                return Err(format!(
                    "the replica's TXID {txid} does not match the half-restored {}",
                    db.display()
                ));
            }
            may_write()?;
            let paged = Paged::resume(db, record, source.clone()).map_err(|e| e.to_string())?;
            (paged, source)
        }
        None => {
            // A map without its database: a crash before the file was made.
            if mode == RestoreMode::Full {
                may_write()?;
                let _ = std::fs::remove_file(&map);
                let report =
                    restore(&store, db, &RestoreOptions::default()).map_err(|e| e.to_string())?;
                continue_after_restore(db, report.txid, report.page_size, report.pages, holder)
                    .map_err(|e| format!("cannot record the restored state: {e}"))?;
                return Ok(None);
            }
            let plan = || PagedReplica::open(store.clone(), Target::Latest);
            let mut source = Arc::new(plan().map_err(|e| e.to_string())?);
            if let Some(newest) = may_write()? {
                if newest != Some(source.txid()) {
                    // The replica moved between this plan's listing and
                    // the lease's: under the lease it moves no more, so a
                    // second plan is of its newest TXID.
                    source = Arc::new(plan().map_err(|e| e.to_string())?);
                }
                if newest != Some(source.txid()) {
                    return Err(format!(
                        "the replica moved while {} was restored under its lease",
                        db.display()
                    ));
                }
            }
            let _ = std::fs::remove_file(&map);
            if !follower {
                let (txid, size, pages) = (source.txid(), source.page_size(), source.page_count());
                continue_after_restore(db, txid, size, pages, holder)
                    .map_err(|e| format!("cannot record the restored state: {e}"))?;
            }
            let paged = Paged::create(
                db,
                source.page_size(),
                source.page_count(),
                tag(source.txid(), url),
                source.clone(),
            )
            .map_err(|e| format!("cannot create {}: {e}", db.display()))?;
            (paged, source)
        }
    };
    // What the open read already (page 1 and the pages after it), in the
    // file before SQLite asks for it.
    paged
        .write_missing(&source.take_opening_pages())
        .map_err(|e| format!("cannot write the first pages into {}: {e}", db.display()))?;
    if mode == RestoreMode::Full {
        // A paged restore left unfinished, asked for whole: finish it now.
        let never = AtomicBool::new(false);
        source.fill(&paged, &never).map_err(|e| e.to_string())?;
        return Ok(None);
    }
    install(&paged)?;
    Ok(Some((paged, source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_tag_names_its_replica_and_txid_and_nothing_else_reads_as_one() {
        let txid = Txid::new(0x2a).unwrap();
        let t = tag(txid, "s3://b/p");
        assert_eq!(untag(&t), Some((txid, "s3://b/p")));
        assert_eq!(untag(b"something else"), None);
        let mut zero = TAG.to_vec();
        zero.extend_from_slice(&0u64.to_be_bytes());
        assert_eq!(untag(&zero), None, "TXID 0 names no restore");
    }
}
