//! The replicator thread's hold on the replica's lease: taking it (once
//! the database opened, or before a restore at open writes anything),
//! starting its renewals, and giving it back at a clean stop.
//!
//! It runs only on the replicator thread, as methods of its `Worker`. It
//! never decides whether a commit may be acknowledged (the `Lease` does)
//! and never renews by itself (the process lease's thread does).

use std::path::Path;
use std::sync::Arc;

use crate::lease::{Lease, Refusal};
use crate::promotion::holder_unkept;
use crate::rejoin::mark_writer;
use crate::renewer::{holder_id, Renewer};
use crate::store::Store;
use crate::worker::{state_dir, Worker};

impl Worker {
    /// Takes the replica's lease as the holder this database's local state
    /// names, and starts renewing it.
    pub(crate) fn take_lease(&mut self, lease: Arc<Lease>, db: &Path) -> Result<(), String> {
        let url = &self.shared.settings.url;
        let dir = state_dir(db);
        let owner = holder_id(&dir)
            .and_then(|owner| mark_writer(&dir, url).map(|()| owner))
            .map_err(|e| holder_unkept(&e))?;
        lease.set_owner(owner);
        let store = self.store().map_err(|e| format!("replica {url}: {e}"))?;
        lease.acquire(&*store).map_err(|refusal| match refusal {
            Refusal::Held(why) => format!("replica {url}: {why}"),
            Refusal::Store(e) => format!("replica {url}: cannot take its lease: {e}"),
        })?;
        self.renew(lease, store)
    }

    /// Counts `lease`, which this holder has just taken, among its process
    /// lease's databases, whose renewals keep it live.
    pub(crate) fn renew(
        &mut self,
        lease: Arc<Lease>,
        _store: Arc<dyn Store>,
    ) -> Result<(), String> {
        let shared = self.shared.clone();
        let fenced = Box::new(move |why: String| {
            shared.set_error(why);
            let _ = shared.wake.try_send(());
        });
        self.renewer = Some(Renewer::start(lease, fenced));
        Ok(())
    }

    /// Takes the lease for a database the open is about to restore, before
    /// its file exists: the replicator folder is made first, where the
    /// restored database's replication state will be (a fresh one when the
    /// file is missing, as the restore would make it, dropping what a
    /// previous database at that path left), so the holder's id is kept
    /// with it. A refused lease leaves no fresh folder behind.
    pub(crate) fn take_lease_first(&mut self, lease: Arc<Lease>, db: &Path) -> Result<(), String> {
        let dir = state_dir(db);
        let fresh = !db.exists();
        let made = (|| {
            if fresh {
                remove_dir_if_present(&dir)?;
            }
            std::fs::create_dir_all(&dir)
        })();
        made.map_err(|e| holder_unkept(&e))?;
        let taken = self.take_lease(lease, db);
        if taken.is_err() && fresh {
            let _ = remove_dir_if_present(&dir);
        }
        taken
    }

    /// Gives the lease up, when it is still surely this holder's, then
    /// leaves the process lease's renewals; a release that fails leaves it
    /// to expire with the process lease.
    pub(crate) fn release_lease(&mut self) {
        if let (Some(lease), Ok(store)) = (&self.shared.lease, self.store()) {
            if let Err(e) = lease.release(&*store) {
                self.shared
                    .set_error(format!("could not release the replica's lease: {e}"));
            }
        }
        self.renewer.take();
    }
}

fn remove_dir_if_present(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
