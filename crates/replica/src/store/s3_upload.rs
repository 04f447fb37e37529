//! Multipart uploads to S3 that stream from disk, and that can be
//! conditional: the condition is `crate::create_only`'s.

use std::io::{self, Read};
use std::path::Path as FsPath;
use std::sync::Arc;

use futures::stream::FuturesUnordered;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStore, PutMultipartOptions, PutPayload, UploadPart};

use super::StoreError;
use crate::create_only::CreateOnly;
use crate::error::Result;

/// What one multipart upload needs to know.
pub(crate) struct Upload<'a> {
    pub store: &'a dyn ObjectStore,
    pub path: &'a Path,
    pub source: &'a FsPath,
    pub options: PutMultipartOptions,
    /// `Some` to create the object only if its key is absent.
    pub create_only: Option<&'a Arc<CreateOnly>>,
    pub part_size: usize,
    pub parts_in_flight: usize,
}

/// Uploads `source` a part at a time, at most `parts_in_flight` parts in
/// memory (plus the one being read). A failed upload is aborted, so S3
/// keeps none of its parts; an abort that fails too leaves them to the
/// bucket's lifecycle rule, as any interrupted upload does.
pub(crate) async fn upload(mut job: Upload<'_>) -> Result<()> {
    let object = job.path.as_ref();
    let backend = |e| StoreError::from_backend("write", object, e);
    let _registered = job.create_only.map(|set| set.register(job.path));
    let options = std::mem::take(&mut job.options);
    let mut upload = job
        .store
        .put_multipart_opts(job.path, options)
        .await
        .map_err(backend)?;
    let sent = send_parts(&mut *upload, &job).await;
    let done = match sent {
        Ok(()) => upload.complete().await.map(|_| ()).map_err(backend),
        Err(e) => Err(e),
    };
    if done.is_err() {
        let _ = upload.abort().await;
    }
    Ok(done?)
}

async fn send_parts(
    upload: &mut dyn MultipartUpload,
    job: &Upload<'_>,
) -> std::result::Result<(), StoreError> {
    let backend = |e| StoreError::from_backend("write", job.path.as_ref(), e);
    let local = |e| StoreError::local("read", job.source, e);
    let mut input = std::fs::File::open(job.source).map_err(local)?;
    let mut running: FuturesUnordered<UploadPart> = FuturesUnordered::new();
    loop {
        // An empty file sends no part: completing an upload without one
        // uploads an empty part first.
        let part = read_part(&mut input, job.part_size).map_err(local)?;
        if part.is_empty() {
            break;
        }
        while running.len() >= job.parts_in_flight.max(1) {
            if let Some(sent) = running.next().await {
                sent.map_err(backend)?;
            }
        }
        let last = part.len() < job.part_size;
        running.push(upload.put_part(PutPayload::from(part)));
        if last {
            break;
        }
    }
    while let Some(sent) = running.next().await {
        sent.map_err(backend)?;
    }
    Ok(())
}

/// The next `size` bytes of `input`, fewer only at its end.
fn read_part(input: &mut impl Read, size: usize) -> io::Result<Vec<u8>> {
    let mut part = Vec::with_capacity(size);
    input.take(size as u64).read_to_end(&mut part)?;
    Ok(part)
}
