//! Connection settings across the boundary: the open options that become
//! the engine's pragma requests (lib/options.js has validated them), and
//! settings reports as plain JS arrays that lib/settings.js turns into
//! objects.

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine::{
    JournalMode, PragmaValue, Role, SettingValue, Settings, SettingsReport, Synchronous, TempStore,
};

use super::js::{Cx, Js};

/// One entry of `options.pragmas`: a text or an integer value
/// (lib/options.js turns booleans into 1 and 0).
#[napi(object)]
pub struct PragmaOption {
    pub name: String,
    pub text: Option<String>,
    pub integer: Option<f64>,
}

/// The setting options of `OpenOptions`, by reference.
pub struct SettingOptions<'a> {
    pub journal_mode: Option<&'a str>,
    pub synchronous: Option<&'a str>,
    pub mmap_size: Option<f64>,
    pub cache_size: Option<f64>,
    pub temp_store: Option<&'a str>,
    pub pragmas: Option<&'a [PragmaOption]>,
    pub strict_settings: Option<bool>,
}

fn invalid(what: &str, value: &str) -> Error {
    Error::new(Status::InvalidArg, format!("unknown {what} '{value}'"))
}

/// Fills `settings` from the options.
pub fn apply_options(settings: &mut Settings, options: SettingOptions<'_>) -> Result<()> {
    if let Some(mode) = options.journal_mode {
        settings.journal_mode =
            Some(JournalMode::parse(mode).ok_or_else(|| invalid("journal mode", mode))?);
    }
    if let Some(sync) = options.synchronous {
        settings.synchronous =
            Some(Synchronous::parse(sync).ok_or_else(|| invalid("synchronous level", sync))?);
    }
    if let Some(store) = options.temp_store {
        settings.temp_store =
            Some(TempStore::parse(store).ok_or_else(|| invalid("temp_store", store))?);
    }
    if let Some(size) = options.mmap_size {
        if size < 0.0 {
            return Err(Error::new(Status::InvalidArg, "mmap size below 0"));
        }
        settings.mmap_size = Some(size as u64);
    }
    settings.cache_size = options.cache_size.map(|pages| pages as i64);
    for pragma in options.pragmas.unwrap_or_default() {
        let value = match (&pragma.text, pragma.integer) {
            (Some(text), _) => PragmaValue::Text(text.clone()),
            (None, Some(integer)) => PragmaValue::Integer(integer as i64),
            (None, None) => return Err(invalid("pragma value for", &pragma.name)),
        };
        settings.pragmas.push((pragma.name.clone(), value));
    }
    settings.strict_settings = options.strict_settings.unwrap_or(false);
    Ok(())
}

fn value_to_js(cx: Cx, value: &SettingValue) -> Result<Js> {
    match value {
        SettingValue::Null => cx.null(),
        SettingValue::Bool(b) => cx.boolean(*b),
        SettingValue::Integer(i) => cx.number(*i as f64),
        SettingValue::Real(r) => cx.number(*r),
        SettingValue::Text(t) => cx.string(t),
    }
}

/// `[name, value, name, value, ...]`.
fn pairs_to_js<'a>(
    cx: Cx,
    pairs: impl ExactSizeIterator<Item = (&'a str, &'a SettingValue)>,
) -> Result<Js> {
    let out = cx.array(pairs.len() * 2)?;
    for (i, (name, value)) in pairs.enumerate() {
        cx.set_element(out, (i * 2) as u32, cx.string(name)?)?;
        cx.set_element(out, (i * 2 + 1) as u32, value_to_js(cx, value)?)?;
    }
    Ok(out)
}

/// One array per connection:
/// `[role, index, [name, value, ...], [pragma, value, ...], [name, requested, effective, ...]]`
/// where `role` is `'writer'`, `'reader'` or `'checkpointer'`, `index` the
/// reader's index (else -1), names are the pragmas' names, and the last
/// array lists the settings whose value in force differs from the request.
pub fn report_to_js(cx: Cx, report: &SettingsReport) -> Result<Js> {
    let out = cx.array(report.connections.len())?;
    for (i, connection) in report.connections.iter().enumerate() {
        let (role, index) = match connection.role {
            Role::Writer => ("writer", -1.0),
            Role::Reader(index) => ("reader", index as f64),
            Role::Checkpointer => ("checkpointer", -1.0),
        };
        let entry = cx.array(5)?;
        cx.set_element(entry, 0, cx.string(role)?)?;
        cx.set_element(entry, 1, cx.number(index)?)?;
        let values = connection.values.iter().map(|(k, v)| (k.pragma(), v));
        cx.set_element(entry, 2, pairs_to_js(cx, values)?)?;
        let pragmas = connection.pragmas.iter().map(|(n, v)| (n.as_str(), v));
        cx.set_element(entry, 3, pairs_to_js(cx, pragmas)?)?;
        let mismatches = cx.array(connection.mismatches.len() * 3)?;
        for (j, m) in connection.mismatches.iter().enumerate() {
            let base = (j * 3) as u32;
            cx.set_element(mismatches, base, cx.string(&m.name)?)?;
            cx.set_element(mismatches, base + 1, value_to_js(cx, &m.requested)?)?;
            cx.set_element(mismatches, base + 2, value_to_js(cx, &m.effective)?)?;
        }
        cx.set_element(entry, 4, mismatches)?;
        cx.set_element(out, i as u32, entry)?;
    }
    Ok(out)
}

/// The options the bundled SQLite was compiled with, as `PRAGMA
/// compile_options` lists them.
#[napi(catch_unwind)]
pub fn compile_options() -> Vec<String> {
    offloop_engine::compile_options()
}
