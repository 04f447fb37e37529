//! The engine behind offloop: SQLite on threads of its own, driven by plain
//! Rust messages. It knows nothing of Node; the addon turns JS calls into
//! [`Request`]s and [`Outcome`]s back into JS values.
//!
//! # Design
//!
//! Each open [`Database`] has one writer lane with the read-write
//! connection, which runs writes in arrival order, and N reader lanes with
//! read-only `query_only` connections that take read-only queries from one
//! shared queue (first free reader wins). A lane is state, not a thread:
//! the threads of one process-wide pool (`pool`) run whichever lanes have
//! work, so the threads are bounded by the machine, not by the databases. A SQL text is routed by what
//! `sqlite3_stmt_readonly` said the first time any connection prepared it;
//! until then it goes to the writer. Every job carries its completion
//! callback, called exactly once on the thread that ran it; a job dropped
//! unrun (its database closed) completes with `ERR_INVALID_STATE`. Nothing in
//! this crate blocks the caller's thread. A transaction holds its lane, not
//! a thread: between two of its statements the lane returns its thread.

mod authorizer;
mod backup;
mod backup_steps;
mod cache;
mod cancel;
mod changes;
mod checkpointer;
mod close_order;
mod codes;
mod connection;
mod cursor;
mod database;
mod doze;
mod error;
mod executor;
mod failure;
mod fault_vfs;
pub mod faults;
mod functions;
mod image;
mod job;
mod lanes;
mod latch;
mod observer;
mod pace;
mod pool;
mod process;
pub mod queue;
mod queues;
mod reader;
mod role;
mod row_changes;
mod schemas;
mod scope;
mod session;
mod settings;
mod snapshot;
mod sql;
mod statement;
mod statement_text;
mod stats;
mod steps;
mod threads;
mod timers;
mod timing;
mod trim;
mod value;
mod wal;
mod worker;
mod writer;
mod writer_wal;

pub use authorizer::UserAuthorizer;
pub use backup::{BackupRequest, Progress};
pub use backup_steps::{open_stepped, StepReport, Stepped, SteppedBackup, SteppedRequest};
pub use cancel::{CancelToken, Cancelled};
pub use changes::{limit_defaults, Change, Changes};
pub use codes::result_code_name;
pub use connection::{compile_options, explain_os_error};
pub use database::{Database, WriterHandle};
pub use doze::{
    configure_connections, configure_idle_close, connection_limit, default_connections, idle_close,
};
pub use error::{explain_read_errors, Error, Result};
pub use functions::{
    Accumulator, AggregateFunction, FunctionBody, FunctionDefinition, FunctionError, Registrations,
    ScalarFunction,
};
pub use job::{Call, ColumnInfo, CursorRef, Done, Job, Outcome, Privileged, Request};
pub use observer::{CheckpointPermit, CheckpointWrites, ObserverSlot, WalObserver};
pub use pace::{cores, Pace};
pub use pool::{configure_threads, default_threads};
pub use process::{process_stats, ProcessStats};
pub use role::Role;
pub use row_changes::{RowChange, RowChanges, RowOp};
pub use scope::{Scope, ScopeKind, TransactionMode};
pub use session::{ChangesetHandlers, SessionRequest};
pub use settings::{
    BeforeOpen, CheckpointSettings, ConnectionSettings, JournalMode, Key, Mismatch, PragmaValue,
    SettingValue, Settings, SettingsReport, Synchronous, TempStore, DEFAULT_BUSY_TIMEOUT,
    DEFAULT_JOURNAL_SIZE_LIMIT, DEFAULT_READERS, SETTING_ERROR_CODE,
};
pub use sql::{Route, Sql};
pub use statement_text::first_statement;
pub use stats::{RoleStats, Stats};
pub use timing::{current_job, JobTiming};
pub use value::{BindOptions, Params, RowSet, Value};
pub use wal::{CheckpointMode, CheckpointStats};

/// The version of the bundled SQLite.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// The check-in the bundled SQLite was built from (`sqlite_source_id()`).
pub fn sqlite_source_id() -> &'static str {
    // SAFETY: sqlite3_sourceid() returns a pointer to a NUL-terminated
    // string constant compiled into the library; it lives as long as the
    // process and is never written.
    let id = unsafe { std::ffi::CStr::from_ptr(rusqlite::ffi::sqlite3_sourceid()) };
    id.to_str().unwrap_or("")
}
