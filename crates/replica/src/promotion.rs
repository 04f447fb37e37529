//! Promotion: the steps by which a follower's database becomes its
//! replica's writer, each one a plain function its caller runs in order
//! on a thread of its own: name the holder, take the lease, and, once the
//! follower has stopped at the replica's head, leave the local state the
//! replicator needs to go on from the next TXID with an incremental L0
//! file (never a full image of what the replica already holds).
//!
//! Also what a follower that may promote itself reads: the lease's state
//! (a GET of `lock.json`, and one of the process lease it names), and when
//! to read it next.
//!
//! It writes only the replicator's folder and the follower's record
//! beside the database. It never applies, never uploads an LTX file,
//! never touches a database page, and knows nothing of Node.

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use offloop_file::{sync_parent, PositionedIo};
use offloop_ltx::Txid;

use crate::capture::{CaptureLog, CaptureStart};
use crate::error::Result;
use crate::follow_record::record_path;
use crate::lease::{Lease, LeaseRecord, Refusal, LEASE_OBJECT};
use crate::lease_record::process_lease_file;
use crate::page_io::database_page_size;
use crate::rejoin::mark_writer;
use crate::renewer::holder_id;
use crate::stager::{now_ms, BEFORE_WAL};
use crate::store::{Store, Versioned};
use crate::wal::{read_committed, WalHeader, WalPosition};
use crate::worker::state_dir;

/// What a follower sees of its replica's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseState {
    /// No `lock.json`: the writer takes no lease (an older offloop, or a
    /// writer that is not offloop's), so its loss cannot be seen.
    Absent,
    /// Another holder's lease is live; `why` says whose and until when,
    /// `expires_at_ms` (ms since the epoch) is when it runs out unless
    /// renewed.
    Held { why: String, expires_at_ms: i64 },
    /// Expired or released, or this database's own: it may be taken, over
    /// the object as read (`take_lease` then need not read it again).
    Free(Versioned),
}

/// This database's name as a lease holder, made and kept in its
/// replicator folder as a writer's is, with the replica it writes to
/// (which is how a later rejoin knows the file as this replica's writer's).
pub fn holder(db: &Path, url: &str) -> io::Result<String> {
    let dir = state_dir(db);
    fs::create_dir_all(&dir)?;
    let owner = holder_id(&dir)?;
    mark_writer(&dir, url)?;
    Ok(owner)
}

/// Why the holder's id (`holder`, or a writer's at its lease) could not
/// be kept: out of file descriptors, with what to change.
pub fn holder_unkept(error: &io::Error) -> String {
    format!(
        "cannot keep the lease holder's id next to the database: {}",
        offloop_engine::explain_os_error(error)
    )
}

/// Takes the replica's lease for `owner` with `ttl`: the lease, to give
/// back with `Lease::release` if the promotion goes no further, or why
/// not (`Refusal::Held` names the holder). `seen`: the lease object as
/// the lease watch just read it free, written over without reading it
/// again (one round trip fewer).
pub fn take_lease(
    store: &dyn Store,
    ttl: Duration,
    owner: String,
    seen: Option<&Versioned>,
) -> std::result::Result<Arc<Lease>, Refusal> {
    let lease = Arc::new(Lease::new(ttl));
    lease.set_owner(owner);
    match seen {
        Some(seen) => lease.acquire_seen(store, seen)?,
        None => lease.acquire(store)?,
    }
    Ok(lease)
}

/// The replica's lease as `owner` sees it now: a GET of `lock.json`, and
/// when it names a process lease that may still be renewed, a GET of that
/// one, whose life is the lease's. Expiry is judged as the lease says, by
/// this machine's wall clock: the holder stops `CLOCK_SKEW_BOUND` before,
/// by its own monotonic clock.
pub fn lease_state(store: &dyn Store, owner: &str) -> Result<LeaseState> {
    lease_state_counted(store, owner, &AtomicU64::new(0))
}

/// [`lease_state`], adding each GET it makes to `gets`.
pub fn lease_state_counted(store: &dyn Store, owner: &str, gets: &AtomicU64) -> Result<LeaseState> {
    gets.fetch_add(1, Ordering::Relaxed);
    let Some(object) = store.read_object(LEASE_OBJECT)? else {
        return Ok(LeaseState::Absent);
    };
    let unreadable = |what: &str, why: String| {
        crate::Error::State(format!("the replica's {what} cannot be read: {why}"))
    };
    let record = LeaseRecord::decode(&object.bytes).map_err(|why| unreadable(LEASE_OBJECT, why))?;
    let expires_at_ms = match &record.process_lease {
        Some(name) if !record.is_dead() => {
            let file = process_lease_file(name).unwrap_or_default();
            gets.fetch_add(1, Ordering::Relaxed);
            match store.lease_root()?.store.read_object(file)? {
                Some(v) => {
                    LeaseRecord::decode(&v.bytes)
                        .map_err(|why| unreadable(name, why))?
                        .expires_at_ms
                }
                None => 0,
            }
        }
        _ => record.expires_at_ms,
    };
    Ok(if now_ms() <= expires_at_ms && record.owner != owner {
        LeaseState::Held {
            why: format!(
                "the replica's lease is held by {} until {}",
                record.owner,
                crate::store::go_rfc3339_nano(expires_at_ms)
            ),
            expires_at_ms,
        }
    } else {
        LeaseState::Free(object)
    })
}

/// How long a lease watch that reads the lease every `every` waits after
/// a read that found `state` at `now_ms` (ms since the epoch): `every`, or
/// less when a live lease runs out sooner by this clock, so a holder that
/// stopped renewing is seen the moment its lease expires.
pub fn watch_wait(state: &LeaseState, every: Duration, now_ms: i64) -> Duration {
    match state {
        // Live up to and at `expires_at_ms`: expired a millisecond later.
        LeaseState::Held { expires_at_ms, .. } => {
            let left = expires_at_ms.saturating_add(1).saturating_sub(now_ms);
            every.min(Duration::from_millis(left.max(1) as u64))
        }
        _ => every,
    }
}

/// Leaves, for the database at `db` (its follower stopped at the
/// replica's TXID `head`, its writer idle), the replicator's state of a
/// writer whose chain is intact at `head`: a capture log that starts at
/// the WAL's end and gives its first file TXID `head + 1`. The follower's
/// record goes last: from then on the file is a writer's, and a follower
/// opened on it later sets it aside instead of applying over commits of
/// its own. Any other state in the folder (but the holder's id) is of an
/// earlier life and is dropped.
pub fn continue_as_writer(db: &Path, head: Txid) -> io::Result<()> {
    let dir = state_dir(db);
    fs::create_dir_all(&dir)?;
    for name in ["outbox", "scratch"] {
        match fs::remove_dir_all(dir.join(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    for name in ["capture", "clean"] {
        remove_if_present(&dir.join(name))?;
    }
    let (page_size, commit, from) = where_the_wal_ends(db)?;
    let mut log = CaptureLog::create(
        &dir.join("capture"),
        CaptureStart {
            page_size,
            base_commit: commit,
            next_txid: head.next(),
            from,
        },
    )?;
    log.make_durable()?;
    remove_if_present(&record_path(db))?;
    sync_parent(db)
}

/// The page size, the database's size in pages, and the WAL position
/// after its last committed transaction (before any WAL when there is
/// none).
fn where_the_wal_ends(db: &Path) -> io::Result<(u32, u32, WalPosition)> {
    let mut wal_path = db.as_os_str().to_owned();
    wal_path.push("-wal");
    let wal = match File::open(&wal_path) {
        Ok(f) => WalHeader::read(&f)?.map(|h| (f, h)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let mut commit = None;
    let mut end = BEFORE_WAL;
    if let Some((file, header)) = &wal {
        end = read_committed(file, header, WalPosition::start(header), u64::MAX, |txn| {
            commit = Some(txn.commit);
            Ok(())
        })?;
    }
    let file = File::open(db)?;
    let page_size = match (&wal, database_page_size(&file)?) {
        (_, Some(size)) => size,
        (Some((_, header)), None) => header.page_size,
        (None, None) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the database has no pages",
            ))
        }
    };
    let commit = match commit {
        Some(c) => c,
        // Everything is in the database file: its header counts its pages
        // (SQLite keeps that count valid in WAL mode).
        None => {
            let mut b = [0u8; 4];
            file.read_exact_at(&mut b, 28)?;
            u32::from_be_bytes(b)
        }
    };
    Ok((page_size, commit, end))
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}
