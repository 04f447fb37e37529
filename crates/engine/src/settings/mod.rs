//! `Settings`: everything that shapes how a database is opened, validated by
//! the caller before it reaches the engine, and the connection settings
//! (pragmas) applied and read back on every connection: the keywords they
//! are written in (`keywords`), which connection gets which (`policy`),
//! applying and reading back (`apply`), and what is in force (`report`).

use std::sync::Arc;
use std::time::Duration;

mod apply;
mod keywords;
mod policy;
mod report;

pub use apply::{apply, read_back};
pub use keywords::{JournalMode, PragmaValue, Synchronous, TempStore};
pub use policy::{Key, SettingValue};
pub use report::{
    is_strict_error, ConnectionSettings, Mismatch, SettingsReport, SETTING_ERROR_CODE,
};

use crate::changes::Changes;
use crate::close_order::CloseOrder;
use crate::functions::Registrations;
use crate::observer::ObserverSlot;
use crate::row_changes::RowChanges;

/// Reader threads when the caller does not say, and the most the JS API's
/// default gives: there the default is one per CPU the process may use, at
/// least 2 and at most this (lib/options.js). Four keeps a server busy
/// while one reader waits on I/O, and costs four connections.
pub const DEFAULT_READERS: usize = 4;
/// `node:sqlite`'s default busy timeout is 0; a server wants to wait for a
/// competing writer instead, and here the wait is on a SQLite thread.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_millis(5000);
/// After the WAL is reset, its file is cut back to this size. 64 MiB keeps
/// a burst's WAL around for reuse without letting one spike hold disk.
pub const DEFAULT_JOURNAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// How the checkpointer thread paces WAL checkpoints.
#[derive(Debug, Clone)]
pub struct CheckpointSettings {
    /// Run the checkpointer thread at all.
    pub enabled: bool,
    /// Frames waiting in the WAL that trigger a PASSIVE checkpoint; also the
    /// WAL length past which the writer is asked to catch up. SQLite's own
    /// automatic checkpoint uses 1000 frames (4 MiB at 4 KiB pages).
    pub threshold_frames: u64,
    /// A pause in writes this long makes the checkpointer copy what is left,
    /// so the next write restarts the WAL.
    pub idle: Duration,
    /// The writer's own `wal_autocheckpoint` while the checkpointer runs: a
    /// backstop for when the checkpointer cannot keep up (other processes
    /// take the CPU, the disk is slow). 3,000 frames (12 MiB at 4 KiB pages)
    /// keeps the WAL near 16 MiB however late the checkpointer runs (see
    /// docs/performance.md); on a machine with CPU to spare the checkpointer
    /// keeps the WAL far below it and it never fires.
    pub backstop_frames: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: true,
            threshold_frames: 1000,
            idle: Duration::from_millis(100),
            backstop_frames: 3_000,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub path: String,
    /// Reader threads; 0 runs every statement on the writer.
    pub readers: usize,
    pub read_only: bool,
    pub busy_timeout: Duration,
    pub foreign_keys: bool,
    pub double_quoted_string_literals: bool,
    /// SQLITE_DBCONFIG_DEFENSIVE: no writes to the schema through
    /// `writable_schema` and other ways to corrupt the file from SQL.
    pub defensive: bool,
    /// `PRAGMA journal_size_limit` in bytes (-1: no limit).
    pub journal_size_limit: i64,
    pub checkpoint: CheckpointSettings,
    /// `PRAGMA journal_mode`, set by the writer. `None`: WAL for a writable
    /// file (readers need it to read while the writer writes), else left as
    /// SQLite opens it.
    pub journal_mode: Option<JournalMode>,
    /// `PRAGMA synchronous`. `None`: NORMAL where WAL is in force, else
    /// SQLite's default (FULL).
    pub synchronous: Option<Synchronous>,
    /// `PRAGMA mmap_size` in bytes (0: no memory mapping). `None`: SQLite's
    /// default (0).
    pub mmap_size: Option<u64>,
    /// `PRAGMA cache_size`: pages when positive, KiB when negative. `None`:
    /// SQLite's default (-2000, about 2 MB).
    pub cache_size: Option<i64>,
    /// `PRAGMA temp_store`. `None`: SQLite's default.
    pub temp_store: Option<TempStore>,
    /// Any other pragmas, applied in this order on the writer and every
    /// reader before the settings above. Names are SQL identifiers.
    pub pragmas: Vec<(String, PragmaValue)>,
    /// Nice value of the database's threads (0–19, Linux; 0 elsewhere):
    /// above 0, the event loop's thread gets the CPU first when the
    /// machine is saturated, at some cost to query throughput.
    pub thread_nice: i32,
    /// Fail the open when a setting read back differs from the request,
    /// instead of only reporting it.
    pub strict_settings: bool,
    /// User functions and aggregates, defined at any time after the open
    /// too: shared with every connection, which applies what is new before
    /// its next job (see `functions`).
    pub registrations: Arc<Registrations>,
    /// Limits, the defensive flag and extensions, changed at any time after
    /// the open too: applied like `registrations` (see `changes`).
    pub changes: Arc<Changes>,
    /// The WAL observer (the replicator), if any; it may be installed or
    /// removed while the database is open.
    pub observer: Arc<ObserverSlot>,
    /// Rows the writer changed, recorded while a caller wants them (SQLite's
    /// update hook; see `row_changes`).
    pub row_changes: Arc<RowChanges>,
    /// Which connection closes last: a backup's connection holds a place
    /// here while open, and the writer closes after it (see `close_order`).
    pub close_order: Arc<CloseOrder>,
    /// The SQLite VFS every connection opens the file with (`None`: the
    /// default): offloop's paged VFS while a restore fills the file.
    pub vfs: Option<String>,
    /// Runs once on the writer's thread before any connection opens (the
    /// other threads wait for the writer): a restore that must put the
    /// file in place first. An error fails the open.
    pub before_open: Option<BeforeOpen>,
    /// The database follows a replica another process writes: the
    /// writer's connection is `query_only` for every job of the
    /// application's, so SQLite refuses each of its writes with
    /// `SQLITE_READONLY`; only `Request::Privileged` writes.
    pub follower: bool,
}

/// Work that must finish before the database's first connection opens.
#[derive(Clone)]
pub struct BeforeOpen(pub Arc<dyn Fn() -> crate::Result<()> + Send + Sync>);

impl std::fmt::Debug for BeforeOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeOpen")
    }
}

impl Settings {
    pub fn new(path: impl Into<String>) -> Self {
        Settings {
            path: path.into(),
            readers: DEFAULT_READERS,
            read_only: false,
            follower: false,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            foreign_keys: true,
            double_quoted_string_literals: false,
            defensive: true,
            journal_size_limit: DEFAULT_JOURNAL_SIZE_LIMIT,
            checkpoint: CheckpointSettings::default(),
            journal_mode: None,
            synchronous: None,
            mmap_size: None,
            cache_size: None,
            temp_store: None,
            pragmas: Vec::new(),
            thread_nice: 0,
            strict_settings: false,
            registrations: Arc::default(),
            changes: Arc::default(),
            observer: Arc::default(),
            row_changes: Arc::default(),
            close_order: Arc::default(),
            vfs: None,
            before_open: None,
        }
    }

    /// The journal mode the writer sets, defaults resolved.
    pub fn requested_journal_mode(&self) -> Option<JournalMode> {
        self.journal_mode
            .or_else(|| (!self.read_only && !self.is_private()).then_some(JournalMode::Wal))
    }

    /// In-memory and temporary databases are private to one connection, so
    /// readers could not see the writer's data: the writer runs everything.
    pub fn is_private(&self) -> bool {
        let p = self.path.as_str();
        p.is_empty()
            || p == ":memory:"
            || p.starts_with("file::memory:")
            || (p.starts_with("file:") && p.contains("mode=memory"))
    }

    /// Whether a checkpointer thread runs: only for a writable WAL file.
    pub fn runs_checkpointer(&self) -> bool {
        self.checkpoint.enabled
            && !self.read_only
            && !self.is_private()
            && self.requested_journal_mode() == Some(JournalMode::Wal)
    }

    /// Reader threads actually started.
    pub fn reader_count(&self) -> usize {
        if self.is_private() {
            0
        } else {
            self.readers
        }
    }
}
