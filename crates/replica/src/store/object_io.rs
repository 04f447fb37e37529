//! The object store's reads that are not requests of their own: a ranged
//! read streamed as a blocking `Read`, and a whole object fetched in
//! parallel parts (the `ReplicaStore` of `object.rs` uses both).

use std::io::{self, Read};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::io_runtime::IoRuntime;
use super::{Fault, StoreError};
use crate::error::{Error, Result};

/// Requests in flight at once for a listing's metadata or a file's parts.
pub(super) const CONCURRENT_REQUESTS: usize = 16;
/// Files larger than this are fetched as several ranged reads at once (one
/// request stream rarely fills a link to S3) and written as a multipart
/// upload; smaller ones go in one request. S3's smallest part is 5 MiB.
pub(super) const PART_SIZE: u64 = 8 << 20;

/// A ranged read as a blocking `Read`: each `read` takes from the chunk in
/// hand, and only when it is used up waits on the store's runtime for the
/// next one.
pub(super) struct StreamReader {
    pub(super) runtime: Arc<IoRuntime>,
    pub(super) stream: BoxStream<'static, object_store::Result<Bytes>>,
    pub(super) chunk: Bytes,
    pub(super) object: String,
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            match self.runtime.block_on(self.stream.next()) {
                None => return Ok(0),
                Some(Ok(chunk)) => self.chunk = chunk,
                Some(Err(e)) => {
                    return Err(io::Error::other(StoreError::from_backend(
                        "read",
                        &self.object,
                        e,
                    )))
                }
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

/// A whole object, in parallel parts when it is large.
pub(super) async fn fetch(
    handle: tokio::runtime::Handle,
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
) -> Result<Bytes> {
    fn backend(path: &Path) -> impl Fn(object_store::Error) -> StoreError + '_ {
        move |e| StoreError::from_backend("read", path.as_ref(), e)
    }
    if size <= PART_SIZE {
        let got = store.get(&path).await.map_err(backend(&path))?;
        return Ok(got.bytes().await.map_err(backend(&path))?);
    }
    let parts = (0..size).step_by(PART_SIZE as usize).map(|start| {
        let (store, path) = (store.clone(), path.clone());
        let range = start..(start + PART_SIZE).min(size);
        let running = handle.spawn(async move {
            let got = store.get_range(&path, range).await;
            Ok(got.map_err(backend(&path))?)
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
        return Err(StoreError::new(
            Fault::Corrupt,
            "read",
            path.as_ref(),
            "the object changed size while it was read",
        )
        .into());
    }
    Ok(whole.freeze())
}

/// A spawned task's result, with a panic in it turned into an error.
pub(super) fn joined<T>(r: std::result::Result<Result<T>, tokio::task::JoinError>) -> Result<T> {
    r.map_err(|e| Error::Panic(e.to_string()))?
}
