//! The Node boundary: converts JS calls into engine requests and engine
//! results into JS values. It knows nothing of how threads are scheduled.

mod completion;
mod database;
mod dispatch;
mod drain;
mod echo;
mod js;
mod open;
mod outcome;
mod packer;
mod params;
mod protocol;
mod settings;
mod signal;
mod spread;
mod stats;
mod uv;

use napi::{Env, Result};
use napi_derive::napi;

use js::{Cx, Js};

pub use database::NativeDatabase;
pub use echo::NativeEcho;
pub use open::defaults;
pub use protocol::protocol;
pub use settings::compile_options;
pub use spread::spread_functions;

/// Creates this JS environment's completion path; `drain` is called with
/// one flat array of records (see `outcome::completions_to_js`) whenever
/// completions wait. `pack` is `(...v) => v` and `join` is
/// `(...arrays) => [].concat(...arrays)`: completions are handed over in
/// arrays they build.
#[napi(catch_unwind)]
pub fn init(env: Env, drain: Js, pack: Js, join: Js) -> Result<()> {
    drain::init(Cx(env.raw()), drain, pack, join)
}

#[napi(catch_unwind)]
pub fn sqlite_version() -> String {
    offloop_engine::sqlite_version().to_string()
}
