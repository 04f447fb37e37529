//! The Node boundary: converts JS calls into engine requests and engine
//! results into JS values. It knows nothing of how threads are scheduled.

mod backup;
mod changes;
mod completion;
mod database;
mod dispatch;
mod errors;
mod faults;
mod functions;
mod invoker;
mod js;
mod open;
mod outcome;
mod packer;
mod params;
mod protocol;
mod session;
mod settings;
mod spread;
mod stats;
mod status;
mod thrown;

use napi::{Env, Result};
use napi_derive::napi;

use js::{Cx, Js};

pub use backup::{backup, stop_backup};
pub use changes::{limit_defaults, load_extension, set_authorizer, set_defensive, set_limit};
pub use database::NativeDatabase;
pub use faults::{fault_injection, fault_io, fault_io_bits, fault_io_injected, fault_panic};
pub use functions::{define_aggregate, define_function};
pub use open::defaults;
pub use protocol::protocol;
pub use session::{apply_changeset, create_session, session_call};
pub use settings::compile_options;
pub use spread::spread_functions;
pub use status::in_transaction;

/// Creates this JS environment's completion queue; `drain` is called (with
/// no arguments) whenever completions wait. `pack` is `(...v) => v` and
/// `join` is `(...arrays) => [].concat(...arrays)`: completions are handed
/// over in arrays they build.
#[napi(catch_unwind)]
pub fn init(env: Env, drain: Js, pack: Js, join: Js) -> Result<()> {
    // Read at load, before any database opens: the fault VFS must be
    // registered before a URI can name it.
    faults::read_switch();
    completion::init(Cx(env.raw()), drain, pack, join)
}

/// Every completion queued so far, as one flat array of records (see
/// `outcome::completions_to_js`).
#[napi(catch_unwind)]
pub fn take_completions(env: Env) -> Result<Js> {
    outcome::completions_to_js(Cx(env.raw()), completion::take())
}

/// Referenced while calls are pending, so they keep the process alive.
#[napi(catch_unwind)]
pub fn set_keep_alive(env: Env, keep_alive: bool) -> Result<()> {
    completion::set_keep_alive(Cx(env.raw()), keep_alive)
}

#[napi(catch_unwind)]
pub fn sqlite_version() -> String {
    offloop_engine::sqlite_version().to_string()
}

/// The first statement of a SQL text, as a prepared statement reports its
/// own SQL (`stmt.sourceSQL`). Reads the text only.
#[napi(catch_unwind)]
pub fn first_statement(text: String) -> String {
    offloop_engine::first_statement(&text).to_string()
}
