//! `Replicator`: continuous replication of one database, run by the
//! process's replicator pool (`offloop-replicator` threads, shared by
//! every replicated database), and the engine's WAL observer.
//!
//! # Design
//!
//! The writer tells the replicator of each commit (a one-slot wake-up that
//! schedules the database's next step, never a wait); a pool thread then
//! copies the new committed frames from the `-wal` file into its capture
//! log, and every
//! `sync_interval` turns the log into one L0 file and uploads what waits in
//! the outbox, in TXID order. Before any checkpoint the engine asks for a
//! permit: the caller's thread captures the short tail itself (and, when
//! the writer may commit during the checkpoint, pins a read snapshot at the
//! captured end so the copy cannot pass it), so no frame is ever
//! overwritten uncaptured, and an upload in progress never holds a
//! checkpoint up. Compaction, L9 snapshots and retention run in the same
//! database's steps after uploads, when due. A database's steps never run
//! on two threads at once, so they keep their order; a slow store holds
//! one pool thread, not the pool (see `pool`).
//!
//! Faults: a replica that fails leaves the data in the outbox, retried with
//! backoff (`last_error` says why); writes never wait for it. Past
//! `max_pending_bytes` waiting, the outbox and capture are dropped and,
//! once the replica answers, a full image restarts the chain at the next
//! TXID. Before uploading (at start and after every failure) the replica's
//! position is checked against the outbox: a replica that is behind with a
//! gap, ahead, or unrelated gets a full image at its next TXID instead.
//!
//! It never runs on the JS thread: `stats()` reads atomics, and every
//! other call only sends a message.
//!
//! Files: this one holds the public handle and the engine's observer
//! calls; `shared` the state they share with the steps; `pool` the
//! threads and the timer; `replication` a database's step (what is due,
//! and when next); `worker` the state between steps; `upload` the sync
//! round; `housekeeping` compaction,
//! snapshots and retention, each only when `backlog` says something new
//! is there; `worker_lease` taking and giving back the lease.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use offloop_engine::queue::{unbounded, Sender};
use offloop_engine::{CheckpointPermit, CheckpointWrites, WalObserver};
use offloop_ltx::Txid;

use crate::lease::Lease;
use crate::pool::{Lane, Wake};
use crate::replication::Replication;
use crate::settings::ReplicaSettings;
use crate::shared::{Command, Counters, Local, Shared};
use crate::stager::now_ms;
use crate::worker::Worker;

pub use crate::shared::{Answer, Connect, Handover, Reply};
pub use crate::worker::state_dir;

/// What `stats()` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaStats {
    pub url: String,
    /// The last TXID the replica holds (`None`: none yet).
    pub txid: Option<Txid>,
    /// How long the oldest commit not yet in the replica has waited.
    pub lag: Duration,
    pub pending_files: u64,
    pub pending_bytes: u64,
    pub bytes_shipped: u64,
    /// Uploads that made writes waiting for the replica durable
    /// (`durability: 'replica'`), and the writes they answered: their
    /// ratio is how many commits share an upload.
    pub durable_rounds: u64,
    pub durable_writes: u64,
    /// When the last upload succeeded (ms since the epoch).
    pub last_sync_at_ms: Option<i64>,
    pub last_error: Option<String>,
}

pub struct Replicator {
    shared: Arc<Shared>,
    /// Boxed, as the engine's jobs are: the queue keeps a block of 31
    /// slots for as long as the database is open.
    commands: Sender<Box<Command>>,
    /// The database's place in the replicator pool.
    lane: Arc<Lane>,
}

impl Replicator {
    /// Starts replicating, on the replicator pool (its first step connects
    /// to the replica). It waits for the engine's `opened` before it
    /// touches any file.
    pub fn start(settings: ReplicaSettings, connect: Connect) -> std::io::Result<Arc<Self>> {
        Self::start_with(settings, connect, None)
    }

    /// Starts the replicator of a promoted follower, which goes on from
    /// where `handover` says with the lease it holds: its open reads
    /// nothing of the replica.
    pub fn take_over(
        settings: ReplicaSettings,
        connect: Connect,
        handover: Handover,
    ) -> std::io::Result<Arc<Self>> {
        Self::start_with(settings, connect, Some(handover))
    }

    fn start_with(
        settings: ReplicaSettings,
        connect: Connect,
        handover: Option<Handover>,
    ) -> std::io::Result<Arc<Self>> {
        let lane = Lane::new();
        let (commands, inbox) = unbounded();
        let (durable, waiting) = unbounded();
        let lease = match &handover {
            Some(h) => Some(h.lease.clone()),
            None => settings.lease_ttl.map(|ttl| Arc::new(Lease::new(ttl))),
        };
        let shared = Arc::new(Shared {
            lease,
            leased: Mutex::new(None),
            leased_changed: Condvar::new(),
            rest: Default::default(),
            settings,
            local: Mutex::new(Local::Waiting),
            local_changed: Condvar::new(),
            pin: Arc::default(),
            image: Mutex::new(None),
            counters: Counters::default(),
            wake: Wake::new(Arc::downgrade(&lane)),
            durable,
        });
        let worker = Worker::new(shared.clone(), handover);
        lane.start(Box::new(Replication::new(worker, connect, inbox, waiting)))?;
        Ok(Arc::new(Replicator {
            shared,
            commands,
            lane,
        }))
    }

    /// Calls `reply` once the replicator knows where the replica stands:
    /// with an error if it never will (a bad URL, refused credentials, a
    /// local folder it cannot write), else with the replica's TXID. A
    /// replica that is only down does not fail this: it is retried.
    pub fn ready(&self, reply: Reply) {
        self.send(Command::Ready(reply));
    }

    /// For a database restored at open (`ReplicaSettings::restore_at`) with
    /// a lease: blocks until the replicator, which takes the lease and then
    /// lists the replica as soon as it has connected, holds it (Ok, with
    /// the replica's newest TXID in that listing: `None` when it holds no
    /// file), or with why it will not (held by another writer, the replica
    /// refused). The restore calls this before it writes anything, on the
    /// writer's thread. `None` for any other database, at once: its lease
    /// is taken once it has opened.
    pub fn wait_for_lease(&self) -> Option<Answer> {
        self.leases_first().then(|| self.shared.wait_leased())
    }

    /// Whether the lease is taken as the replicator starts, beside a
    /// restore at open (see [`Replicator::wait_for_lease`]).
    pub fn leases_first(&self) -> bool {
        self.shared.lease.is_some() && self.shared.settings.restore_at.is_some()
    }

    /// Captures every commit made so far, stages and uploads it; `reply`
    /// hears the replica's TXID once every one of them is in the replica.
    pub fn sync(&self, reply: Reply) {
        self.send(Command::Sync(reply));
    }

    /// `reply` hears the replica's TXID once every commit made before this
    /// call is in the replica. Calls made while an upload is in flight
    /// share the next one, which starts as soon as that one ends; a failed
    /// upload is retried and the call keeps waiting; a fenced database
    /// answers with why (see [`Replicator::fenced`]).
    pub fn durable(&self, reply: Reply) {
        match self.shared.durable.send(reply) {
            Ok(()) => self.lane.schedule(),
            Err(err) => (err.0)(Err("replication has stopped".into())),
        }
    }

    /// Why this database may no longer write to its replica (its lease is
    /// lost, or may be): commits are refused from then on. `None` while it
    /// may, or when it holds no lease.
    pub fn fenced(&self) -> Option<String> {
        self.shared.fenced()
    }

    /// The holder's name in the replica's lease, once it is taken.
    pub fn lease_holder(&self) -> Option<String> {
        let lease = self.shared.lease.as_ref()?;
        lease.deadline()?;
        Some(lease.owner().to_string())
    }

    /// Ships what is committed (trying for a bounded time), then ends the
    /// replication; `reply` hears the replica's TXID. The database may go on
    /// without replication.
    pub fn stop(&self, reply: Reply) {
        self.send(Command::Stop {
            reply,
            closed: false,
        });
    }

    /// `stop` for a database that has closed: when everything was shipped,
    /// it also records the database as the replica's last TXID left it, so
    /// the next open carries on without a full snapshot.
    pub fn close(&self, reply: Reply) {
        self.send(Command::Stop {
            reply,
            closed: true,
        });
    }

    /// Waits for the replication to end (after `stop`), on the caller's
    /// thread.
    pub fn join(&self) {
        self.lane.join();
    }

    fn send(&self, command: Command) {
        match self.commands.send(Box::new(command)) {
            Ok(()) => self.lane.schedule(),
            Err(err) => match *err.0 {
                Command::Ready(reply) | Command::Sync(reply) | Command::Stop { reply, .. } => {
                    reply(Err("replication has stopped".into()))
                }
                Command::Opened(_) => {}
            },
        }
    }

    pub fn stats(&self) -> ReplicaStats {
        let c = &self.shared.counters;
        let now = now_ms();
        // The uncaptured time first: see `Shared::take_uncaptured`.
        let uncaptured = c.oldest_uncaptured_ms.load(Ordering::SeqCst);
        let oldest = [uncaptured, c.oldest_pending_ms.load(Ordering::SeqCst)]
            .into_iter()
            .filter(|&t| t > 0)
            .min();
        let last_sync = c.last_sync_at_ms.load(Ordering::Relaxed);
        ReplicaStats {
            url: self.shared.settings.url.clone(),
            txid: Txid::new(c.txid.load(Ordering::Relaxed)),
            // At least 1 ms while anything waits: 0 says nothing does.
            lag: Duration::from_millis(oldest.map_or(0, |t| (now - t).max(1) as u64)),
            pending_files: c.pending_files.load(Ordering::Relaxed),
            pending_bytes: c.pending_bytes.load(Ordering::Relaxed),
            bytes_shipped: c.bytes_shipped.load(Ordering::Relaxed),
            durable_rounds: c.durable_rounds.load(Ordering::Relaxed),
            durable_writes: c.durable_writes.load(Ordering::Relaxed),
            last_sync_at_ms: (last_sync > 0).then_some(last_sync),
            // While the lease refuses commits, that is why writes fail,
            // whatever the last round said.
            last_error: self.shared.refusal().or_else(|| {
                c.last_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
            }),
        }
    }
}

/// A replicator dropped without `stop` ends its replication as the thread
/// of its own did when its inbox closed: the waiting hear that it stopped.
impl Drop for Replicator {
    fn drop(&mut self) {
        let (closed, _) = unbounded();
        drop(std::mem::replace(&mut self.commands, closed));
        self.lane.schedule();
    }
}

impl WalObserver for Replicator {
    fn opened(&self, path: &str) {
        self.send(Command::Opened(PathBuf::from(path)));
    }

    fn committed(&self) {
        let c = &self.shared.counters;
        let _ = c.oldest_uncaptured_ms.compare_exchange(
            0,
            now_ms(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.shared.wake.try_send(());
    }

    /// Past the lease's deadline, or fenced, no commit may be acknowledged:
    /// the writer turns it into a rollback.
    fn refuses_commits(&self) -> bool {
        self.shared
            .lease
            .as_ref()
            .is_some_and(|lease| lease.refuses_commits())
    }

    /// Asked on the writer's lane, idle (see `rest.rs`); a panic is a no.
    fn may_rest(&self) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.shared.may_rest())).unwrap_or(false)
    }

    /// The writer closed its connection after `may_rest` said yes; a
    /// panic is a no.
    fn rested(&self) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.shared.rest())).unwrap_or(false)
    }

    /// The process needs the writer's connection back: a sync round now,
    /// rather than at the next interval, lets it rest sooner; `shipped`
    /// runs once the replica holds every commit (not when fenced).
    fn hurry(&self, shipped: Box<dyn FnOnce() + Send>) {
        self.send(Command::Sync(Box::new(move |answer| {
            if answer.is_ok() {
                shipped();
            }
        })));
    }

    /// The two read-only connections (`pin`, `image`), each with its
    /// database file and WAL open, and the capture log.
    fn connections(&self) -> usize {
        2
    }

    /// Runs on the engine's threads: a panic here must not end one of
    /// them, so it becomes a free permit.
    fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit {
        catch_unwind(AssertUnwindSafe(|| self.shared.permit(writes)))
            .unwrap_or_else(|_| CheckpointPermit::free())
    }
}
