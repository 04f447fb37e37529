//! `ReplicaStore`: the [`Store`] of a folder or an S3 bucket, laid out
//! exactly as Litestream 0.5 lays them out.
//!
//! - Folder (`file:///abs/dir`): `<dir>/ltx/<level>/<min:016x>-<max:016x>.ltx`,
//!   level in decimal; each file's modification time is its LTX timestamp.
//! - S3 (`s3://bucket/prefix`): `<prefix>/<level as %04x>/<name>`; each
//!   object carries its LTX timestamp as `x-amz-meta-litestream-timestamp`.
//!
//! Both go through `object_store`, which is async: every store of the
//! process runs its requests on one shared tokio runtime (`io_runtime`),
//! and callers (plain threads of the replicator and restore) block on
//! results and never see async. Nothing else in offloop runs a runtime. Transfers stream: a write
//! reads its source from disk a part at a time, and a stream from
//! [`Store::open`] holds one network chunk at a time.

use std::io::Read;
use std::ops::Range;
use std::path::Path as FsPath;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode,
    PutMultipartOptions, PutOptions, PutPayload, UpdateVersion,
};
use offloop_ltx::Txid;

use super::io_runtime::IoRuntime;
use super::object_io::{fetch, joined, StreamReader, CONCURRENT_REQUESTS, PART_SIZE};
use super::{
    folder_cas, s3_upload, Comparison, Expect, Fault, LeaseRoot, LtxFile, Store, StoreError,
    Timestamps, Versioned, WriteMode,
};
use crate::error::{Error, Result};
use crate::replica_url::{backend, Layout, LeaseRootPlace, S3Options};

/// The S3 metadata key Litestream keeps an object's LTX timestamp under.
pub const TIMESTAMP_METADATA_KEY: &str = "litestream-timestamp";

/// Parts of one upload in flight at once. With `PART_SIZE`, an upload holds
/// at most 32 MiB of its file in memory whatever the file's size: these
/// two, the part being filled and the read buffer. Two connections at once
/// already carry a link to S3 at the rates a sync needs.
const UPLOAD_PARTS_IN_FLIGHT: usize = 2;

pub struct ReplicaStore {
    runtime: Arc<IoRuntime>,
    store: Arc<dyn ObjectStore>,
    layout: Layout,
    url: String,
    /// Where this replica's process leases live; `None` for the store of
    /// that place itself.
    lease_place: Option<LeaseRootPlace>,
    /// LIST requests sent (a folder: directory reads), for a follower's stats.
    list_requests: AtomicU64,
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
        let (store, layout, place) = backend(url, s3)?;
        let runtime =
            IoRuntime::shared().map_err(|e| Error::io("start the replica store's threads", e))?;
        Ok(ReplicaStore {
            runtime,
            store,
            layout,
            url: url.to_string(),
            lease_place: Some(place),
            list_requests: AtomicU64::new(0),
        })
    }

    /// A whole file, in memory. Large files are fetched as several ranges
    /// at once.
    pub fn get(&self, file: &LtxFile) -> Result<Bytes> {
        let handle = self.runtime.handle().clone();
        self.runtime.block_on(fetch(
            handle,
            self.store.clone(),
            self.path(file),
            file.size,
        ))
    }

    /// The file of `level` covering exactly `min..=max`, whole, found by its
    /// name with one GET and no listing; `None` when there is none. A
    /// follower polls for the next TXID this way.
    pub fn get_named(&self, level: u8, min: Txid, max: Txid) -> Result<Option<(LtxFile, Bytes)>> {
        let name = format!("{min}-{max}.ltx");
        let path = self.layout.level_dir(level).join(name.as_str());
        let backend = |e| StoreError::from_backend("read", path.as_ref(), e);
        self.runtime.block_on(async {
            let Some(got) = get_if_present(&*self.store, &path).await.map_err(backend)? else {
                return Ok(None);
            };
            let (size, stamp) = (got.meta.size, got.meta.last_modified.timestamp_millis());
            let bytes = got.bytes().await.map_err(backend)?;
            let file = LtxFile::from_name(level, &name, size, stamp).ok_or_else(|| {
                StoreError::new(Fault::Corrupt, "read", path.as_ref(), "not an LTX name")
            })?;
            Ok(Some((file, bytes)))
        })
    }

    /// Fetches whole `files`, up to `concurrency` at once on the store's
    /// threads, and hands each to `on_file` (with its index in `files`) on
    /// the calling thread as it arrives, in any order. The first error
    /// stops it.
    pub fn fetch_all(
        &self,
        files: &[LtxFile],
        concurrency: usize,
        on_file: impl FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()> {
        let handle = self.runtime.handle().clone();
        let tasks = files
            .iter()
            .map(|f| fetch(handle.clone(), self.store.clone(), self.path(f), f.size));
        self.as_they_arrive(tasks, concurrency, on_file)
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

    fn path(&self, file: &LtxFile) -> Path {
        self.layout.level_dir(file.level).join(file.name())
    }

    fn attributes(&self, timestamp_ms: i64) -> Attributes {
        let mut attributes = Attributes::new();
        if let Layout::S3 { .. } = self.layout {
            attributes.insert(
                Attribute::Metadata(TIMESTAMP_METADATA_KEY.into()),
                go_rfc3339_nano(timestamp_ms).into(),
            );
        }
        attributes
    }

    /// One request, the file in memory: for files of one part or less.
    async fn put_whole(&self, file: &LtxFile, source: &FsPath, mode: WriteMode) -> Result<()> {
        let path = self.path(file);
        let bytes = std::fs::read(source).map_err(|e| StoreError::local("read", source, e))?;
        let opts = PutOptions {
            mode: match mode {
                WriteMode::Overwrite => PutMode::Overwrite,
                WriteMode::CreateNew => PutMode::Create,
            },
            attributes: self.attributes(file.timestamp_ms),
            ..PutOptions::default()
        };
        self.store
            .put_opts(&path, PutPayload::from(bytes), opts)
            .await
            .map_err(|e| StoreError::from_backend("write", path.as_ref(), e))?;
        Ok(())
    }

    /// A multipart upload read from disk a part at a time, conditional on
    /// S3 as `mode` says.
    async fn put_parts(&self, file: &LtxFile, source: &FsPath, mode: WriteMode) -> Result<()> {
        let creates = match (&self.layout, mode) {
            (Layout::S3 { creates, .. }, WriteMode::CreateNew) => Some(creates),
            _ => None,
        };
        s3_upload::upload(s3_upload::Upload {
            store: &*self.store,
            path: &self.path(file),
            source,
            options: PutMultipartOptions {
                attributes: self.attributes(file.timestamp_ms),
                ..PutMultipartOptions::default()
            },
            create_only: creates,
            part_size: PART_SIZE as usize,
            parts_in_flight: UPLOAD_PARTS_IN_FLIGHT,
        })
        .await
    }
}

impl Store for ReplicaStore {
    fn url(&self) -> &str {
        &self.url
    }

    fn list(&self, level: u8, from: Txid, timestamps: Timestamps) -> Result<Vec<LtxFile>> {
        self.runtime
            .block_on(self.list_level_async(level, from, timestamps))
    }

    fn list_all(&self, timestamps: Timestamps) -> Result<Vec<Vec<LtxFile>>> {
        self.list_all_from(Txid::FIRST, timestamps)
    }

    fn read_range(&self, file: &LtxFile, range: Range<u64>) -> Result<Bytes> {
        let path = self.path(file);
        Ok(self
            .runtime
            .block_on(self.store.get_range(&path, range))
            .map_err(|e| StoreError::from_backend("read", path.as_ref(), e))?)
    }

    fn open(&self, file: &LtxFile, range: Range<u64>) -> Result<Box<dyn Read + Send>> {
        let path = self.path(file);
        let opts = GetOptions {
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        };
        let got = self
            .runtime
            .block_on(self.store.get_opts(&path, opts))
            .map_err(|e| StoreError::from_backend("read", path.as_ref(), e))?;
        Ok(Box::new(StreamReader {
            runtime: self.runtime.clone(),
            stream: got.into_stream(),
            chunk: Bytes::new(),
            object: path.to_string(),
        }))
    }

    fn read_ranges(
        &self,
        ranges: &[(LtxFile, Range<u64>)],
        concurrency: usize,
        on_range: &mut dyn FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()> {
        let tasks = ranges.iter().map(|(file, range)| {
            let (store, path, range) = (self.store.clone(), self.path(file), range.clone());
            async move {
                Ok(store
                    .get_range(&path, range)
                    .await
                    .map_err(|e| StoreError::from_backend("read", path.as_ref(), e))?)
            }
        });
        self.as_they_arrive(tasks, concurrency, on_range)
    }

    fn write(&self, file: &LtxFile, source: &FsPath, mode: WriteMode) -> Result<()> {
        // A folder's create links a finished temporary file to its name;
        // everything else streams to the store, a part at a time above
        // one part's size.
        let local = match &self.layout {
            Layout::Folder { root } => Some(
                root.join("ltx")
                    .join(file.level.to_string())
                    .join(file.name()),
            ),
            Layout::S3 { .. } => None,
        };
        match (&local, mode) {
            (Some(path), WriteMode::CreateNew) => folder_cas::create_new(path, source)?,
            (_, mode) => self.runtime.block_on(async {
                if file.size <= PART_SIZE {
                    self.put_whole(file, source, mode).await
                } else {
                    self.put_parts(file, source, mode).await
                }
            })?,
        }
        local.map_or(Ok(()), |path| set_mtime(&path, file.timestamp_ms))
    }

    fn read_object(&self, name: &str) -> Result<Option<Versioned>> {
        let prefix = match &self.layout {
            Layout::Folder { root } => return folder_cas::read(root, name),
            Layout::S3 { prefix, .. } => prefix,
        };
        let path = prefix.clone().join(name);
        let backend = |e| StoreError::from_backend("read", path.as_ref(), e);
        self.runtime.block_on(async {
            let Some(got) = get_if_present(&*self.store, &path).await.map_err(backend)? else {
                return Ok(None);
            };
            let version = got.meta.e_tag.clone().unwrap_or_default();
            let bytes = got.bytes().await.map_err(backend)?;
            Ok(Some(Versioned { bytes, version }))
        })
    }

    fn replace_object(&self, name: &str, bytes: Bytes, expect: &Expect) -> Result<String> {
        let prefix = match &self.layout {
            Layout::Folder { root } => return folder_cas::replace(root, name, bytes, expect),
            Layout::S3 { prefix, .. } => prefix,
        };
        let path = prefix.clone().join(name);
        let mode = match expect {
            Expect::Absent => PutMode::Create,
            Expect::Version(e_tag) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag.clone()),
                version: None,
            }),
        };
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let put = self
            .runtime
            .block_on(self.store.put_opts(&path, PutPayload::from(bytes), opts))
            .map_err(|e| match e {
                // `If-Match` on a key that is gone: S3 answers 404; to us, it changed.
                object_store::Error::NotFound { .. } => StoreError::new(
                    Fault::Conflict,
                    "replace",
                    path.as_ref(),
                    "it no longer exists",
                ),
                e => StoreError::from_backend("replace", path.as_ref(), e),
            })?;
        Ok(put.e_tag.unwrap_or_default())
    }

    fn lease_root(&self) -> Result<LeaseRoot> {
        let place = self
            .lease_place
            .clone()
            .ok_or_else(|| Error::State(format!("{} is a lease root, not a replica", self.url)))?;
        let store = ReplicaStore {
            runtime: self.runtime.clone(),
            store: self.store.clone(),
            layout: place.layout,
            url: place.key.clone(),
            lease_place: None,
            list_requests: AtomicU64::new(0),
        };
        Ok(LeaseRoot {
            key: place.key,
            store: Arc::new(store),
        })
    }

    fn compare(&self, file: &LtxFile, source: &FsPath) -> Result<Comparison> {
        let path = self.path(file);
        let backend = |e| StoreError::from_backend("read", path.as_ref(), e);
        let local_error = |e| StoreError::local("read", source, e);
        let mut local = std::fs::File::open(source).map_err(local_error)?;
        let size = local.metadata().map_err(local_error)?.len();
        // The future runs on this (plain, blocking) thread: reading the
        // local file inside it blocks no task of the store's runtime.
        self.runtime.block_on(async {
            let Some(got) = get_if_present(&*self.store, &path).await.map_err(backend)? else {
                return Ok(Comparison::Absent);
            };
            if got.meta.size != size {
                return Ok(Comparison::Different);
            }
            let mut stream = got.into_stream();
            let (mut compared, mut ours) = (0u64, Vec::new());
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(backend)?;
                compared += chunk.len() as u64;
                if compared > size {
                    return Ok(Comparison::Different);
                }
                ours.resize(chunk.len(), 0);
                local.read_exact(&mut ours).map_err(local_error)?;
                if ours != chunk {
                    return Ok(Comparison::Different);
                }
            }
            Ok(if compared == size {
                Comparison::Same
            } else {
                Comparison::Different
            })
        })
    }

    fn delete(&self, files: &[LtxFile]) -> Result<()> {
        self.runtime.block_on(async {
            futures::stream::iter(files.iter().map(|f| {
                let path = self.path(f);
                async move {
                    match self.store.delete(&path).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                        Err(e) => Err(StoreError::from_backend("delete", path.as_ref(), e)),
                    }
                }
            }))
            .buffer_unordered(CONCURRENT_REQUESTS)
            .try_collect::<Vec<()>>()
            .await
        })?;
        Ok(())
    }
}

/// The LTX timestamp an S3 object carries, if it carries one.
/// The object at `path`, or `None` when there is none.
async fn get_if_present(
    store: &dyn ObjectStore,
    path: &Path,
) -> object_store::Result<Option<object_store::GetResult>> {
    match store.get(path).await {
        Ok(got) => Ok(Some(got)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn metadata_timestamp(store: &dyn ObjectStore, path: &Path) -> Result<Option<i64>> {
    let head = store
        .get_opts(path, GetOptions::new().with_head(true))
        .await
        .map_err(|e| StoreError::from_backend("read metadata of", path.as_ref(), e))?;
    let key = Attribute::Metadata(TIMESTAMP_METADATA_KEY.into());
    Ok(head
        .attributes
        .get(&key)
        .and_then(|v| chrono::DateTime::parse_from_rfc3339(v).ok())
        .map(|t| t.timestamp_millis()))
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

mod listing;

#[cfg(test)]
#[path = "object_tests.rs"]
mod tests;
