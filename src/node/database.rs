//! `NativeDatabase`: the addon's handle on one engine database. Each method
//! turns JS arguments into an engine request whose completion lands on this
//! environment's completion queue under the caller's call id. No method
//! touches SQLite; the finalizer only drops the engine handle, which lets
//! the threads close their connections themselves.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::External;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use offloop_engine::{
    self as engine, BindOptions, Call, CancelToken, Cancelled, CheckpointMode, CursorRef, Job,
    PinKind, PinnedSession, Request, Role, Settings, Sql, TransactionMode,
};
use offloop_replica::Replicator;

use super::completion::{self, Completion, CompletionQueue};
use super::js::{Cx, Js};
use super::outcome::READ_BIG_INTS;
use super::params::{read_params, ArgError, Args};
use super::replica::{self, ReplicaOptions, ReplicaStats};
use super::settings::{apply_options, PragmaOption, SettingOptions};

/// Flags index.js passes with each call (besides `READ_BIG_INTS`).
const ALLOW_BARE_NAMED: u32 = 4;
const ALLOW_UNKNOWN_NAMED: u32 = 8;

/// Statement calls held at most before they are sent without waiting for
/// `flush` (a loop issuing calls without yielding still gets them started).
const HELD_MAX: usize = 256;

/// Rows per chunk of `iterate()`: large enough that a chunk's round trip is
/// noise next to converting its rows, small enough that a consumer that
/// stops early wasted little.
const ITERATE_CHUNK_ROWS: u32 = 256;

#[napi(object)]
pub struct OpenOptions {
    pub readers: u32,
    pub read_only: bool,
    /// Busy timeout in milliseconds.
    pub timeout: f64,
    pub enable_foreign_key_constraints: bool,
    pub enable_double_quoted_string_literals: bool,
    pub defensive: bool,
    /// `PRAGMA journal_size_limit` in bytes; negative for none.
    pub journal_size_limit: f64,
    /// Run the checkpointer thread.
    pub checkpoint: bool,
    pub checkpoint_threshold_frames: u32,
    pub checkpoint_idle_ms: u32,
    pub checkpoint_backstop_frames: u32,
    /// Connection settings (see `settings.rs`); absent: the defaults.
    pub journal_mode: Option<String>,
    pub synchronous: Option<String>,
    pub mmap_size: Option<f64>,
    pub cache_size: Option<f64>,
    pub temp_store: Option<String>,
    pub pragmas: Option<Vec<PragmaOption>>,
    pub strict_settings: Option<bool>,
    /// Nice value of the SQLite threads (0–19).
    pub thread_nice: Option<u32>,
    /// Continuous replication (see `replica.rs`).
    pub replica: Option<ReplicaOptions>,
}

/// What a statement call does (index.js uses the same numbers).
#[derive(Clone, Copy)]
enum Kind {
    Run = 0,
    Get = 1,
    All = 2,
    Iterate = 3,
    Columns = 4,
    Expand = 5,
}

impl Kind {
    fn from_u32(kind: u32) -> Option<Kind> {
        Some(match kind {
            0 => Kind::Run,
            1 => Kind::Get,
            2 => Kind::All,
            3 => Kind::Iterate,
            4 => Kind::Columns,
            5 => Kind::Expand,
            _ => return None,
        })
    }
}

/// A pinned session (transaction or read snapshot), owned by its JS handle.
pub type SessionCell = RefCell<PinnedSession>;

#[napi]
pub struct NativeDatabase {
    db: engine::Database,
    queue: Arc<CompletionQueue>,
    /// Statement calls made outside a session, held until lib/core.js calls
    /// `flush` at the end of the microtask checkpoint they were made in
    /// (before any other request, so arrival order holds). Calls that
    /// resolve together are re-issued together: sent as one burst, they
    /// wake a parked SQLite thread once per burst instead of once per call,
    /// and each wake-up is a system call on the JS thread.
    held: RefCell<Vec<Job>>,
    /// Cancel tokens of the cancellable calls in flight, by call id.
    tokens: Arc<Mutex<HashMap<u64, Arc<CancelToken>>>>,
    /// The replicator, while the database replicates.
    replicator: RefCell<Option<Arc<Replicator>>>,
}

impl NativeDatabase {
    fn tokens(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<CancelToken>>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads one statement call's arguments and queues it (see `call`);
    /// `Some` is the argument error to throw, when nothing was queued.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn queue_call(
        &self,
        cx: Cx,
        kind: u32,
        id: f64,
        sql: &External<Arc<Sql>>,
        args: Args<'_>,
        flags: u32,
        session: Option<&External<SessionCell>>,
        cancellable: bool,
    ) -> Result<Option<ArgError>> {
        let kind = Kind::from_u32(kind)
            .ok_or_else(|| Error::new(Status::InvalidArg, "unknown call kind"))?;
        let call = match read_call(cx, sql, args, flags)? {
            Ok(call) => call,
            Err(e) => return Ok(Some(e)),
        };
        let request = match kind {
            Kind::Run => Request::Run(call),
            Kind::Get => Request::Get(call),
            Kind::All => Request::All(call),
            Kind::Iterate => Request::Iterate {
                call,
                chunk_rows: ITERATE_CHUNK_ROWS as usize,
            },
            Kind::Columns => Request::Columns(call.sql),
            Kind::Expand => Request::Expand(call),
        };
        self.dispatch(request, id, flags, session, cancellable, true);
        Ok(None)
    }

    /// Reads a batch's statements (SQL handle, arguments, binding flags
    /// each) and queues it as one request; `Some` is the index of the
    /// statement whose argument cannot be bound and the error to throw.
    pub(super) fn queue_batch(
        &self,
        cx: Cx,
        id: f64,
        entries: Vec<(&External<Arc<Sql>>, Args<'_>, u32)>,
        read_big_ints: bool,
        session: Option<&External<SessionCell>>,
    ) -> Result<Option<(usize, ArgError)>> {
        let mut calls = Vec::with_capacity(entries.len());
        for (i, (sql, args, flags)) in entries.into_iter().enumerate() {
            match read_call(cx, sql, args, flags)? {
                Ok(call) => calls.push(call),
                Err(e) => return Ok(Some((i, e))),
            }
        }
        let big = if read_big_ints { READ_BIG_INTS } else { 0 };
        self.dispatch(Request::Batch(calls), id, big, session, false, false);
        Ok(None)
    }

    /// Sends the held statement calls, in the order they were made.
    fn release_held(&self) {
        let mut held = self.held.borrow_mut();
        for job in held.drain(..) {
            self.db.submit_job(job);
        }
    }

    /// Queues `request` on the database or on `session`, completing under
    /// `id`; a cancellable call registers a token until it completes. A
    /// `hold` request outside a session waits for `flush`.
    fn dispatch(
        &self,
        request: Request,
        id: f64,
        flags: u32,
        session: Option<&External<SessionCell>>,
        cancellable: bool,
        hold: bool,
    ) {
        let mut done = done_for(&self.queue, id, flags);
        let mut token = None;
        if cancellable {
            let t = CancelToken::new();
            self.tokens().insert(id.to_bits(), t.clone());
            let tokens = self.tokens.clone();
            let inner = done;
            done = Box::new(move |result| {
                tokens
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_bits());
                inner(result)
            });
            token = Some(t);
        }
        let job = Job::new(request, done).with_cancel(token);
        match session {
            None if hold => {
                let mut held = self.held.borrow_mut();
                held.push(job);
                if held.len() >= HELD_MAX {
                    drop(held);
                    self.release_held();
                }
            }
            None => {
                self.release_held();
                self.db.submit_job(job);
            }
            Some(session) => {
                self.release_held();
                self.db.submit_to(&mut session.borrow_mut(), job);
            }
        }
    }
}

/// Reads one call's arguments; `Err` is an argument error to throw.
fn read_call(
    cx: Cx,
    sql: &External<Arc<Sql>>,
    args: Args<'_>,
    flags: u32,
) -> Result<std::result::Result<Call, ArgError>> {
    let sql: Arc<Sql> = Arc::clone(sql);
    Ok(read_params(cx, &sql, args)?.map(|params| Call {
        sql,
        params,
        bind: BindOptions {
            allow_bare_named: flags & ALLOW_BARE_NAMED != 0,
            allow_unknown_named: flags & ALLOW_UNKNOWN_NAMED != 0,
        },
    }))
}

fn queue() -> Result<Arc<CompletionQueue>> {
    completion::current()
        .ok_or_else(|| Error::new(Status::GenericFailure, "offloop: init() was not called"))
}

fn done_for(queue: &Arc<CompletionQueue>, id: f64, flags: u32) -> engine::Done {
    let queue = queue.clone();
    Box::new(move |result| queue.push(Completion { id, flags, result }))
}

fn cursor_ref(role: i32, id: f64) -> CursorRef {
    CursorRef {
        role: if role < 0 {
            Role::Writer
        } else {
            Role::Reader(role as usize)
        },
        id: id as u64,
    }
}

#[napi]
impl NativeDatabase {
    /// Starts the database's threads; `open_id` completes when every
    /// connection is open, or with the first error.
    #[napi(constructor, catch_unwind)]
    pub fn new(path: String, options: OpenOptions, open_id: f64) -> Result<Self> {
        let queue = queue()?;
        let mut settings = Settings::new(path);
        settings.readers = options.readers as usize;
        settings.read_only = options.read_only;
        settings.busy_timeout = Duration::from_millis(options.timeout.max(0.0) as u64);
        settings.foreign_keys = options.enable_foreign_key_constraints;
        settings.double_quoted_string_literals = options.enable_double_quoted_string_literals;
        settings.defensive = options.defensive;
        settings.journal_size_limit = options.journal_size_limit as i64;
        settings.checkpoint.enabled = options.checkpoint;
        settings.checkpoint.threshold_frames = options.checkpoint_threshold_frames.into();
        settings.checkpoint.idle = Duration::from_millis(options.checkpoint_idle_ms.into());
        settings.checkpoint.backstop_frames = options.checkpoint_backstop_frames.into();
        settings.thread_nice = options.thread_nice.unwrap_or(0).min(19) as i32;
        apply_options(
            &mut settings,
            SettingOptions {
                journal_mode: options.journal_mode.as_deref(),
                synchronous: options.synchronous.as_deref(),
                mmap_size: options.mmap_size,
                cache_size: options.cache_size,
                temp_store: options.temp_store.as_deref(),
                pragmas: options.pragmas.as_deref(),
                strict_settings: options.strict_settings,
            },
        )?;
        // Installed before the threads start, so the replicator hears the
        // open and every commit from the first.
        let replicator = options.replica.map(replica::start).transpose()?;
        if let Some(replicator) = &replicator {
            let observer: Arc<dyn engine::WalObserver> = replicator.clone();
            settings.observer.set(Some(observer));
        }
        let db = engine::Database::open(settings, done_for(&queue, open_id, 0))
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
        Ok(NativeDatabase {
            db,
            queue,
            held: RefCell::new(Vec::new()),
            tokens: Arc::default(),
            replicator: RefCell::new(replicator),
        })
    }

    /// A handle on a SQL text; statements pass it with every call.
    #[napi(catch_unwind)]
    pub fn sql(&self, text: String) -> External<Arc<Sql>> {
        External::new(self.db.sql(&text))
    }

    /// Queues one statement call, on the database or inside `session`.
    /// Returns `[code, message]` when an argument cannot be bound (index.js
    /// throws it), otherwise nothing. A `cancellable` call can be stopped
    /// with `cancel(id)`. A call outside a session is held until `flush`.
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
        session: Option<&External<SessionCell>>,
        cancellable: bool,
    ) -> Result<Option<Vec<String>>> {
        let refused = self.queue_call(
            Cx(env.raw()),
            kind,
            id,
            sql,
            Args::Array(args),
            flags,
            session,
            cancellable,
        )?;
        Ok(refused.map(|e| vec![e.code.to_string(), e.message]))
    }

    /// Sends the statement calls held since the last flush.
    #[napi(catch_unwind)]
    pub fn flush(&self) {
        self.release_held();
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
        session: Option<&External<SessionCell>>,
    ) -> Result<Option<Vec<String>>> {
        let cx = Cx(env.raw());
        let mut entries = Vec::with_capacity(sqls.len());
        for (i, sql) in sqls.into_iter().enumerate() {
            let entry = cx.get_element(args, i as u32)?;
            entries.push((sql, Args::Array(entry), flags.get(i).copied().unwrap_or(0)));
        }
        let refused = self.queue_batch(cx, id, entries, read_big_ints, session)?;
        Ok(refused.map(|(i, e)| vec![i.to_string(), e.code.to_string(), e.message]))
    }

    #[napi(catch_unwind)]
    pub fn exec(
        &self,
        id: f64,
        sql: String,
        session: Option<&External<SessionCell>>,
        cancellable: bool,
    ) {
        self.dispatch(Request::Exec(sql), id, 0, session, cancellable, false);
    }

    /// Asks the thread holding a cursor for its next chunk.
    #[napi(catch_unwind)]
    pub fn next(
        &self,
        id: f64,
        role: i32,
        cursor: f64,
        flags: u32,
        session: Option<&External<SessionCell>>,
    ) {
        let request = Request::NextChunk {
            cursor: cursor_ref(role, cursor),
            chunk_rows: ITERATE_CHUNK_ROWS as usize,
        };
        self.dispatch(request, id, flags, session, false, false);
    }

    #[napi(catch_unwind)]
    pub fn close_cursor(
        &self,
        id: f64,
        role: i32,
        cursor: f64,
        session: Option<&External<SessionCell>>,
    ) {
        let request = Request::CloseCursor(cursor_ref(role, cursor));
        self.dispatch(request, id, 0, session, false, false);
    }

    /// Opens a pinned session: `kind` 0 is a read snapshot, 1–3 a write
    /// transaction (deferred, immediate, exclusive). `begun_id` completes
    /// when its BEGIN ran (for a read snapshot: with its first statement).
    #[napi(catch_unwind)]
    pub fn begin(&self, kind: u32, idle_ms: f64, begun_id: f64) -> Result<External<SessionCell>> {
        let kind = match kind {
            0 => PinKind::Read,
            1 => PinKind::Write(TransactionMode::Deferred),
            2 => PinKind::Write(TransactionMode::Immediate),
            3 => PinKind::Write(TransactionMode::Exclusive),
            _ => return Err(Error::new(Status::InvalidArg, "unknown session kind")),
        };
        let idle = Duration::from_millis(idle_ms.max(1.0) as u64);
        self.release_held();
        let session = self.db.pin(kind, idle, done_for(&self.queue, begun_id, 0));
        Ok(External::new(RefCell::new(session)))
    }

    /// Whether the session reached a thread (an unused read snapshot never
    /// does, and needs no ending).
    #[napi(catch_unwind)]
    pub fn session_started(&self, session: &External<SessionCell>) -> bool {
        session.borrow().is_started()
    }

    /// Ends a session with COMMIT (`commit`) or ROLLBACK.
    #[napi(catch_unwind)]
    pub fn end(&self, id: f64, session: &External<SessionCell>, commit: bool) {
        let request = if commit {
            Request::Commit
        } else {
            Request::Rollback
        };
        self.dispatch(request, id, 0, Some(session), false, false);
    }

    /// Aborts a cancellable call. Returns 1 when it was still queued (it
    /// will never run; its completion still arrives), 2 when it was
    /// interrupted while running (its completion says how it ended), 0
    /// when it had finished or is unknown.
    #[napi(catch_unwind)]
    pub fn cancel(&self, id: f64) -> u32 {
        let token = self.tokens().get(&id.to_bits()).cloned();
        match token.map(|t| t.cancel()) {
            Some(Cancelled::BeforeStart) => 1,
            Some(Cancelled::WhileRunning) => 2,
            Some(Cancelled::TooLate) | None => 0,
        }
    }

    /// A WAL checkpoint in `mode` (0 passive, 1 full, 2 restart, 3 truncate).
    #[napi(catch_unwind)]
    pub fn checkpoint(&self, id: f64, mode: u32) -> Result<()> {
        let mode = match mode {
            0 => CheckpointMode::Passive,
            1 => CheckpointMode::Full,
            2 => CheckpointMode::Restart,
            3 => CheckpointMode::Truncate,
            _ => return Err(Error::new(Status::InvalidArg, "unknown checkpoint mode")),
        };
        self.release_held();
        self.db
            .submit(Request::Checkpoint(mode), done_for(&self.queue, id, 0));
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn stop_checkpointer(&self, id: f64) {
        self.release_held();
        self.db
            .submit(Request::StopCheckpointer, done_for(&self.queue, id, 0));
    }

    /// Closes the database; a replicator then ships what was committed
    /// (trying for a bounded time) before the close completes.
    #[napi(catch_unwind)]
    pub fn close(&self, id: f64) {
        self.release_held();
        let done = done_for(&self.queue, id, 0);
        match self.replicator.borrow_mut().take() {
            None => self.db.close(done),
            Some(replicator) => self.db.close(Box::new(move |closed| {
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
        if self.replicator.borrow().is_some() {
            return Err(Error::new(
                Status::GenericFailure,
                "the database replicates already",
            ));
        }
        let replicator = replica::start(options)?;
        self.release_held();
        self.db.set_observer(Some(replicator.clone()));
        replicator.ready(replica::reply_to(&self.queue, id));
        *self.replicator.borrow_mut() = Some(replicator);
        Ok(())
    }

    /// Completes `id` once the replicator installed at open knows where
    /// the replica stands, or with why it cannot replicate.
    #[napi(catch_unwind)]
    pub fn replica_ready(&self, id: f64) {
        let reply = replica::reply_to(&self.queue, id);
        match self.replicator.borrow().as_ref() {
            Some(replicator) => replicator.ready(reply),
            None => reply(Err("the database does not replicate".into())),
        }
    }

    /// Ships every commit made so far; `id` completes with the replica's
    /// TXID once they are all in the replica.
    #[napi(catch_unwind)]
    pub fn sync_replica(&self, id: f64) {
        self.release_held();
        let reply = replica::reply_to(&self.queue, id);
        match self.replicator.borrow().as_ref() {
            Some(replicator) => replicator.sync(reply),
            None => reply(Err("the database does not replicate".into())),
        }
    }

    /// Stops replicating after shipping what was committed.
    #[napi(catch_unwind)]
    pub fn stop_replicating(&self, id: f64) {
        self.release_held();
        let reply = replica::reply_to(&self.queue, id);
        match self.replicator.borrow_mut().take() {
            Some(replicator) => {
                // The replicator stays the observer until its last capture
                // is done: until then every checkpoint must still ask it.
                let slot = self.db.settings().observer.clone();
                replicator.stop(Box::new(move |result| {
                    slot.set(None);
                    reply(result)
                }));
            }
            None => reply(Ok(0)),
        }
    }

    #[napi(catch_unwind)]
    pub fn replica_stats(&self) -> Option<ReplicaStats> {
        self.replicator.borrow().as_ref().map(|r| r.stats().into())
    }

    #[napi(catch_unwind)]
    pub fn location(&self) -> Option<String> {
        self.db.location().map(str::to_string)
    }

    /// Reads every connection's settings back, each on its own thread.
    #[napi(catch_unwind)]
    pub fn settings(&self, id: f64) {
        self.release_held();
        self.db.read_settings(done_for(&self.queue, id, 0));
    }

    #[napi(catch_unwind)]
    pub fn stats(&self) -> DatabaseStats {
        let stats = self.db.stats();
        DatabaseStats {
            writer: stats.writer.into(),
            readers: stats.readers.into_iter().map(Into::into).collect(),
            reader_queue: stats.reader_queue as u32,
            checkpoint: stats.checkpoint.into(),
        }
    }
}

#[napi(object)]
pub struct RoleStats {
    pub executed: f64,
    pub queued: u32,
    pub wait_mean_ms: f64,
    pub wait_max_ms: f64,
}

impl From<engine::RoleStats> for RoleStats {
    fn from(s: engine::RoleStats) -> Self {
        RoleStats {
            executed: s.executed as f64,
            queued: s.queued as u32,
            wait_mean_ms: s.wait_mean.as_secs_f64() * 1000.0,
            wait_max_ms: s.wait_max.as_secs_f64() * 1000.0,
        }
    }
}

#[napi(object)]
pub struct DatabaseStats {
    pub writer: RoleStats,
    pub readers: Vec<RoleStats>,
    pub reader_queue: u32,
    pub checkpoint: CheckpointStats,
}

#[napi(object)]
pub struct CheckpointStats {
    pub active: bool,
    pub runs: f64,
    pub frames_copied: f64,
    pub last_ms: f64,
    pub max_ms: f64,
    pub wal_frames: f64,
    pub wal_bytes: f64,
    pub writer_catch_ups: f64,
    pub writer_catch_up_max_ms: f64,
    pub backstops: f64,
    pub backstop_max_ms: f64,
    pub error: Option<String>,
}

impl From<engine::CheckpointStats> for CheckpointStats {
    fn from(s: engine::CheckpointStats) -> Self {
        CheckpointStats {
            active: s.active,
            runs: s.runs as f64,
            frames_copied: s.frames_copied as f64,
            last_ms: s.last_duration.as_secs_f64() * 1000.0,
            max_ms: s.max_duration.as_secs_f64() * 1000.0,
            wal_frames: s.wal_frames as f64,
            wal_bytes: s.wal_bytes as f64,
            writer_catch_ups: s.writer_catch_ups as f64,
            writer_catch_up_max_ms: s.writer_catch_up_max.as_secs_f64() * 1000.0,
            backstops: s.backstops as f64,
            backstop_max_ms: s.backstop_max.as_secs_f64() * 1000.0,
            error: s.error,
        }
    }
}
