//! `Paged`: one database file being filled from a `PageSource` — which of
//! its pages are local, how a missing one is brought in, and when the file
//! is whole. The VFS (`vfs.rs`) asks it before reads and tells it of
//! writes; a background fill (the caller's) asks it which pages are still
//! missing and hands it pages.
//!
//! Invariants:
//! - a page is written into the file only while it is missing, and marked
//!   local under the same lock, so a page SQLite wrote (a checkpoint) is
//!   never overwritten by an older copy from the source;
//! - the map file records a page only after the file's bytes for it were
//!   synced, so after a crash a page called local is whole;
//! - once every page is local the map file is removed and nothing here
//!   runs again for this file: it is an ordinary database.
//!
//! It never decides where pages come from (the source does) and never
//! talks to SQLite.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use offloop_file::{sync_parent, PositionedIo, WritableFile};

use crate::map::{map_path, write_map, MapRecord, PageBits};

/// Where missing pages come from.
pub trait PageSource: Send + Sync {
    /// Reads page `pgno`, and any neighbours worth having while at it (a
    /// read-ahead) for which `missing` holds: each page with its bytes,
    /// exactly a page long. Blocking; it retries what is worth retrying,
    /// and an error (why, in words) means the page cannot be had now.
    fn read_page(
        &self,
        pgno: u32,
        missing: &dyn Fn(u32) -> bool,
    ) -> Result<Vec<(u32, Vec<u8>)>, String>;
}

/// What `Paged::stats` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagedStats {
    pub pages_local: u32,
    pub pages_total: u32,
    pub filled: bool,
    /// Why the last page read failed, until one succeeds.
    pub last_error: Option<String>,
}

pub struct Paged {
    db_path: PathBuf,
    map_path: PathBuf,
    /// The database file, read-write, for pages brought in.
    file: WritableFile,
    page_size: u32,
    tag: Vec<u8>,
    local: Mutex<PageBits>,
    filled: AtomicBool,
    source: Arc<dyn PageSource>,
    last_error: Mutex<Option<String>>,
    /// Held for a whole `save`: the writer's syncs and the fill's progress
    /// both save, through one temporary file renamed over the map, and two
    /// at once would rename one's half-written file into place (or fail
    /// the second rename).
    saving: Mutex<()>,
}

impl std::fmt::Debug for Paged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Paged({})", self.db_path.display())
    }
}

/// SQLite never stores data in the page holding the byte at 1 GiB.
fn lock_page(page_size: u32) -> u32 {
    (0x4000_0000 / page_size) + 1
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Paged {
    /// Starts a new file at `db_path` of `pages` pages, none of them local,
    /// whose pages will come from `source`; `tag` is kept in the map file
    /// for whoever resumes it (which source, at which state). The map file
    /// is durable before the database file exists, so a crash never
    /// leaves a database file with holes and no map.
    pub fn create(
        db_path: &Path,
        page_size: u32,
        pages: u32,
        tag: Vec<u8>,
        source: Arc<dyn PageSource>,
    ) -> io::Result<Arc<Paged>> {
        if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{page_size} is not a SQLite page size"),
            ));
        }
        let map_path = map_path(db_path);
        let mut local = PageBits::new(pages);
        local.insert(lock_page(page_size));
        let record = MapRecord {
            page_size,
            tag,
            local,
        };
        write_map(&map_path, &record)?;
        sync_parent(db_path)?;
        let file = WritableFile::create_new(db_path)?;
        file.set_len(u64::from(pages) * u64::from(page_size))?;
        file.sync()?;
        sync_parent(db_path)?;
        Ok(Self::new(db_path, map_path, file, record, source))
    }

    /// Carries on filling the file at `db_path` from the map file a
    /// previous process left (`record`, read with `read_map`).
    pub fn resume(
        db_path: &Path,
        record: MapRecord,
        source: Arc<dyn PageSource>,
    ) -> io::Result<Arc<Paged>> {
        let file = WritableFile::open(db_path)?;
        let want = u64::from(record.local.pages()) * u64::from(record.page_size);
        // A checkpoint may have grown the file; a shorter one lost pages.
        if file.metadata()?.len() < want {
            file.set_len(want)?;
        }
        Ok(Self::new(db_path, map_path(db_path), file, record, source))
    }

    fn new(
        db_path: &Path,
        map_path: PathBuf,
        file: WritableFile,
        record: MapRecord,
        source: Arc<dyn PageSource>,
    ) -> Arc<Paged> {
        Arc::new(Paged {
            db_path: db_path.to_path_buf(),
            map_path,
            file,
            page_size: record.page_size,
            tag: record.tag,
            filled: AtomicBool::new(record.local.is_full()),
            local: Mutex::new(record.local),
            source,
            last_error: Mutex::new(None),
            saving: Mutex::new(()),
        })
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// The database's size in pages when the fill began.
    pub fn page_count(&self) -> u32 {
        lock(&self.local).pages()
    }

    pub fn tag(&self) -> &[u8] {
        &self.tag
    }

    /// Every page is local and the map file is gone: nothing is fetched
    /// again.
    pub fn is_filled(&self) -> bool {
        self.filled.load(Ordering::Acquire)
    }

    pub fn is_local(&self, pgno: u32) -> bool {
        self.is_filled() || lock(&self.local).contains(pgno)
    }

    /// The first page at or after `from` that is not local yet.
    pub fn next_missing(&self, from: u32) -> Option<u32> {
        lock(&self.local).next_missing(from)
    }

    pub fn stats(&self) -> PagedStats {
        let local = lock(&self.local);
        PagedStats {
            pages_local: local.count(),
            pages_total: local.pages(),
            filled: self.is_filled(),
            last_error: lock(&self.last_error).clone(),
        }
    }

    /// Records why a read from the source failed (`None`: it works again).
    pub fn set_error(&self, error: Option<String>) {
        *lock(&self.last_error) = error;
    }

    /// Writes the pages among `pages` that are still missing and marks them
    /// local; returns how many it wrote. Pages SQLite wrote meanwhile are
    /// left alone.
    pub fn write_missing(&self, pages: &[(u32, Vec<u8>)]) -> io::Result<u32> {
        let mut local = lock(&self.local);
        let mut written = 0;
        for (pgno, data) in pages {
            if local.contains(*pgno) {
                continue;
            }
            if data.len() != self.page_size as usize {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "page {pgno} is {} bytes, not {}",
                        data.len(),
                        self.page_size
                    ),
                ));
            }
            let at = u64::from(pgno - 1) * u64::from(self.page_size);
            self.file.write_all_at(data, at)?;
            local.insert(*pgno);
            written += 1;
        }
        Ok(written)
    }

    /// Brings pages `first..=last` in from the source where missing.
    pub fn ensure(&self, first: u32, last: u32) -> Result<(), String> {
        for pgno in first..=last {
            if self.is_local(pgno) {
                continue;
            }
            let pages = match self.source.read_page(pgno, &|p| !self.is_local(p)) {
                Ok(pages) => pages,
                Err(e) => {
                    let why = format!("page {pgno} is not local yet and cannot be read: {e}");
                    self.set_error(Some(why.clone()));
                    return Err(why);
                }
            };
            self.write_missing(&pages)
                .map_err(|e| format!("cannot write page {pgno} into the database file: {e}"))?;
            if !self.is_local(pgno) {
                return Err(format!("the replica did not return page {pgno}"));
            }
            self.set_error(None);
        }
        Ok(())
    }

    /// Runs `write` (SQLite's own write of pages `first..=last`) with the
    /// map locked, and marks the pages local if it succeeds: from then on
    /// SQLite's bytes are the page's.
    pub(crate) fn written<R>(&self, first: u32, last: u32, write: impl FnOnce() -> (R, bool)) -> R {
        let mut local = lock(&self.local);
        let (r, ok) = write();
        if ok {
            for pgno in first..=last {
                local.insert(pgno);
            }
        }
        r
    }

    /// Runs `truncate` (SQLite's own truncation of the file to `pages`
    /// pages) with the map locked, and marks the pages past it local if it
    /// succeeds: they hold nothing to fetch. Under the lock, because the
    /// fill writes only under it: a page written between the truncation
    /// and the marking would grow the file back past its end.
    pub(crate) fn truncated<R>(&self, pages: u32, truncate: impl FnOnce() -> (R, bool)) -> R {
        let mut local = lock(&self.local);
        let (r, ok) = truncate();
        if ok {
            let total = local.pages();
            for pgno in pages.saturating_add(1)..=total {
                local.insert(pgno);
            }
        }
        r
    }

    /// Makes what is local durable: syncs the database file, then records
    /// the pages that were local before the sync in the map file.
    pub fn save(&self) -> io::Result<()> {
        // One at a time, each recording what was local when it began: a
        // later save never writes an older map over a newer one.
        let _one = lock(&self.saving);
        if self.is_filled() {
            return Ok(());
        }
        self.record_local()
    }

    /// `save`'s work, with `saving` held.
    fn record_local(&self) -> io::Result<()> {
        let local = lock(&self.local).clone();
        self.file.sync_contents()?;
        write_map(
            &self.map_path,
            &MapRecord {
                page_size: self.page_size,
                tag: self.tag.clone(),
                local,
            },
        )
    }

    /// When every page is local: makes it durable, removes the map file
    /// and reports true; from then on the file is an ordinary database.
    /// False while pages are missing.
    pub fn complete(&self) -> io::Result<bool> {
        if self.is_filled() {
            return Ok(true);
        }
        if !lock(&self.local).is_full() {
            return Ok(false);
        }
        // No save between the last map and its removal: it would write
        // the map back.
        let _one = lock(&self.saving);
        if self.is_filled() {
            return Ok(true);
        }
        // A full map first: were the removal lost in a crash, the map that
        // comes back must not send anyone to fetch a page SQLite has since
        // rewritten.
        self.record_local()?;
        fs::remove_file(&self.map_path)?;
        sync_parent(&self.db_path)?;
        self.filled.store(true, Ordering::Release);
        Ok(true)
    }
}
