//! `NativeDatabase`: the addon's handle on one engine database. Each method
//! turns JS arguments into an engine request whose completion lands on this
//! environment's completion queue under the caller's call id. No method
//! touches SQLite; the finalizer only drops the engine handle, which lets
//! the threads close their connections themselves.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::External;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use offloop_engine::{
    self as engine, Cancelled, CheckpointMode, Request, ScopeKind, Sql, TransactionMode,
};
use offloop_replica::{Follower, RestoreAtOpen};

use super::dispatch::{
    cursor_ref, done_for, queue, Cancel, Dispatcher, Hold, ScopeCell, ITERATE_CHUNK_ROWS,
};
use super::follow;
use super::js::{Cx, Js};
use super::open::OpenOptions;
use super::paged;
use super::params::Args;
use super::promote::{lock, Promotion, ReplicatorSlot};
use super::protocol;
use super::replica::{self, ReplicaOptions, ReplicaStats};
use super::stats::DatabaseStats;

#[napi]
pub struct NativeDatabase {
    /// Shared with the handle the spread calls take (`dispatcher()`).
    pub(super) dispatcher: Rc<Dispatcher>,
    /// The replicator, while the database replicates (a promotion may
    /// fill it from its own thread).
    replicator: ReplicatorSlot,
    /// The `restore` open option's work: a paged restore's fill.
    restore: RestoreAtOpen,
    /// The `follow` open option's follower.
    follower: Option<Arc<Follower>>,
    /// The follower's promotion to its replica's writer.
    promotion: Option<Arc<Promotion>>,
}

impl NativeDatabase {
    /// The engine database, for the boundary's other modules.
    pub(super) fn engine(&self) -> &engine::Database {
        &self.dispatcher.db
    }

    pub(super) fn restore(&self) -> &RestoreAtOpen {
        &self.restore
    }

    /// The follower, until the database is promoted.
    pub(super) fn follower(&self) -> Option<&Follower> {
        match &self.promotion {
            Some(p) if p.is_promoted() => None,
            _ => self.follower.as_deref(),
        }
    }

    pub(super) fn promotion(&self) -> Option<&Arc<Promotion>> {
        self.promotion.as_ref().filter(|p| !p.is_promoted())
    }
}

#[napi]
impl NativeDatabase {
    /// Starts the database's threads; `open_id` completes when every
    /// connection is open, or with the first error.
    #[napi(constructor, catch_unwind)]
    pub fn new(path: String, options: OpenOptions, open_id: f64) -> Result<Self> {
        let queue = queue()?;
        let mut options = options;
        let replica_options = options.replica.take();
        let restore_mode = options.restore.take();
        let follow_options = options.follow.take();
        let mut settings = options.into_settings(path.clone())?;
        // A follower restores a missing file whole itself; paged, through
        // the paged restore's work, which it runs before its own.
        let restore_mode = restore_mode.filter(|m| follow_options.is_none() || m == "paged");
        let from = match (&follow_options, &replica_options) {
            (Some(f), _) => Some((f.url.as_str(), &f.s3)),
            (None, Some(r)) => Some((r.url.as_str(), &r.s3)),
            (None, None) => None,
        };
        let restore = paged::setup(
            &path,
            restore_mode.as_deref(),
            from,
            follow_options.is_some(),
            &mut settings,
        )?;
        let kept = follow::Kept::default();
        let paged = restore_mode.is_some();
        let follower = follow_options
            .map(|o| follow::setup(&path, o, paged, &mut settings, kept.clone()).map(Arc::new))
            .transpose()?;
        // Installed before the threads start, so the replicator hears the
        // open and every commit from the first.
        let gate = restore.gate();
        let restore_at = paged.then(|| std::path::PathBuf::from(&path));
        let replicator = replica_options
            .map(|o| replica::start(o, gate, restore_at))
            .transpose()?;
        if let Some(replicator) = &replicator {
            let observer: Arc<dyn engine::WalObserver> = replicator.clone();
            settings.observer.set(Some(observer));
            // The replicator takes the lease while the restore reads the
            // replica; the restore writes nothing until it is held.
            restore.write_after(replicator);
        }
        let replicator: ReplicatorSlot = Arc::new(std::sync::Mutex::new(replicator));
        let promotion = follower.as_ref().map(|f| {
            let observer = settings.observer.clone();
            let gate = restore.gate();
            Promotion::new(
                &path,
                f.clone(),
                observer,
                gate,
                replicator.clone(),
                kept.clone(),
            )
        });
        let db = engine::Database::open(settings, done_for(&queue, open_id, 0))
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
        Ok(NativeDatabase {
            dispatcher: Rc::new(Dispatcher::new(db, queue)),
            replicator,
            restore,
            follower,
            promotion,
        })
    }

    /// A handle on a SQL text; statements pass it with every call.
    #[napi(catch_unwind)]
    pub fn sql(&self, text: String) -> External<Arc<Sql>> {
        External::new(self.dispatcher.db.sql(&text))
    }

    /// Queues one statement call (`protocol::call`), on the database or
    /// inside `scope`. Returns `[code, message]` when an argument cannot be
    /// bound (lib/core.js throws it), otherwise nothing. A `cancellable`
    /// call can be stopped with `cancel(id)`. A call outside a scope is held
    /// until `flush`.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn call(
        &self,
        env: Env,
        kind: u32,
        id: f64,
        sql: &External<Arc<Sql>>,
        args: Js,
        flags: u32,
        scope: Option<&External<ScopeCell>>,
        cancellable: bool,
    ) -> Result<Option<Vec<String>>> {
        let refused = self.dispatcher.queue_call(
            Cx(env.raw()),
            kind,
            id,
            sql,
            Args::Array(args),
            flags,
            scope,
            cancellable,
        )?;
        Ok(refused.map(|e| vec![e.code.to_string(), e.message]))
    }

    /// This database's dispatcher, for `callSpread` and `batchSpread`
    /// (src/node/spread.rs): an external is read with one Node-API call,
    /// where a class instance is unwrapped, its type tag checked and its
    /// borrow registered on every call.
    #[napi(catch_unwind)]
    pub fn dispatcher(&self) -> External<Rc<Dispatcher>> {
        External::new(self.dispatcher.clone())
    }

    /// Sends the statement calls held since the last flush.
    #[napi(catch_unwind)]
    pub fn flush(&self) {
        self.dispatcher.release_held();
    }

    /// Several statements in one transaction: `sqls[i]` with the arguments
    /// array `args[i]` and binding flags `flags[i]`; results are converted
    /// with `read_big_ints`. Returns `[index, code, message]` when an
    /// argument cannot be bound.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn batch(
        &self,
        env: Env,
        id: f64,
        sqls: Vec<&External<Arc<Sql>>>,
        args: Js,
        flags: Vec<u32>,
        read_big_ints: bool,
        scope: Option<&External<ScopeCell>>,
    ) -> Result<Option<Vec<String>>> {
        let cx = Cx(env.raw());
        let mut entries = Vec::with_capacity(sqls.len());
        for (i, sql) in sqls.into_iter().enumerate() {
            let entry = cx.get_element(args, i as u32)?;
            entries.push((sql, Args::Array(entry), flags.get(i).copied().unwrap_or(0)));
        }
        let refused = self
            .dispatcher
            .queue_batch(cx, id, entries, read_big_ints, scope)?;
        Ok(refused.map(|(i, e)| vec![i.to_string(), e.code.to_string(), e.message]))
    }

    #[napi(catch_unwind)]
    pub fn exec(
        &self,
        id: f64,
        sql: String,
        scope: Option<&External<ScopeCell>>,
        cancellable: bool,
    ) {
        let cancel = if cancellable {
            Cancel::Allowed
        } else {
            Cancel::Never
        };
        self.dispatcher
            .dispatch(Request::Exec(sql), id, 0, scope, cancel, Hold::SendNow);
    }

    /// Asks the thread holding a cursor for its next chunk; `cancellable`:
    /// the iteration has a signal, and `cancel(id)` stops this
    /// chunk too, queued or running.
    #[napi(catch_unwind)]
    pub fn next(
        &self,
        id: f64,
        role: i32,
        cursor: f64,
        flags: u32,
        scope: Option<&External<ScopeCell>>,
        cancellable: bool,
    ) {
        let request = Request::NextChunk {
            cursor: cursor_ref(role, cursor),
            chunk_rows: ITERATE_CHUNK_ROWS,
        };
        let cancel = if cancellable {
            Cancel::Allowed
        } else {
            Cancel::Never
        };
        self.dispatcher
            .dispatch(request, id, flags, scope, cancel, Hold::SendNow);
    }

    #[napi(catch_unwind)]
    pub fn close_cursor(
        &self,
        id: f64,
        role: i32,
        cursor: f64,
        scope: Option<&External<ScopeCell>>,
    ) {
        let request = Request::CloseCursor(cursor_ref(role, cursor));
        self.dispatcher
            .dispatch(request, id, 0, scope, Cancel::Never, Hold::SendNow);
    }

    /// Opens a scope (`protocol::scope`: a read snapshot, or a write
    /// transaction that begins deferred, immediate or exclusive).
    /// `begun_id` completes when its BEGIN ran (for a read snapshot: with
    /// its first statement).
    #[napi(catch_unwind)]
    pub fn begin(&self, kind: u32, idle_ms: f64, begun_id: f64) -> Result<External<ScopeCell>> {
        let kind = match kind {
            protocol::scope::READ => ScopeKind::Read,
            protocol::scope::DEFERRED => ScopeKind::Write(TransactionMode::Deferred),
            protocol::scope::IMMEDIATE => ScopeKind::Write(TransactionMode::Immediate),
            protocol::scope::EXCLUSIVE => ScopeKind::Write(TransactionMode::Exclusive),
            _ => return Err(Error::new(Status::InvalidArg, "unknown scope kind")),
        };
        let idle = Duration::from_millis(idle_ms.max(1.0) as u64);
        self.dispatcher.release_held();
        // Id 0 is a BEGIN nobody waits for (lib/core.js does not track it):
        // it must not keep the event loop alive, and an unused read
        // snapshot never sends it at all.
        let begun: engine::Done = if begun_id == 0.0 {
            Box::new(|_| {})
        } else {
            done_for(&self.dispatcher.queue, begun_id, 0)
        };
        let scope = self.dispatcher.db.begin_scope(kind, idle, begun);
        Ok(External::new(RefCell::new(scope)))
    }

    /// Whether the scope reached a thread (an unused read snapshot never
    /// does, and needs no ending).
    #[napi(catch_unwind)]
    pub fn scope_started(&self, scope: &External<ScopeCell>) -> bool {
        scope.borrow().is_started()
    }

    /// Ends a scope with COMMIT (`commit`) or ROLLBACK.
    #[napi(catch_unwind)]
    pub fn end(&self, id: f64, scope: &External<ScopeCell>, commit: bool) {
        let request = if commit {
            Request::Commit
        } else {
            Request::Rollback
        };
        self.dispatcher
            .dispatch(request, id, 0, Some(scope), Cancel::Never, Hold::SendNow);
    }

    /// Opens a nested transaction inside `scope`: a SAVEPOINT the engine
    /// names after the nesting depth.
    #[napi(catch_unwind)]
    pub fn nest(&self, id: f64, scope: &External<ScopeCell>) {
        self.dispatcher.dispatch(
            Request::Nest,
            id,
            0,
            Some(scope),
            Cancel::Never,
            Hold::SendNow,
        );
    }

    /// Ends the innermost nested transaction of `scope`: RELEASE when
    /// `commit`, else ROLLBACK TO and RELEASE.
    #[napi(catch_unwind)]
    pub fn unnest(&self, id: f64, scope: &External<ScopeCell>, commit: bool) {
        let request = Request::Unnest(commit);
        self.dispatcher
            .dispatch(request, id, 0, Some(scope), Cancel::Never, Hold::SendNow);
    }

    /// Aborts a cancellable call; says how (`protocol::cancel`). A call
    /// still queued will never run (its completion still arrives); a
    /// running one is interrupted (its completion says how it ended).
    #[napi(catch_unwind)]
    pub fn cancel(&self, id: f64) -> u32 {
        let token = self.dispatcher.tokens().get(&id.to_bits()).cloned();
        match token.map(|t| t.cancel()) {
            Some(Cancelled::BeforeStart) => protocol::cancel::BEFORE_START,
            Some(Cancelled::WhileRunning) => protocol::cancel::WHILE_RUNNING,
            Some(Cancelled::TooLate) | None => protocol::cancel::TOO_LATE,
        }
    }

    /// A WAL checkpoint in `mode` (`protocol::checkpoint`).
    #[napi(catch_unwind)]
    pub fn checkpoint(&self, id: f64, mode: u32) -> Result<()> {
        let mode = match mode {
            protocol::checkpoint::PASSIVE => CheckpointMode::Passive,
            protocol::checkpoint::FULL => CheckpointMode::Full,
            protocol::checkpoint::RESTART => CheckpointMode::Restart,
            protocol::checkpoint::TRUNCATE => CheckpointMode::Truncate,
            _ => return Err(Error::new(Status::InvalidArg, "unknown checkpoint mode")),
        };
        self.dispatcher.release_held();
        self.dispatcher.db.submit(
            Request::Checkpoint(mode),
            done_for(&self.dispatcher.queue, id, 0),
        );
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn stop_checkpointer(&self, id: f64) {
        self.dispatcher.release_held();
        self.dispatcher.db.submit(
            Request::StopCheckpointer,
            done_for(&self.dispatcher.queue, id, 0),
        );
    }

    /// Closes the database; a replicator then ships what was committed
    /// (trying for a bounded time) before the close completes.
    #[napi(catch_unwind)]
    pub fn close(&self, id: f64) {
        self.restore.stop();
        // Lets go of the writer's queue, so the writer can end.
        if let Some(promotion) = &self.promotion {
            promotion.close();
        }
        if let Some(follower) = &self.follower {
            follower.stop();
        }
        self.dispatcher.release_held();
        let done = done_for(&self.dispatcher.queue, id, 0);
        let replicator = lock(&self.replicator).take();
        match replicator {
            None => self.dispatcher.db.close(done),
            Some(replicator) => self.dispatcher.db.close(Box::new(move |closed| {
                // Whatever could not be shipped waits in the replicator's
                // folder for the next open: the close itself succeeds.
                replicator.close(Box::new(move |_| done(closed)));
            })),
        }
    }

    /// Starts replicating (`db.replicate()`); `id` completes once the
    /// replica's position is known.
    #[napi(catch_unwind)]
    pub fn replicate(&self, id: f64, options: ReplicaOptions) -> Result<()> {
        if lock(&self.replicator).is_some() {
            return Err(Error::new(
                Status::GenericFailure,
                "the database replicates already",
            ));
        }
        let replicator = replica::start(options, self.restore.gate(), None)?;
        self.dispatcher.release_held();
        self.dispatcher.db.set_observer(Some(replicator.clone()));
        replicator.ready(replica::reply_to(&self.dispatcher.queue, id));
        *lock(&self.replicator) = Some(replicator);
        Ok(())
    }

    /// Completes `id` once the replicator installed at open knows where
    /// the replica stands, or with why it cannot replicate.
    #[napi(catch_unwind)]
    pub fn replica_ready(&self, id: f64) {
        let reply = replica::reply_to(&self.dispatcher.queue, id);
        let replicator = lock(&self.replicator).clone();
        match replicator {
            Some(replicator) => replicator.ready(reply),
            None => reply(Err("the database does not replicate".into())),
        }
    }

    /// Ships every commit made so far; `id` completes with the replica's
    /// TXID once they are all in the replica.
    #[napi(catch_unwind)]
    pub fn sync_replica(&self, id: f64) {
        self.dispatcher.release_held();
        let reply = replica::reply_to(&self.dispatcher.queue, id);
        let replicator = lock(&self.replicator).clone();
        match replicator {
            Some(replicator) => replicator.sync(reply),
            None => reply(Err("the database does not replicate".into())),
        }
    }

    /// Stops replicating after shipping what was committed.
    #[napi(catch_unwind)]
    pub fn stop_replicating(&self, id: f64) {
        self.dispatcher.release_held();
        let reply = replica::reply_to(&self.dispatcher.queue, id);
        let replicator = lock(&self.replicator).take();
        match replicator {
            Some(replicator) => {
                // The replicator stays the observer until its last capture
                // is done: until then every checkpoint must still ask it.
                let slot = self.dispatcher.db.settings().observer.clone();
                replicator.stop(Box::new(move |result| {
                    slot.set(None);
                    reply(result)
                }));
            }
            None => reply(Ok(None)),
        }
    }

    #[napi(catch_unwind)]
    pub fn replica_stats(&self) -> Option<ReplicaStats> {
        lock(&self.replicator).as_ref().map(|r| replica::stats(r))
    }

    /// Completes `id` once every commit made so far is in the replica
    /// (`durability: 'replica'`: lib/core.js calls it after each write).
    #[napi(catch_unwind)]
    pub fn replica_durable(&self, id: f64) {
        self.dispatcher.release_held();
        let replicator = lock(&self.replicator).clone();
        match replicator {
            Some(replicator) => replicator.durable(replica::durable_reply_to(
                &self.dispatcher.queue,
                id,
                replicator.clone(),
            )),
            None => replica::reply_to(&self.dispatcher.queue, id)(Ok(None)),
        }
    }

    #[napi(catch_unwind)]
    pub fn location(&self, db_name: String) -> Option<String> {
        self.dispatcher.db.location(&db_name)
    }

    /// Reads every connection's settings back, each on its own thread.
    #[napi(catch_unwind)]
    pub fn settings(&self, id: f64) {
        self.dispatcher.release_held();
        self.dispatcher
            .db
            .read_settings(done_for(&self.dispatcher.queue, id, 0));
    }

    #[napi(catch_unwind)]
    pub fn stats(&self) -> DatabaseStats {
        self.dispatcher.db.stats().into()
    }
}
