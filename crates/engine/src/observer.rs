//! The WAL observer hook: how something outside the engine (the replicator)
//! hears of every commit and gets a say before every checkpoint that could
//! let the WAL restart. Frames are overwritten only after a restart, and a
//! restart needs a checkpoint that copied every frame first; so an observer
//! that captures every committed frame before each checkpoint loses none,
//! without polling and without holding a read transaction open.
//!
//! This file owns the trait and the slot the engine's threads read it from.
//! It knows nothing of what implements the trait, and never blocks a writer
//! on its own: `committed` must return at once, and only a checkpoint (on
//! whichever thread runs it) waits in `before_checkpoint`.

use std::sync::{Arc, RwLock};

/// Whether the writer can commit while a checkpoint runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointWrites {
    /// The checkpointer's own passes: commits may land during the copy, so
    /// the observer must keep the copy from passing what it captured.
    Concurrent,
    /// On the writer's thread, or after the writer has gone: nothing can
    /// commit until the checkpoint ends.
    Excluded,
}

/// Kept alive for the length of one checkpoint, then dropped.
pub struct CheckpointPermit {
    _guard: Option<Box<dyn Send>>,
    refused: bool,
}

impl CheckpointPermit {
    /// A permit that holds nothing back.
    pub fn free() -> Self {
        CheckpointPermit {
            _guard: None,
            refused: false,
        }
    }

    /// A permit that keeps `guard` until the checkpoint ends.
    pub fn holding(guard: Box<dyn Send>) -> Self {
        CheckpointPermit {
            _guard: Some(guard),
            refused: false,
        }
    }

    /// No permit: the observer cannot keep the copy from passing what it
    /// has seen while the writer commits, so this checkpoint must not run.
    /// Only a `Concurrent` request may be refused; the checkpointer then
    /// leaves the WAL to the writer's catch-up, where nothing commits.
    pub fn refused() -> Self {
        CheckpointPermit {
            _guard: None,
            refused: true,
        }
    }

    pub fn is_refused(&self) -> bool {
        self.refused
    }
}

pub trait WalObserver: Send + Sync {
    /// The writer opened the database file at `path` (absolute).
    fn opened(&self, path: &str);
    /// Something was committed. Called on the writer's thread after the job
    /// that committed it; must not block.
    fn committed(&self);
    /// A checkpoint is about to run on the calling thread. Returns once the
    /// observer has what it needs; the permit lives until the checkpoint
    /// ends.
    fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit;
    /// Whether the writer must turn the commit it is about to make into a
    /// rollback (it fails with `SQLITE_CONSTRAINT_COMMITHOOK`). Called on
    /// the writer's thread inside every commit; must be cheap and must not
    /// block.
    fn refuses_commits(&self) -> bool {
        false
    }
    /// Whether the writer may close its idle connection (the idle close,
    /// see `doze.rs`): the observer has everything it needs from the WAL
    /// and can let go of what it holds for the database until `opened` is
    /// called again. Called on the writer's thread, idle; by default no.
    fn may_rest(&self) -> bool {
        false
    }
    /// The writer closed its idle connection after `may_rest` (the close
    /// captured the WAL's last frames first, as at the database's close):
    /// whether the observer let go of what it holds. If not (another
    /// connection of the process held the WAL), the writer counts
    /// `connections()` for it still, and calls again once the database's
    /// other connections have closed. By default yes.
    fn rested(&self) -> bool {
        true
    }
    /// The process is over its cap on connections and asked the idle
    /// writer to close, but `may_rest` said not yet: whatever it waits for
    /// (shipping) should happen now rather than on its schedule, and
    /// `shipped` runs once it has (the writer then looks again at once).
    fn hurry(&self, shipped: Box<dyn FnOnce() + Send>) {
        drop(shipped);
    }
    /// How many connections' worth of files the observer keeps open for
    /// the database while its writer is open: they count against the
    /// process's cap on connections (`Database.configure({ connections })`).
    fn connections(&self) -> usize {
        0
    }
}

/// Where the engine's threads find the current observer; `Database`
/// replaces it when replication starts or stops on an open database.
#[derive(Default)]
pub struct ObserverSlot {
    /// The observer and the database path, under one lock so that an
    /// observer installed while the writer opens hears `opened` exactly once.
    state: RwLock<SlotState>,
}

#[derive(Default)]
struct SlotState {
    observer: Option<Arc<dyn WalObserver>>,
    path: Option<String>,
}

impl std::fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObserverSlot")
            .field("set", &self.is_set())
            .finish()
    }
}

impl ObserverSlot {
    pub fn get(&self) -> Option<Arc<dyn WalObserver>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .observer
            .clone()
    }

    /// Installs `observer` (or removes the current one). One installed after
    /// the writer opened hears `opened` at once.
    pub fn set(&self, observer: Option<Arc<dyn WalObserver>>) {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        if let (Some(observer), Some(path)) = (&observer, &state.path) {
            observer.opened(path);
        }
        state.observer = observer;
    }

    /// The writer opened `path`: tells the current observer, and any later.
    pub fn opened(&self, path: &str) {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        state.path = Some(path.to_string());
        if let Some(observer) = &state.observer {
            observer.opened(path);
        }
    }

    pub fn committed(&self) {
        if let Some(observer) = self.get() {
            observer.committed();
        }
    }

    pub fn refuses_commits(&self) -> bool {
        self.get()
            .is_some_and(|observer| observer.refuses_commits())
    }

    /// With no observer, yes.
    pub fn may_rest(&self) -> bool {
        self.get().is_none_or(|observer| observer.may_rest())
    }

    /// With no observer, yes.
    pub fn rested(&self) -> bool {
        self.get().is_none_or(|observer| observer.rested())
    }

    pub fn hurry(&self, shipped: Box<dyn FnOnce() + Send>) {
        if let Some(observer) = self.get() {
            observer.hurry(shipped);
        }
    }

    pub fn connections(&self) -> usize {
        self.get().map_or(0, |observer| observer.connections())
    }

    pub fn before_checkpoint(&self, writes: CheckpointWrites) -> CheckpointPermit {
        match self.get() {
            Some(observer) => observer.before_checkpoint(writes),
            None => CheckpointPermit::free(),
        }
    }

    pub fn is_set(&self) -> bool {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .observer
            .is_some()
    }
}
