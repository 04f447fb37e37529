//! Listing a replica's levels, and counting the LIST requests that takes.

use std::sync::atomic::Ordering;

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::ObjectMeta;
use offloop_ltx::Txid;

use super::{metadata_timestamp, ReplicaStore};
use crate::error::Result;
use crate::replica_url::Layout;
use crate::store::object_io::CONCURRENT_REQUESTS;
use crate::store::{LtxFile, StoreError, Timestamps, LEVELS};

/// Keys an S3 LIST returns at most: a listing of `n` keys takes this many
/// requests (one when there is none).
const KEYS_PER_LIST: usize = 1000;

impl ReplicaStore {
    /// LIST requests this store has sent so far.
    pub fn list_requests(&self) -> u64 {
        self.list_requests.load(Ordering::Relaxed)
    }

    /// A listing that returned `keys` keys was sent.
    fn listed(&self, keys: usize) {
        let requests = keys.div_ceil(KEYS_PER_LIST).max(1);
        self.list_requests
            .fetch_add(requests as u64, Ordering::Relaxed);
    }

    /// Every level at once as `list_all` does, but L0 only from `from`.
    /// On S3, one listing of the replica's prefix (a page per 1,000 files)
    /// rather than one per level: a replica holds a few files in most of
    /// its ten levels, and a fresh one none, so a tenant's open or a
    /// follower's check asks once where it asked ten times.
    pub fn list_all_from(&self, from: Txid, stamps: Timestamps) -> Result<Vec<Vec<LtxFile>>> {
        if let Layout::S3 { prefix, .. } = &self.layout {
            return self
                .runtime
                .block_on(self.list_prefix_async(prefix, from, stamps));
        }
        self.runtime
            .block_on(futures::future::try_join_all(LEVELS.map(|level| {
                let from = if level == 0 { from } else { Txid::FIRST };
                self.list_level_async(level, from, stamps)
            })))
    }

    /// Every level's files under an S3 `prefix`, in one listing: keys
    /// sort by level (`%04x`) and then by min TXID, so starting after L0's
    /// name for `from` skips L0's earlier files and none of the others.
    /// Keys that are not a level's LTX file (the lease's `lock.json`) are
    /// passed over.
    async fn list_prefix_async(
        &self,
        prefix: &Path,
        from: Txid,
        timestamps: Timestamps,
    ) -> Result<Vec<Vec<LtxFile>>> {
        let metas = self
            .list_keys(prefix, starting_at(self.layout.level_dir(0), from))
            .await?;
        let files = metas
            .into_iter()
            .filter_map(|m| {
                let file = {
                    let mut rest = m.location.prefix_match(prefix)?;
                    let (level, name) = (rest.next()?, rest.next()?);
                    if rest.next().is_some() || level.as_ref().len() != 4 {
                        return None;
                    }
                    let level = u8::from_str_radix(level.as_ref(), 16).ok()?;
                    if !LEVELS.contains(&level) {
                        return None;
                    }
                    let stamp = m.last_modified.timestamp_millis();
                    LtxFile::from_name(level, name.as_ref(), m.size, stamp)?
                };
                (file.level != 0 || file.min_txid >= from).then_some((m.location, file))
            })
            .collect();
        let mut levels: Vec<Vec<LtxFile>> = LEVELS.map(|_| Vec::new()).collect();
        for file in self.stamped(files, timestamps).await? {
            levels[usize::from(file.level)].push(file);
        }
        Ok(levels)
    }

    pub(super) async fn list_level_async(
        &self,
        level: u8,
        from: Txid,
        timestamps: Timestamps,
    ) -> Result<Vec<LtxFile>> {
        let dir = self.layout.level_dir(level);
        let metas = self.list_keys(&dir, starting_at(dir.clone(), from)).await?;
        let files: Vec<(Path, LtxFile)> = metas
            .into_iter()
            .filter(|m| {
                m.location
                    .prefix_match(&dir)
                    .is_some_and(|mut rest| rest.nth(1).is_none())
            })
            .filter_map(|m| {
                let file = LtxFile::from_name(
                    level,
                    m.location.filename()?,
                    m.size,
                    m.last_modified.timestamp_millis(),
                )?;
                (file.min_txid >= from).then_some((m.location, file))
            })
            .collect();
        self.stamped(files, timestamps).await
    }

    /// Every key under `under` (after `offset`, where given), counted as
    /// the LIST requests it took.
    async fn list_keys(&self, under: &Path, offset: Option<Path>) -> Result<Vec<ObjectMeta>> {
        let listing = match &offset {
            None => self.store.list(Some(under)),
            Some(offset) => self.store.list_with_offset(Some(under), offset),
        };
        let metas: Vec<ObjectMeta> = listing
            .try_collect()
            .await
            .map_err(|e| StoreError::from_backend("list", under.as_ref(), e))?;
        self.listed(metas.len());
        Ok(metas)
    }

    /// `files` with their LTX timestamps where asked (on S3, read from each
    /// object's metadata; a folder's modification times are already
    /// them), sorted by TXID range.
    async fn stamped(
        &self,
        mut files: Vec<(Path, LtxFile)>,
        timestamps: Timestamps,
    ) -> Result<Vec<LtxFile>> {
        if timestamps == Timestamps::Ltx && matches!(self.layout, Layout::S3 { .. }) {
            let stamps: Vec<Option<i64>> = futures::stream::iter(
                files
                    .iter()
                    .map(|(path, _)| metadata_timestamp(&*self.store, path)),
            )
            .buffered(CONCURRENT_REQUESTS)
            .try_collect()
            .await?;
            for ((_, file), stamp) in files.iter_mut().zip(stamps) {
                if let Some(ms) = stamp {
                    file.timestamp_ms = ms;
                }
            }
        }
        let mut files: Vec<LtxFile> = files.into_iter().map(|(_, f)| f).collect();
        files.sort_by_key(|f| (f.min_txid, f.max_txid));
        Ok(files)
    }
}

/// Where a listing of the level at `dir` starts for files from `from` on
/// (`None`: from the first). Names sort by min TXID: every file starting
/// at `from` or later sorts after this name, and every earlier file
/// before it.
fn starting_at(dir: Path, from: Txid) -> Option<Path> {
    (from != Txid::FIRST).then(|| dir.join(format!("{from}-{:016x}.ltx", 0).as_str()))
}
