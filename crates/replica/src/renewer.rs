//! The lease thread (`offloop-lease`): renews the replica's lease every
//! third of its TTL, on a thread of its own so that a slow upload on the
//! replicator's thread never delays a renewal. Past the deadline without
//! one the lease lapses (the `Lease` refuses commits by itself), and the
//! thread goes on trying: a renewal that lands ends the lapse, one that
//! finds the lease taken fences the database for good. Also the holder's
//! id, kept in the replicator's folder beside the database.
//!
//! It never uploads LTX files and never refuses a commit itself: the
//! writer asks the `Lease` before each commit.

use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Sender};

use crate::lease::{Lease, CLOCK_SKEW_BOUND};
use crate::store::Store;

/// After a failed renewal, the next try comes this soon (or at a third of
/// the TTL, if sooner).
const RETRY: Duration = Duration::from_millis(250);

/// The file in the replicator's folder that names this database as a
/// lease holder.
pub(crate) const HOLDER_FILE: &str = "holder";

pub(crate) struct Renewer {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Renewer {
    /// Starts renewing `lease` (just taken). `fenced` hears why, once, if
    /// the lease is lost for good.
    pub(crate) fn start(
        lease: Arc<Lease>,
        store: Arc<dyn Store>,
        fenced: Box<dyn Fn(String) + Send>,
    ) -> io::Result<Renewer> {
        let (stop, stopped) = bounded::<()>(1);
        let thread = std::thread::Builder::new()
            .name("offloop-lease".into())
            .spawn(move || {
                let every = lease.ttl / 3;
                // A third of the TTL after the lease was written, which may
                // be a moment before this thread starts (a promotion takes
                // the lease before it starts replicating).
                let written = lease
                    .deadline()
                    .and_then(|d| d.checked_sub(lease.ttl.saturating_sub(CLOCK_SKEW_BOUND)));
                let mut next = written.unwrap_or_else(Instant::now) + every;
                loop {
                    if lease.deadline().is_none() {
                        return;
                    }
                    if stopped
                        .recv_timeout(next.saturating_duration_since(Instant::now()))
                        .is_ok()
                    {
                        return;
                    }
                    if lease.is_fenced() {
                        return;
                    }
                    let started = Instant::now();
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        lease.renew(&*store)
                    })) {
                        Ok(Ok(())) => next = started + every,
                        Ok(Err(_)) if lease.is_fenced() => {
                            fenced(lease.why_fenced().unwrap_or_default());
                            return;
                        }
                        Ok(Err(_)) => next = Instant::now() + RETRY.min(every),
                        Err(_) => {
                            lease.renewal_failed("offloop internal error: a renewal panicked");
                            next = Instant::now() + RETRY.min(every);
                        }
                    }
                }
            })?;
        Ok(Renewer {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Renewer {
    fn drop(&mut self) {
        let _ = self.stop.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// This database's name as a lease holder: made once and kept in its
/// replicator folder `dir`, so the same database reopened (after a crash
/// too) is the same holder, and a copy elsewhere with no folder is not.
pub(crate) fn holder_id(dir: &Path) -> io::Result<String> {
    let path = dir.join(HOLDER_FILE);
    match fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => return Ok(id.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // RandomState is seeded from the system's randomness, per process.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    let id = format!("{host}:offloop-{:016x}", h.finish());
    offloop_file::replace_file(&path, id.as_bytes())?;
    Ok(id)
}
