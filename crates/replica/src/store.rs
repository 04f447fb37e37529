//! The replica store: LTX files in a folder or an S3 bucket, laid out
//! exactly as Litestream 0.5 lays them out, behind a blocking API.
//!
//! - Folder (`file:///abs/dir`): `<dir>/ltx/<level>/<min:016x>-<max:016x>.ltx`,
//!   level in decimal; each file's modification time is its LTX timestamp.
//! - S3 (`s3://bucket/prefix`): `<prefix>/<level as %04x>/<name>`; each
//!   object carries its LTX timestamp as `x-amz-meta-litestream-timestamp`.
//!
//! Both go through `object_store`. The store owns a small tokio runtime
//! whose threads run every request; callers (plain threads of the
//! replicator and restore) block on results and never see async. It knows
//! LTX only by file name: it never decodes a file.

use std::ops::Range;
use std::path::Path as FsPath;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, ObjectStore, ObjectStoreExt, PutOptions, PutPayload,
};
use offloop_ltx::{file_name, parse_file_name};

use crate::error::{Error, Result};
use crate::replica_url::{backend, Layout};

pub use crate::replica_url::S3Options;

/// The level Litestream keeps snapshots in.
pub const SNAPSHOT_LEVEL: u8 = 9;
/// Every level a replica may hold: L0 (one file per sync) to L9 (snapshots).
pub const LEVELS: std::ops::RangeInclusive<u8> = 0..=SNAPSHOT_LEVEL;
/// The S3 metadata key Litestream keeps an object's LTX timestamp under.
pub const TIMESTAMP_METADATA_KEY: &str = "litestream-timestamp";

/// Requests in flight at once for a listing's metadata or a file's parts.
const CONCURRENT_REQUESTS: usize = 16;
/// Files larger than this are fetched as several ranged reads at once: one
/// request stream rarely fills a link to S3.
const PART_SIZE: u64 = 8 << 20;
/// Threads of the store's runtime: enough to keep requests and transfers
/// moving without taking cores from SQLite.
const RUNTIME_THREADS: usize = 2;

/// One LTX file in the replica, as a listing shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LtxFileInfo {
    pub level: u8,
    pub min_txid: u64,
    pub max_txid: u64,
    /// Bytes.
    pub size: u64,
    /// Milliseconds since the Unix epoch: the file's LTX timestamp where the
    /// store keeps it (a folder's modification times, S3 metadata when
    /// asked for), else when the object was last written.
    pub timestamp: i64,
}

impl LtxFileInfo {
    pub fn name(&self) -> String {
        file_name(self.min_txid, self.max_txid)
    }
}

pub struct ReplicaStore {
    runtime: tokio::runtime::Runtime,
    store: Arc<dyn ObjectStore>,
    layout: Layout,
    url: String,
}

impl std::fmt::Debug for ReplicaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReplicaStore({})", self.url)
    }
}

impl ReplicaStore {
    /// Opens the replica at `url`: `file:///absolute/dir` or
    /// `s3://bucket/prefix` (S3 query parameters `endpoint`, `region` and
    /// `forcePathStyle` are read as Litestream reads them; `s3` fills in
    /// the rest). Makes no request: a missing bucket or a wrong key shows
    /// at the first operation.
    pub fn open(url: &str, s3: &S3Options) -> Result<ReplicaStore> {
        let (store, layout) = backend(url, s3)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("offloop-replica-io")
            .enable_all()
            .build()
            .map_err(|e| Error::io("start the replica store's threads", e))?;
        Ok(ReplicaStore {
            runtime,
            store,
            layout,
            url: url.to_string(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The files of one level, sorted by TXID range. With `timestamps`, an
    /// S3 replica reads each object's LTX timestamp (one HEAD per object,
    /// several at once); a folder's listing has them anyway.
    pub fn list_level(&self, level: u8, timestamps: bool) -> Result<Vec<LtxFileInfo>> {
        self.runtime
            .block_on(self.list_level_async(level, timestamps))
    }

    /// The files of every level (index = level), all levels listed at once.
    pub fn list_all(&self, timestamps: bool) -> Result<Vec<Vec<LtxFileInfo>>> {
        self.runtime.block_on(futures::future::try_join_all(
            LEVELS.map(|level| self.list_level_async(level, timestamps)),
        ))
    }

    /// A whole file. Large files are fetched as several ranges at once.
    pub fn get(&self, file: &LtxFileInfo) -> Result<Bytes> {
        let handle = self.runtime.handle().clone();
        self.runtime.block_on(fetch(
            handle,
            self.store.clone(),
            self.path(file),
            file.size,
        ))
    }

    /// Bytes `range` of a file.
    pub fn get_range(&self, file: &LtxFileInfo, range: Range<u64>) -> Result<Bytes> {
        let path = self.path(file);
        self.runtime
            .block_on(self.store.get_range(&path, range))
            .map_err(|e| store_error("read", &path, e))
    }

    /// Fetches `files`, up to `concurrency` at once on the store's threads,
    /// and hands each to `on_file` (with its index in `files`) on the
    /// calling thread as it arrives, in any order. The first error stops it.
    pub fn fetch_all(
        &self,
        files: &[LtxFileInfo],
        concurrency: usize,
        on_file: impl FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()> {
        let handle = self.runtime.handle().clone();
        let tasks = files
            .iter()
            .map(|f| fetch(handle.clone(), self.store.clone(), self.path(f), f.size));
        self.as_they_arrive(tasks, concurrency, on_file)
    }

    /// Fetches byte ranges of files, up to `concurrency` at once on the
    /// store's threads, and hands each to `on_range` (with its index in
    /// `ranges`) on the calling thread as it arrives, in any order. The
    /// first error, the store's or `on_range`'s, stops it.
    pub fn fetch_ranges(
        &self,
        ranges: &[(LtxFileInfo, Range<u64>)],
        concurrency: usize,
        on_range: impl FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()> {
        let tasks = ranges.iter().map(|(file, range)| {
            let (store, path, range) = (self.store.clone(), self.path(file), range.clone());
            async move {
                store
                    .get_range(&path, range)
                    .await
                    .map_err(|e| store_error("read", &path, e))
            }
        });
        self.as_they_arrive(tasks, concurrency, on_range)
    }

    /// Runs `tasks` on the store's threads, up to `concurrency` at once
    /// (each is spawned only when a slot frees), and hands each result to
    /// `on_result` with the task's index, on the calling thread, as it
    /// arrives. The first error, a task's or `on_result`'s, stops it.
    fn as_they_arrive<T>(
        &self,
        tasks: impl Iterator<Item = T>,
        concurrency: usize,
        mut on_result: impl FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()>
    where
        T: std::future::Future<Output = Result<Bytes>> + Send + 'static,
    {
        let handle = self.runtime.handle();
        let jobs = tasks.enumerate().map(|(i, task)| {
            let running = handle.spawn(task);
            async move { (i, joined(running.await)) }
        });
        self.runtime.block_on(async {
            let mut arrivals = futures::stream::iter(jobs).buffer_unordered(concurrency.max(1));
            while let Some((i, got)) = arrivals.next().await {
                on_result(i, got?)?;
            }
            Ok(())
        })
    }

    /// Writes a file whose LTX header carries `timestamp` (ms since the
    /// epoch), replacing any file of the same name. Readers never see half a
    /// file: a folder writes a temporary file and renames it.
    pub fn put(
        &self,
        level: u8,
        min_txid: u64,
        max_txid: u64,
        bytes: Bytes,
        timestamp: i64,
    ) -> Result<LtxFileInfo> {
        let info = LtxFileInfo {
            level,
            min_txid,
            max_txid,
            size: bytes.len() as u64,
            timestamp,
        };
        let path = self.path(&info);
        let mut opts = PutOptions::default();
        if let Layout::S3 { .. } = self.layout {
            let mut attributes = Attributes::new();
            attributes.insert(
                Attribute::Metadata(TIMESTAMP_METADATA_KEY.into()),
                go_rfc3339_nano(timestamp).into(),
            );
            opts.attributes = attributes;
        }
        self.runtime
            .block_on(
                self.store
                    .put_opts(&path, PutPayload::from_bytes(bytes), opts),
            )
            .map_err(|e| store_error("write", &path, e))?;
        if let Layout::Folder { root } = &self.layout {
            let file = root.join("ltx").join(level.to_string()).join(info.name());
            set_mtime(&file, timestamp)?;
        }
        Ok(info)
    }

    /// Deletes files; one already gone is not an error.
    pub fn delete(&self, files: &[LtxFileInfo]) -> Result<()> {
        self.runtime.block_on(async {
            futures::stream::iter(files.iter().map(|f| {
                let path = self.path(f);
                async move {
                    match self.store.delete(&path).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                        Err(e) => Err(store_error("delete", &path, e)),
                    }
                }
            }))
            .buffer_unordered(CONCURRENT_REQUESTS)
            .try_collect::<Vec<()>>()
            .await
        })?;
        Ok(())
    }

    fn path(&self, file: &LtxFileInfo) -> Path {
        self.layout.level_dir(file.level).join(file.name())
    }

    async fn list_level_async(&self, level: u8, timestamps: bool) -> Result<Vec<LtxFileInfo>> {
        let dir = self.layout.level_dir(level);
        let metas: Vec<_> = self
            .store
            .list(Some(&dir))
            .try_collect()
            .await
            .map_err(|e| store_error("list", &dir, e))?;
        let mut files: Vec<(Path, LtxFileInfo)> = metas
            .into_iter()
            .filter(|m| {
                m.location
                    .prefix_match(&dir)
                    .is_some_and(|mut rest| rest.nth(1).is_none())
            })
            .filter_map(|m| {
                let (min_txid, max_txid) = parse_file_name(m.location.filename()?)?;
                let info = LtxFileInfo {
                    level,
                    min_txid,
                    max_txid,
                    size: m.size,
                    timestamp: m.last_modified.timestamp_millis(),
                };
                Some((m.location, info))
            })
            .collect();
        if timestamps && matches!(self.layout, Layout::S3 { .. }) {
            let stamps: Vec<Option<i64>> = futures::stream::iter(
                files
                    .iter()
                    .map(|(path, _)| metadata_timestamp(&*self.store, path)),
            )
            .buffered(CONCURRENT_REQUESTS)
            .try_collect()
            .await?;
            for ((_, info), stamp) in files.iter_mut().zip(stamps) {
                if let Some(ms) = stamp {
                    info.timestamp = ms;
                }
            }
        }
        let mut files: Vec<LtxFileInfo> = files.into_iter().map(|(_, f)| f).collect();
        files.sort_by_key(|f| (f.min_txid, f.max_txid));
        Ok(files)
    }
}

/// The LTX timestamp an S3 object carries, if it carries one.
async fn metadata_timestamp(store: &dyn ObjectStore, path: &Path) -> Result<Option<i64>> {
    let head = store
        .get_opts(path, GetOptions::new().with_head(true))
        .await
        .map_err(|e| store_error("read metadata of", path, e))?;
    let key = Attribute::Metadata(TIMESTAMP_METADATA_KEY.into());
    Ok(head
        .attributes
        .get(&key)
        .and_then(|v| chrono::DateTime::parse_from_rfc3339(v).ok())
        .map(|t| t.timestamp_millis()))
}

/// A whole object, in parallel parts when it is large.
async fn fetch(
    handle: tokio::runtime::Handle,
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
) -> Result<Bytes> {
    if size <= PART_SIZE {
        let got = store
            .get(&path)
            .await
            .map_err(|e| store_error("read", &path, e))?;
        return got.bytes().await.map_err(|e| store_error("read", &path, e));
    }
    let parts = (0..size).step_by(PART_SIZE as usize).map(|start| {
        let (store, path) = (store.clone(), path.clone());
        let range = start..(start + PART_SIZE).min(size);
        let running = handle.spawn(async move {
            store
                .get_range(&path, range)
                .await
                .map_err(|e| store_error("read", &path, e))
        });
        async move { joined(running.await) }
    });
    let parts: Vec<Bytes> = futures::stream::iter(parts)
        .buffered(CONCURRENT_REQUESTS)
        .try_collect()
        .await?;
    let mut whole = BytesMut::with_capacity(size as usize);
    for part in parts {
        whole.extend_from_slice(&part);
    }
    if whole.len() as u64 != size {
        return Err(Error::Store {
            op: "read",
            message: format!("{path} changed size while it was read"),
        });
    }
    Ok(whole.freeze())
}

/// A spawned task's result, with a panic in it turned into an error.
fn joined<T>(r: std::result::Result<Result<T>, tokio::task::JoinError>) -> Result<T> {
    r.map_err(|e| Error::Panic(e.to_string()))?
}

/// An object-store error as our error, with the usual S3 faults named.
fn store_error(op: &'static str, path: &Path, e: object_store::Error) -> Error {
    let text = e.to_string();
    let message = if matches!(e, object_store::Error::NotFound { .. })
        && !text.contains("NoSuchBucket")
    {
        return Error::NotFound(path.to_string());
    } else if text.contains("NoSuchBucket") {
        format!("the bucket does not exist ({path}): {text}")
    } else if matches!(
        e,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    ) || [
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
    ]
    .iter()
    .any(|c| text.contains(c))
    {
        format!("access denied, check the credentials ({path}): {text}")
    } else {
        format!("{path}: {text}")
    };
    Error::Store { op, message }
}

/// A timestamp as Go's `time.RFC3339Nano` writes it in UTC, which is how
/// Litestream stores it in S3 metadata: trailing zeros of the fraction dropped.
pub fn go_rfc3339_nano(ms: i64) -> String {
    let t = chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
    let frac = ms.rem_euclid(1000);
    let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    if frac != 0 {
        let digits = format!("{frac:03}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s.push('Z');
    s
}

fn set_mtime(path: &FsPath, ms: i64) -> Result<()> {
    let when = if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        UNIX_EPOCH
    };
    let f = std::fs::File::options()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(format!("open {}", path.display()), e))?;
    f.set_times(
        std::fs::FileTimes::new()
            .set_accessed(when)
            .set_modified(when),
    )
    .map_err(|e| Error::io(format!("set the time of {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_written_as_go_writes_rfc3339_nano() {
        assert_eq!(
            go_rfc3339_nano(1_764_506_390_401),
            "2025-11-30T12:39:50.401Z"
        );
        assert_eq!(go_rfc3339_nano(1_764_506_390_400), "2025-11-30T12:39:50.4Z");
        assert_eq!(go_rfc3339_nano(1_764_506_390_000), "2025-11-30T12:39:50Z");
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        let none = S3Options::default();
        let err = |u: &str| ReplicaStore::open(u, &none).unwrap_err().to_string();
        assert!(err("ftp://x/y").contains("unknown scheme"));
        assert!(err("not a url").contains("bad replica URL"));
        assert!(err("s3://bucket").contains("needs a path"));
        assert!(err("s3:///prefix").contains("bucket"));
        let file = tempfile::NamedTempFile::new().unwrap();
        let url = format!("file://{}", file.path().display());
        assert!(err(&url).contains("is a file, not a folder"));
    }

    #[test]
    fn s3_without_credentials_is_refused_before_any_request() {
        let opts = S3Options {
            access_key_id: Some(String::new()),
            ..S3Options::default()
        };
        // An empty key counts as none; the environment may still have one,
        // so only check the message when it does not.
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            let e = ReplicaStore::open("s3://b/p", &opts)
                .unwrap_err()
                .to_string();
            assert!(e.contains("credentials"), "{e}");
        }
    }
}
