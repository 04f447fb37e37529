//! The Node boundary: converts JS calls into engine requests and engine
//! results into JS values. It knows nothing of how threads are scheduled.

mod backup;
mod backup_steps;
mod changes;
mod completion;
mod database;
mod dispatch;
mod drain;
mod echo;
mod errors;
mod faults;
mod filling;
mod follow;
mod following;
mod functions;
mod image;
mod invoker;
mod js;
mod linger;
mod open;
mod outcome;
mod packer;
mod paged;
mod params;
mod promote;
mod protocol;
mod replica;
mod row_changes;
mod session;
mod settings;
mod signal;
mod spread;
mod stats;
mod status;
mod sweeper;
mod threadsafe_signal;
mod thrown;
mod uv;
mod waker;

use napi::{Env, Result};
use napi_derive::napi;

use js::{Cx, Js};

pub use backup::{backup, stop_backup};
pub use backup_steps::{finish_backup_steps, open_backup_steps, step_backup};
pub use changes::{limit_defaults, load_extension, set_authorizer, set_defensive, set_limit};
pub use database::NativeDatabase;
pub use echo::NativeEcho;
pub use faults::{fault_injection, fault_io, fault_io_bits, fault_io_injected, fault_panic};
pub use filling::{fill_wait, restore_stats, start_fill};
pub use following::{
    follow_cancel, follow_catch_up, follow_promote, follow_staleness, follow_start, follow_stats,
    follow_watch_lease,
};
pub use functions::{define_aggregate, define_function};
pub use image::{deserialize, serialize};
pub use open::defaults;
pub use paged::RestoreStats;
pub use protocol::protocol;
pub use replica::restore_replica;
pub use row_changes::{take_row_changes, want_row_changes, RowChangeRecord};
pub use session::{apply_changeset, create_session, session_call};
pub use settings::compile_options;
pub use spread::spread_functions;
pub use stats::{
    configure_connections, configure_idle_timeout, configure_threads, process_stats, ProcessStats,
};
pub use status::in_transaction;

/// Creates this JS environment's completion path; `drain` is called with
/// one flat array of records (see `outcome::completions_to_js`) whenever
/// completions wait. `pack` is `(...v) => v` and `join` is
/// `(...arrays) => [].concat(...arrays)`: completions are handed over in
/// arrays they build. `runtime` (`node`, `bun`, `deno`) and `version` name
/// the host, which chooses how completions wake the loop (`waker`).
#[napi(catch_unwind)]
pub fn init(
    env: Env,
    drain: Js,
    pack: Js,
    join: Js,
    runtime: String,
    version: String,
) -> Result<()> {
    // Read at load, before any database opens: the fault VFS must be
    // registered before a URI can name it.
    faults::read_switch();
    drain::init(Cx(env.raw()), drain, pack, join, &runtime, &version)
}

/// How completions wake the event loop in this process (`db.stats().waker`):
/// `libuv` or `threadsafe-function`.
#[napi(catch_unwind)]
pub fn waker() -> Option<String> {
    waker::WakePath::chosen().map(|path| path.name().to_string())
}

/// Looks for a due reply before the loop may block, and drains it if it
/// comes (the thread-safe function's path: lib/calls.js calls this from an
/// immediate). `true` when one came and more are due.
#[napi(catch_unwind)]
pub fn linger() -> bool {
    drain::linger()
}

/// This JS thread's drains so far, `[woken, lingered]` (`db.stats().drains`).
#[napi(catch_unwind)]
pub fn drains() -> Vec<f64> {
    drain::drains().to_vec()
}

#[napi(catch_unwind)]
pub fn sqlite_version() -> String {
    offloop_engine::sqlite_version().to_string()
}

#[napi(catch_unwind)]
pub fn sqlite_source_id() -> String {
    offloop_engine::sqlite_source_id().to_string()
}

/// The first statement of a SQL text, as a prepared statement reports its
/// own SQL (`stmt.sourceSQL`). Reads the text only.
#[napi(catch_unwind)]
pub fn first_statement(text: String) -> String {
    offloop_engine::first_statement(&text).to_string()
}
