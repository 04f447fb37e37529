//! `OpenOptions`: the options object lib/options.js validated, as the
//! addon receives it, and its conversion into the engine's `Settings`.
//! Validation and defaults live in lib/options.js alone; this file only
//! carries values across.

use std::time::Duration;

use napi::Result;
use napi_derive::napi;
use offloop_engine::Settings;

use super::follow::FollowOptions;
use super::replica::ReplicaOptions;
use super::settings::{apply_options, PragmaOption, SettingOptions};

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
    /// Continuous replication (see `replica.rs`); taken out before the
    /// conversion, which leaves it to the caller.
    pub replica: Option<ReplicaOptions>,
    /// 'paged' or 'full': how a missing file is restored from the replica
    /// (see `paged.rs`); taken out before the conversion too.
    pub restore: Option<String>,
    /// A replica to follow (see `follow.rs`); taken out before the
    /// conversion too.
    pub follow: Option<FollowOptions>,
}

impl OpenOptions {
    /// The engine settings for a database at `path`.
    pub fn into_settings(self, path: String) -> Result<Settings> {
        let mut settings = Settings::new(path);
        settings.readers = self.readers as usize;
        settings.read_only = self.read_only;
        settings.busy_timeout = Duration::from_millis(self.timeout.max(0.0) as u64);
        settings.foreign_keys = self.enable_foreign_key_constraints;
        settings.double_quoted_string_literals = self.enable_double_quoted_string_literals;
        settings.defensive = self.defensive;
        settings.journal_size_limit = self.journal_size_limit as i64;
        settings.checkpoint.enabled = self.checkpoint;
        settings.checkpoint.threshold_frames = self.checkpoint_threshold_frames.into();
        settings.checkpoint.idle = Duration::from_millis(self.checkpoint_idle_ms.into());
        settings.checkpoint.backstop_frames = self.checkpoint_backstop_frames.into();
        settings.thread_nice = self.thread_nice.unwrap_or(0).min(19) as i32;
        apply_options(
            &mut settings,
            SettingOptions {
                journal_mode: self.journal_mode.as_deref(),
                synchronous: self.synchronous.as_deref(),
                mmap_size: self.mmap_size,
                cache_size: self.cache_size,
                temp_store: self.temp_store.as_deref(),
                pragmas: self.pragmas.as_deref(),
                strict_settings: self.strict_settings,
            },
        )?;
        Ok(settings)
    }
}

/// The engine's defaults for the options above, so that lib/options.js
/// fills in what the caller left out with the engine's own values and
/// writes none of them itself.
#[napi(object)]
pub struct Defaults {
    pub readers: u32,
    /// Busy timeout in milliseconds.
    pub timeout: f64,
    pub journal_size_limit: f64,
    pub checkpoint_threshold_frames: u32,
    pub checkpoint_idle_ms: u32,
    pub checkpoint_backstop_frames: u32,
}

#[napi(catch_unwind)]
pub fn defaults() -> Defaults {
    let settings = Settings::new(String::new());
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    Defaults {
        readers: clamp(settings.readers as u64),
        timeout: settings.busy_timeout.as_millis() as f64,
        journal_size_limit: settings.journal_size_limit as f64,
        checkpoint_threshold_frames: clamp(settings.checkpoint.threshold_frames),
        checkpoint_idle_ms: clamp(settings.checkpoint.idle.as_millis() as u64),
        checkpoint_backstop_frames: clamp(settings.checkpoint.backstop_frames),
    }
}
