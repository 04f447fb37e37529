//! Replication across the boundary: the `replica` open option and
//! `db.replicate()` become a `Replicator` installed as the engine's WAL
//! observer; `syncReplica`, `stopReplicating` and `Database.restore`
//! complete on this environment's queue like any call; `stats().replica`
//! reads the replicator's counters.
//!
//! Nothing here touches the WAL or the replica: the replicator connects to
//! the replica and reads the WAL on its own thread, and a restore runs on a
//! thread of its own.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine as engine;
use offloop_replica::{
    restore, Connect, Handover, PagedGate, ReplicaSettings, ReplicaStore, Replicator, Reply, Store,
    Txid,
};

use super::completion::CompletionQueue;
use super::dispatch;
use super::drain;

/// The `code` of errors about the replica (lib/errors.js keeps it as is).
const REPLICA_ERROR: &str = "ERR_OFFLOOP_REPLICA";
/// The `code` of a write refused because the database may no longer hold
/// its replica's lease.
const FENCED_ERROR: &str = "ERR_OFFLOOP_FENCED";

/// The S3 settings of `ReplicaOptions` and `RestoreOptions` alike
/// (lib/options.js gathers them into `s3`), field for field the store's
/// `S3Options`.
#[napi(object)]
#[derive(Clone)]
pub struct S3Connection {
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub force_path_style: Option<bool>,
}

impl From<S3Connection> for offloop_replica::S3Options {
    fn from(s: S3Connection) -> Self {
        offloop_replica::S3Options {
            endpoint: s.endpoint,
            region: s.region,
            access_key_id: s.access_key_id,
            secret_access_key: s.secret_access_key,
            session_token: s.session_token,
            force_path_style: s.force_path_style,
        }
    }
}

/// `options.replica` / `db.replicate()`, validated by lib/options.js.
#[napi(object)]
pub struct ReplicaOptions {
    pub url: String,
    pub sync_interval_ms: f64,
    pub snapshot_interval_ms: f64,
    pub retention_ms: f64,
    pub max_pending_bytes: f64,
    pub compaction_intervals_ms: Vec<f64>,
    /// Hold the replica's lease with this TTL; absent: no lease.
    pub lease_ttl_ms: Option<f64>,
    /// `durability: 'replica'`.
    pub durable: bool,
    /// `gatherWindow`; absent: the replica crate's default.
    pub gather_window_ms: Option<f64>,
    pub s3: S3Connection,
}

/// `Database.restore()` options, validated by lib/options.js.
#[napi(object)]
pub struct RestoreOptions {
    pub txid: Option<f64>,
    pub timestamp_ms: Option<f64>,
    pub overwrite: bool,
    pub s3: S3Connection,
}

#[napi(object)]
pub struct ReplicaStats {
    pub url: String,
    pub txid: f64,
    pub lag_ms: f64,
    pub pending_files: f64,
    pub pending_bytes: f64,
    pub bytes_shipped: f64,
    pub durable_rounds: f64,
    pub durable_writes: f64,
    pub last_sync_at: Option<f64>,
    pub last_error: Option<String>,
    /// The lease holder's name while this database holds the lease (null
    /// without a lease).
    pub lease_holder: Option<String>,
    /// Whether the database is fenced: it may no longer hold the lease, and
    /// refuses every commit.
    pub fenced: bool,
}

impl From<offloop_replica::ReplicaStats> for ReplicaStats {
    fn from(s: offloop_replica::ReplicaStats) -> Self {
        ReplicaStats {
            url: s.url,
            txid: s.txid.map_or(0.0, |t| t.get() as f64),
            lag_ms: s.lag.as_secs_f64() * 1000.0,
            pending_files: s.pending_files as f64,
            pending_bytes: s.pending_bytes as f64,
            bytes_shipped: s.bytes_shipped as f64,
            durable_rounds: s.durable_rounds as f64,
            durable_writes: s.durable_writes as f64,
            last_sync_at: s.last_sync_at_ms.map(|ms| ms as f64),
            last_error: s.last_error,
            lease_holder: None,
            fenced: false,
        }
    }
}

fn millis(ms: f64) -> Duration {
    Duration::from_millis(ms.max(0.0) as u64)
}

/// Starts a replicator for `options`; it connects on its own thread.
/// `restore_at`: the database's path when the open restores it from the
/// replica (its lease is then taken at once, beside the restore).
pub fn start(
    options: ReplicaOptions,
    paged: PagedGate,
    restore_at: Option<PathBuf>,
) -> Result<Arc<Replicator>> {
    let (mut settings, connect) = replicating(options, paged);
    settings.restore_at = restore_at;
    Replicator::start(settings, connect).map_err(thread_error)
}

/// Starts replicating a promoted follower's database from where
/// `handover` says, with the lease the promotion took (see
/// `Replicator::take_over`).
pub fn take_over(
    options: ReplicaOptions,
    paged: PagedGate,
    handover: Handover,
) -> Result<Arc<Replicator>> {
    let (settings, connect) = replicating(options, paged);
    Replicator::take_over(settings, connect, handover).map_err(thread_error)
}

/// The replicator's settings and its way to the store, from `options`.
fn replicating(options: ReplicaOptions, paged: PagedGate) -> (ReplicaSettings, Connect) {
    let mut settings = ReplicaSettings::new(options.url.clone());
    settings.paged = Some(paged);
    settings.sync_interval = millis(options.sync_interval_ms);
    settings.snapshot_interval = millis(options.snapshot_interval_ms);
    settings.retention = millis(options.retention_ms);
    settings.max_pending_bytes = options.max_pending_bytes.max(1.0) as u64;
    settings.levels = options
        .compaction_intervals_ms
        .iter()
        .map(|&ms| millis(ms))
        .collect();
    settings.lease_ttl = options.lease_ttl_ms.map(millis);
    settings.durable = options.durable;
    if let Some(ms) = options.gather_window_ms {
        settings.gather_window = millis(ms);
    }
    let s3 = offloop_replica::S3Options::from(options.s3);
    let url = options.url;
    let connect: Connect = Box::new(move || {
        ReplicaStore::open(&url, &s3).map(|store| Arc::new(store) as Arc<dyn Store>)
    });
    (settings, connect)
}

fn thread_error(e: std::io::Error) -> Error {
    Error::new(
        Status::GenericFailure,
        format!("could not start the replicator pool's timer thread: {e}"),
    )
}

/// A replicator answer as the completion of call `id`: the TXID as a number
/// (lib/database.js makes it `{ txid }`; a replica that holds nothing of
/// this database yet is TXID 0 there), or a replica error.
pub fn reply_to(queue: &Arc<CompletionQueue>, id: f64) -> Reply {
    // Counted as outstanding: a pending replica call keeps the process
    // alive, as any other call does.
    let reply = drain::expect_reply(queue, id, 0);
    Box::new(move |result| {
        reply.send(
            result
                .map(|txid| engine::Outcome::Number(txid.map_or(0, Txid::get)))
                .map_err(replica_error),
        )
    })
}

/// `replicator.durable` as the completion of call `id`: a fenced database
/// rejects with `ERR_OFFLOOP_FENCED`, any other failure (replication
/// stopped) with `ERR_OFFLOOP_REPLICA`.
pub fn durable_reply_to(
    queue: &Arc<CompletionQueue>,
    id: f64,
    replicator: Arc<Replicator>,
) -> Reply {
    let reply = drain::expect_reply(queue, id, 0);
    Box::new(move |result| {
        reply.send(
            result
                .map(|txid| engine::Outcome::Text(Some(txid.map_or(0, Txid::get).to_string())))
                .map_err(|message| match replicator.fenced() {
                    Some(_) => engine::Error::Misuse {
                        code: FENCED_ERROR,
                        message: format!(
                            "this write committed locally but is not known to be in the replica, \
                             and the database is fenced: {message}"
                        ),
                    },
                    None => replica_error(message),
                }),
        )
    })
}

/// `stats().replica`, with the lease's state.
pub fn stats(replicator: &Replicator) -> ReplicaStats {
    ReplicaStats {
        lease_holder: replicator.lease_holder(),
        fenced: replicator.fenced().is_some() && replicator.lease_holder().is_some(),
        ..replicator.stats().into()
    }
}

pub fn replica_error(message: String) -> engine::Error {
    engine::Error::Misuse {
        code: REPLICA_ERROR,
        message,
    }
}

/// Restores the replica at `url` into the database file `path`, on a
/// thread of its own; completes `id` with the restored TXID.
#[napi(catch_unwind)]
pub fn restore_replica(id: f64, url: String, path: String, options: RestoreOptions) -> Result<()> {
    let queue = dispatch::queue()?;
    let reply = reply_to(&queue, id);
    let s3 = offloop_replica::S3Options::from(options.s3);
    let opts = offloop_replica::RestoreOptions {
        txid: options.txid.and_then(|t| Txid::new(t as u64)),
        timestamp: options.timestamp_ms.map(|ms| ms as i64),
        overwrite: options.overwrite,
        ..Default::default()
    };
    let work = move || {
        let run = || -> offloop_replica::Answer {
            let store = ReplicaStore::open(&url, &s3).map_err(|e| e.to_string())?;
            restore(&store, &PathBuf::from(&path), &opts)
                .map(|report| Some(report.txid))
                .map_err(|e| e.to_string())
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
            .unwrap_or_else(|_| Err("offloop internal error: the restore panicked".into()));
        reply(result);
    };
    std::thread::Builder::new()
        .name("offloop-restore".into())
        .spawn(work)
        .map(|_| ())
        .map_err(|e| {
            Error::new(
                Status::GenericFailure,
                format!("could not start a restore thread: {e}"),
            )
        })
}
