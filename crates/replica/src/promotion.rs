//! Promotion: the steps by which a follower's database becomes its
//! replica's writer, each one a plain function its caller runs in order
//! on a thread of its own: name the holder, take the lease, and, once the
//! follower has stopped at the replica's head, leave the local state the
//! replicator needs to go on from the next TXID with an incremental L0
//! file (never a full image of what the replica already holds).
//!
//! Also what a follower that may promote itself reads: the lease's state
//! (one GET of `lock.json`).
//!
//! It writes only the replicator's folder and the follower's record
//! beside the database. It never applies, never uploads an LTX file,
//! never touches a database page, and knows nothing of Node.

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use offloop_file::PositionedIo;
use offloop_ltx::Txid;

use crate::capture::{CaptureLog, CaptureStart};
use crate::error::Result;
use crate::follow_record::record_path;
use crate::lease::{Lease, LeaseRecord, Refusal, LEASE_OBJECT};
use crate::page_io::database_page_size;
use crate::rejoin::{mark_writer, sync_parent};
use crate::renewer::holder_id;
use crate::stager::{now_ms, BEFORE_WAL};
use crate::store::Store;
use crate::wal::{read_committed, WalHeader, WalPosition};
use crate::worker::state_dir;

/// What a follower sees of its replica's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseState {
    /// No `lock.json`: the writer takes no lease (an older offloop, or a
    /// writer that is not offloop's), so its loss cannot be seen.
    Absent,
    /// Another holder's lease is live; the text says whose and until when.
    Held(String),
    /// Expired or released, or this database's own: it may be taken.
    Free,
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

/// Takes the replica's lease for `owner` with `ttl`: the lease, to give
/// back with `Lease::release` if the promotion goes no further, or why
/// not (`Refusal::Held` names the holder).
pub fn take_lease(
    store: &dyn Store,
    ttl: Duration,
    owner: String,
) -> std::result::Result<Arc<Lease>, Refusal> {
    let lease = Arc::new(Lease::new(ttl));
    lease.set_owner(owner);
    lease.acquire(store)?;
    Ok(lease)
}

/// The replica's lease as `owner` sees it now (one GET). Expiry is judged
/// as the lease says, by this machine's wall clock: the holder stops
/// `CLOCK_SKEW_BOUND` before, by its own monotonic clock.
pub fn lease_state(store: &dyn Store, owner: &str) -> Result<LeaseState> {
    let Some(object) = store.read_object(LEASE_OBJECT)? else {
        return Ok(LeaseState::Absent);
    };
    let record = LeaseRecord::decode(&object.bytes).map_err(|why| {
        crate::Error::State(format!(
            "the replica's {LEASE_OBJECT} cannot be read: {why}"
        ))
    })?;
    Ok(if record.is_live(now_ms()) && record.owner != owner {
        LeaseState::Held(format!(
            "the replica's lease is held by {} until {}",
            record.owner,
            crate::store::go_rfc3339_nano(record.expires_at_ms)
        ))
    } else {
        LeaseState::Free
    })
}

/// Leaves, for the database at `db` (its follower stopped at the
/// replica's TXID `head`, its writer idle), the replicator's state of a
/// writer whose chain is intact at `head`: a capture log that starts at
/// the WAL's end and gives its first file TXID `head + 1`. The follower's
/// record goes last: from then on the file is a writer's, and a follower
/// opened on it later sets it aside instead of applying over commits of
/// its own. Any other state in the folder (but the holder's id) is of an
/// earlier life and is dropped.
pub fn continue_as_writer(db: &Path, head: u64) -> io::Result<()> {
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
            next_txid: Txid::new(head).map_or(Txid::FIRST, Txid::next),
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
