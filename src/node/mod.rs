//! The Node boundary: converts JS calls into engine requests and engine
//! results into JS values. It knows nothing of how threads are scheduled.

mod completion;
mod database;
mod js;
mod outcome;
mod params;
mod replica;
mod settings;
mod spread;

use napi::{Env, Result};
use napi_derive::napi;

use js::{Cx, Js};

pub use database::NativeDatabase;
pub use replica::restore_replica;
pub use settings::compile_options;
pub use spread::spread_functions;

/// Creates this JS environment's completion queue; `drain` is called (with
/// no arguments) whenever completions wait. `pack` is `(...v) => v` and
/// `join` is `(...arrays) => [].concat(...arrays)`: completions are handed
/// over in arrays they build.
#[napi(catch_unwind)]
pub fn init(env: Env, drain: Js, pack: Js, join: Js) -> Result<()> {
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
