//! A database's place in its process lease's renewals (`Renewer`), and
//! the holder's id, kept in the replicator's folder beside the database.
//!
//! The renewals themselves run on the process lease's one thread
//! (`offloop-lease`, in `process_lease`) for every database of the process
//! under the same lease root: a database adds no thread and no request.
//! Past the deadline without a renewal the lease lapses (the `Lease`
//! refuses commits by itself); a renewal that finds the process lease
//! taken fences every database under it, and the `Renewer` tells this one.
//!
//! It never uploads LTX files and never refuses a commit itself: the
//! writer asks the `Lease` before each commit.

use std::fs;

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::lease::Lease;
use crate::lease_record::{host_name, random_id};

/// The file in the replicator's folder that names this database as a
/// lease holder.
pub(crate) const HOLDER_FILE: &str = "holder";

/// This database's share of its process lease's renewals, from when it
/// took its lease until it gave it back. Dropped while the lease is still
/// held (a close that could not ship everything), it leaves without giving
/// `lock.json` back: the lease then lives as long as the process lease.
pub(crate) struct Renewer {
    lease: Arc<Lease>,
}

impl Renewer {
    /// Starts counting `lease` (just taken) among its process lease's
    /// databases. `fenced` hears why, once, if the lease is lost for good.
    pub(crate) fn start(lease: Arc<Lease>, fenced: Box<dyn Fn(String) + Send>) -> Renewer {
        let fenced = Mutex::new(fenced);
        lease.on_fence(Arc::new(move |why| {
            (fenced.lock().unwrap_or_else(|e| e.into_inner()))(why)
        }));
        Renewer { lease }
    }
}

impl Drop for Renewer {
    fn drop(&mut self) {
        self.lease.abandon();
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
    let id = format!("{}:offloop-{}", host_name(), random_id());
    offloop_file::replace_file(&path, id.as_bytes())?;
    Ok(id)
}
