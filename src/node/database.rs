//! `NativeDatabase`: the addon's handle on one engine database. Each method
//! turns JS arguments into an engine request whose completion lands on this
//! environment's completion queue under the caller's call id. No method
//! touches SQLite; the finalizer only drops the engine handle, which lets
//! the threads close their connections themselves.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::External;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use offloop_engine::{
    self as engine, BindOptions, Call, CheckpointMode, CursorRef, Request, Role, Settings, Sql,
};

use super::completion::{self, Completion, CompletionQueue};
use super::js::{Cx, Js};
use super::params::read_params;

/// Flags index.js passes with each call (besides `READ_BIG_INTS`).
const ALLOW_BARE_NAMED: u32 = 4;
const ALLOW_UNKNOWN_NAMED: u32 = 8;

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

#[napi]
pub struct NativeDatabase {
    db: engine::Database,
    queue: Arc<CompletionQueue>,
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
    #[napi(constructor)]
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
        let db = engine::Database::open(settings, done_for(&queue, open_id, 0))
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
        Ok(NativeDatabase { db, queue })
    }

    /// A handle on a SQL text; statements pass it with every call.
    #[napi]
    pub fn sql(&self, text: String) -> External<Arc<Sql>> {
        External::new(self.db.sql(&text))
    }

    /// Queues one statement call. Returns `[code, message]` when an argument
    /// cannot be bound (index.js throws it), otherwise nothing.
    #[napi]
    pub fn call(
        &self,
        env: Env,
        kind: u32,
        id: f64,
        sql: &External<Arc<Sql>>,
        args: Js,
        flags: u32,
    ) -> Result<Option<Vec<String>>> {
        let cx = Cx(env.raw());
        let sql: Arc<Sql> = Arc::clone(sql);
        let kind = Kind::from_u32(kind)
            .ok_or_else(|| Error::new(Status::InvalidArg, "unknown call kind"))?;
        let params = match read_params(cx, &sql, args)? {
            Ok(params) => params,
            Err(e) => return Ok(Some(vec![e.code.to_string(), e.message])),
        };
        let call = Call {
            sql,
            params,
            bind: BindOptions {
                allow_bare_named: flags & ALLOW_BARE_NAMED != 0,
                allow_unknown_named: flags & ALLOW_UNKNOWN_NAMED != 0,
            },
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
        self.db.submit(request, done_for(&self.queue, id, flags));
        Ok(None)
    }

    #[napi]
    pub fn exec(&self, id: f64, sql: String) {
        self.db
            .submit(Request::Exec(sql), done_for(&self.queue, id, 0));
    }

    /// Asks the thread holding a cursor for its next chunk.
    #[napi]
    pub fn next(&self, id: f64, role: i32, cursor: f64, flags: u32) {
        self.db.submit(
            Request::NextChunk {
                cursor: cursor_ref(role, cursor),
                chunk_rows: ITERATE_CHUNK_ROWS as usize,
            },
            done_for(&self.queue, id, flags),
        );
    }

    #[napi]
    pub fn close_cursor(&self, id: f64, role: i32, cursor: f64) {
        self.db.submit(
            Request::CloseCursor(cursor_ref(role, cursor)),
            done_for(&self.queue, id, 0),
        );
    }

    /// A WAL checkpoint in `mode` (0 passive, 1 full, 2 restart, 3 truncate).
    #[napi]
    pub fn checkpoint(&self, id: f64, mode: u32) -> Result<()> {
        let mode = match mode {
            0 => CheckpointMode::Passive,
            1 => CheckpointMode::Full,
            2 => CheckpointMode::Restart,
            3 => CheckpointMode::Truncate,
            _ => return Err(Error::new(Status::InvalidArg, "unknown checkpoint mode")),
        };
        self.db
            .submit(Request::Checkpoint(mode), done_for(&self.queue, id, 0));
        Ok(())
    }

    #[napi]
    pub fn stop_checkpointer(&self, id: f64) {
        self.db
            .submit(Request::StopCheckpointer, done_for(&self.queue, id, 0));
    }

    #[napi]
    pub fn close(&self, id: f64) {
        self.db.close(done_for(&self.queue, id, 0));
    }

    #[napi]
    pub fn location(&self) -> Option<String> {
        self.db.location().map(str::to_string)
    }

    #[napi]
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
