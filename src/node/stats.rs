//! What `db.stats()` and `Database.stats()` return: the engine's counters
//! as plain JS objects; and `Database.configure()`'s way in.

use napi_derive::napi;
use offloop_engine as engine;

#[napi(object)]
pub struct RoleStats {
    pub executed: f64,
    pub shared_reads: f64,
    pub buffered: f64,
    pub open_cursors: u32,
    pub queued: u32,
    pub wait_mean_ms: f64,
    pub wait_max_ms: f64,
}

impl From<engine::RoleStats> for RoleStats {
    fn from(s: engine::RoleStats) -> Self {
        RoleStats {
            executed: s.executed as f64,
            shared_reads: s.shared_reads as f64,
            buffered: s.buffered as f64,
            open_cursors: s.open_cursors as u32,
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
    pub lock_waits: f64,
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
            lock_waits: s.lock_waits as f64,
            error: s.error,
        }
    }
}

impl From<engine::Stats> for DatabaseStats {
    fn from(stats: engine::Stats) -> Self {
        DatabaseStats {
            writer: stats.writer.into(),
            readers: stats.readers.into_iter().map(Into::into).collect(),
            reader_queue: stats.reader_queue as u32,
            checkpoint: stats.checkpoint.into(),
        }
    }
}

/// What `Database.stats()` (static) returns: the process-wide view.
#[napi(object)]
pub struct ProcessStats {
    pub databases: u32,
    pub connections: u32,
    pub threads: u32,
    pub queued: u32,
    pub thread_limit: u32,
    pub connection_limit: u32,
    pub idle_timeout_ms: f64,
}

#[napi(catch_unwind)]
pub fn process_stats() -> ProcessStats {
    let s = engine::process_stats();
    let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    ProcessStats {
        databases: clamp(s.databases),
        connections: clamp(s.connections),
        threads: clamp(s.threads),
        queued: clamp(s.queued),
        thread_limit: clamp(s.thread_limit),
        connection_limit: clamp(s.connection_limit),
        idle_timeout_ms: engine::idle_close().as_millis() as f64,
    }
}

/// Sets the bound on SQLite threads (`None`: the default); lib/database.js
/// validated it.
#[napi(catch_unwind)]
pub fn configure_threads(threads: Option<u32>) {
    engine::configure_threads(threads.map(|n| n as usize));
}

/// Sets the cap on open connections (`None`: the default); lib/stats.js
/// validated it.
#[napi(catch_unwind)]
pub fn configure_connections(connections: Option<u32>) {
    engine::configure_connections(connections.map(|n| n as usize));
}

/// Sets how long an idle connection stays open, in milliseconds (`None`:
/// the default); lib/stats.js validated it.
#[napi(catch_unwind)]
pub fn configure_idle_timeout(ms: Option<u32>) {
    engine::configure_idle_close(ms.map(|ms| std::time::Duration::from_millis(u64::from(ms))));
}
