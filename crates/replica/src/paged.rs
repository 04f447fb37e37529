//! The replica as a `PageSource` for the paged restore: where every page
//! of the database lives in the restore plan (from the files' page indexes
//! alone), one page's frame fetched on demand by a ranged read, and the
//! background fill that brings in the rest in large ranged reads.
//!
//! Opening reads the listings (all levels at once), each plan file's
//! header and tail (its page index): a few bytes a page and nothing else,
//! with a fixed overfetch of one tail read per file. No page is read until
//! SQLite asks for one.
//!
//! # What is verified, and what cannot be
//!
//! Before the database opens, every plan file's header and index are held
//! to the same rules as a full restore's (`plan_files::open_plan`): TXIDs that
//! match the file name, one page size, pages within the commit size, frames
//! laid end to end inside the file, and a commit size the files can fill.
//! Each frame read later must decode to exactly one page of that size and
//! carry the page number the index gave it; a frame that does not is an
//! error, never a page. What a ranged read cannot verify is a page's bytes:
//! LTX has no per-page checksum, only the file checksum over every frame of
//! a file (and a database checksum that Litestream does not write), so a
//! page whose compressed bytes were altered and still decompress to one
//! page is served as it decodes. The fill reads only the frames of pages
//! still missing, not whole files, so it cannot verify file checksums
//! either. A full restore reads every frame and verifies every file before
//! the database exists.
//!
//! It never writes the database file itself: pages go through `Paged`,
//! which keeps SQLite's own writes safe from the fill.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use offloop_ltx::{decode_frame, lock_pgno, Txid};
use offloop_vfs::{PageSource, Paged};

use crate::error::{Error, Result};
use crate::plan::{restore_plan, Target};
use crate::plan_files::open_plan;
use crate::store::{Fault, LtxFile, ReplicaStore, Store, Timestamps};

/// Reads in flight while opening: headers and tails are small, so the open
/// is bound by round trips, not bytes.
const OPEN_CONCURRENCY: usize = 32;
/// Bytes read from the start of the full image with its header, in the
/// open's second round: the frames of its first pages (page 1, the schema,
/// the roots of the tables made first), which SQLite reads to open the
/// database and to start most first queries. At about 2.5 KiB a frame,
/// some fifty pages for 1.3 ms of a 100 MB/s link, where each of those
/// pages read on demand would cost a round trip after the open.
const FIRST_PAGES_BYTES: u64 = 128 << 10;
/// Pages after the one asked for that one on-demand read also brings in
/// when their frames follow it in the same file: SQLite's next read is
/// often the next page (the schema at open, an overflow chain, a scan).
const READ_AHEAD_PAGES: u32 = 8;
/// Bytes the fill asks for in one ranged read: enough that a request's
/// latency is small next to its transfer, small enough that progress is
/// recorded often and eight of them in flight fill a fast link.
const FILL_RANGE: u64 = 1 << 20;
/// Ranged reads the fill keeps in flight: enough to keep a link whose
/// round trip is tens of milliseconds busy. A query's read of a missing
/// page shares the link with them meanwhile (it was measured to wait one
/// round trip more, about 30 ms on a 20 ms link, than on an idle one; a
/// fill that held back for queries left the link idle and took up to twice
/// as long).
const FILL_CONCURRENCY: usize = 8;
/// How long an on-demand read keeps retrying a replica that fails before
/// the query that needs the page gets an error.
const READ_PATIENCE: Duration = Duration::from_secs(3);
/// The fill's pause after a failed round, doubled up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The fill records what is local (a sync and a map write) this often.
const SAVE_EVERY_BYTES: u64 = 64 << 20;

/// Where a page's newest frame is: which plan file, and its bytes there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Location {
    file: u32,
    offset: u64,
    size: u32,
}

/// What a paged open learned of the replica.
pub struct PagedReplica {
    store: Arc<ReplicaStore>,
    plan: Vec<LtxFile>,
    /// Index: pgno - 1. `None` for the lock page.
    pages: Vec<Option<Location>>,
    page_size: u32,
    txid: Txid,
    requests: AtomicU64,
    bytes_fetched: AtomicU64,
    /// Pages whose newest frames the open already read (see
    /// [`PagedReplica::take_opening_pages`]).
    opening_pages: std::sync::Mutex<Vec<(u32, Vec<u8>)>>,
}

impl std::fmt::Debug for PagedReplica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PagedReplica({} at TXID {})",
            self.store.url(),
            self.txid
        )
    }
}

impl PagedReplica {
    /// Plans the restore of `store` at `target` and reads the plan's page
    /// indexes.
    pub fn open(store: Arc<ReplicaStore>, target: Target) -> Result<PagedReplica> {
        let timestamps = match target {
            Target::Timestamp(_) => Timestamps::Ltx,
            Target::Latest | Target::Txid(_) => Timestamps::Listed,
        };
        let levels = store.list_all(timestamps)?;
        let plan = restore_plan(&levels, target)?;
        let last = *plan
            .last()
            .ok_or_else(|| Error::Plan("the replica holds no LTX files".into()))?;
        let mut replica = PagedReplica {
            store,
            plan: plan.clone(),
            pages: Vec::new(),
            page_size: 0,
            txid: last.max_txid,
            requests: AtomicU64::new(0),
            bytes_fetched: AtomicU64::new(0),
            opening_pages: Default::default(),
        };
        // Every file's header and tail, checked against each other and the
        // final header (which bounds the commit size) before any page.
        let opened = open_plan(&*replica.store, &plan, OPEN_CONCURRENCY, FIRST_PAGES_BYTES)?;
        for o in &opened {
            replica.requests.fetch_add(o.requests, Ordering::Relaxed);
            replica.bytes_fetched.fetch_add(o.read, Ordering::Relaxed);
        }
        let header = opened[opened.len() - 1].header;
        replica.page_size = header.page_size;
        let lock = lock_pgno(header.page_size);
        let mut pages = vec![None; header.commit as usize];
        for (i, o) in opened.iter().enumerate() {
            for e in &o.tail.index.entries {
                // Pages past the final size were cut off by a later file.
                if e.pgno > header.commit {
                    continue;
                }
                pages[(e.pgno - 1) as usize] = Some(Location {
                    file: i as u32,
                    offset: e.offset,
                    size: u32::try_from(e.size).unwrap_or(u32::MAX),
                });
            }
        }
        if let Some(missing) =
            (1..=header.commit).find(|&p| p != lock && pages[(p - 1) as usize].is_none())
        {
            return Err(Error::Plan(format!(
                "no file of the plan holds page {missing} of {}",
                header.commit
            )));
        }
        replica.pages = pages;
        // Pages whose newest frame lies in bytes already read: the first
        // pages of the full image, and every page of a file read whole.
        let mut opening = Vec::new();
        for (i, o) in opened.iter().enumerate() {
            let held: Vec<u32> = o
                .tail
                .index
                .entries
                .iter()
                .filter(|e| {
                    e.offset + e.size <= o.head.len() as u64
                        && replica.location(e.pgno).is_some_and(|l| l.file == i as u32)
                })
                .map(|e| e.pgno)
                .collect();
            opening.extend(replica.decode(&held, &o.head, 0)?);
        }
        replica.opening_pages = std::sync::Mutex::new(opening);
        Ok(replica)
    }

    /// The pages the open read on its way (their frames were in the first
    /// bytes of the full image, or in a file small enough to read whole),
    /// decoded and checked as an on-demand read's are; once. Written into
    /// the database before SQLite opens it, they save it a round trip each
    /// for page 1 and the pages that follow.
    pub fn take_opening_pages(&self) -> Vec<(u32, Vec<u8>)> {
        std::mem::take(&mut *self.opening_pages.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// The database's size in pages at the restored TXID.
    pub fn page_count(&self) -> u32 {
        self.pages.len() as u32
    }

    /// The TXID the pages are those of.
    pub fn txid(&self) -> Txid {
        self.txid
    }

    /// Ranged reads made, and bytes they returned, since the open began.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn bytes_fetched(&self) -> u64 {
        self.bytes_fetched.load(Ordering::Relaxed)
    }

    /// Reads `reads` all at once; results in the same order.
    fn fetch(&self, reads: &[(LtxFile, Range<u64>)]) -> Result<Vec<Bytes>> {
        let mut out = vec![Bytes::new(); reads.len()];
        self.store
            .read_ranges(reads, reads.len().min(32), &mut |i, b| {
                self.count(&b);
                out[i] = b;
                Ok(())
            })?;
        Ok(out)
    }

    fn count(&self, b: &Bytes) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_fetched
            .fetch_add(b.len() as u64, Ordering::Relaxed);
    }

    fn location(&self, pgno: u32) -> Option<Location> {
        self.pages
            .get(pgno.checked_sub(1)? as usize)
            .copied()
            .flatten()
    }

    /// Decodes the frames of `pgnos` (in file order) from `bytes`, which
    /// start at byte `start` of their file.
    fn decode(&self, pgnos: &[u32], bytes: &[u8], start: u64) -> Result<Vec<(u32, Vec<u8>)>> {
        let mut out = Vec::with_capacity(pgnos.len());
        for &pgno in pgnos {
            let Some(loc) = self.location(pgno) else {
                continue;
            };
            let at = (loc.offset - start) as usize;
            let frame = bytes
                .get(at..at + loc.size as usize)
                .ok_or_else(|| Error::Verify(format!("page {pgno}'s frame was cut short")))?;
            let mut page = vec![0u8; self.page_size as usize];
            let file = self.plan[loc.file as usize];
            match decode_frame(frame, &mut page) {
                Ok(Some(f)) if f.header.pgno == pgno => out.push((pgno, page)),
                Ok(_) => {
                    return Err(Error::Verify(format!(
                        "{} holds no frame of page {pgno} where its index says",
                        file.name()
                    )))
                }
                Err(source) => {
                    return Err(Error::Ltx {
                        file: file.name(),
                        source,
                    })
                }
            }
        }
        Ok(out)
    }

    /// One ranged read of page `pgno`'s frame and of the frames that
    /// follow it in the same file for pages still missing.
    fn read_run(&self, pgno: u32, missing: &dyn Fn(u32) -> bool) -> Result<Vec<(u32, Vec<u8>)>> {
        let first = self
            .location(pgno)
            .ok_or_else(|| Error::Plan(format!("page {pgno} is past the database's end")))?;
        let mut run = vec![pgno];
        let mut end = first.offset + u64::from(first.size);
        for next in pgno + 1..=pgno.saturating_add(READ_AHEAD_PAGES).min(self.page_count()) {
            match self.location(next) {
                Some(l) if l.file == first.file && l.offset == end && missing(next) => {
                    run.push(next);
                    end += u64::from(l.size);
                }
                _ => break,
            }
        }
        let file = self.plan[first.file as usize];
        let bytes = self.fetch(&[(file, first.offset..end)])?.remove(0);
        self.decode(&run, &bytes, first.offset)
    }

    /// The ranged reads that bring in every page `paged` still lacks:
    /// runs of frames in file order, each at most `FILL_RANGE` bytes, with
    /// the pages each holds.
    fn fill_reads(&self, paged: &Paged) -> Vec<(LtxFile, Range<u64>, Vec<u32>)> {
        let mut per_file: Vec<Vec<u32>> = vec![Vec::new(); self.plan.len()];
        let mut pgno = 1;
        while let Some(p) = paged.next_missing(pgno) {
            if let Some(loc) = self.location(p) {
                per_file[loc.file as usize].push(p);
            }
            pgno = p + 1;
        }
        let mut reads = Vec::new();
        for (i, pgnos) in per_file.into_iter().enumerate() {
            let mut current: Option<(Range<u64>, Vec<u32>)> = None;
            for p in pgnos {
                let Some(loc) = self.location(p) else {
                    continue;
                };
                let frame = loc.offset..loc.offset + u64::from(loc.size);
                match &mut current {
                    // Frames of one file are in page order; a gap (a page
                    // local already) costs less than another request while
                    // it is small.
                    Some((range, pages))
                        if frame.start >= range.end
                            && frame.start - range.end <= 64 << 10
                            && frame.end - range.start <= FILL_RANGE =>
                    {
                        range.end = frame.end;
                        pages.push(p);
                    }
                    _ => {
                        if let Some((range, pages)) = current.take() {
                            reads.push((self.plan[i], range, pages));
                        }
                        current = Some((frame, vec![p]));
                    }
                }
            }
            if let Some((range, pages)) = current {
                reads.push((self.plan[i], range, pages));
            }
        }
        reads
    }

    /// One pass of the fill: every missing page's frames read, decoded and
    /// handed to `paged`; stops early when `stop` is set. Progress is
    /// recorded (a sync of the file, then the map) on a thread of its own,
    /// so the link does not stand idle while the disk syncs.
    fn fill_once(&self, paged: &Paged, stop: &AtomicBool) -> Result<()> {
        let reads = self.fill_reads(paged);
        let ranges: Vec<(LtxFile, Range<u64>)> =
            reads.iter().map(|(f, r, _)| (*f, r.clone())).collect();
        let mut since_save = 0u64;
        let saving = AtomicBool::new(false);
        let save_failed: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);
        std::thread::scope(|scope| {
            self.store
                .read_ranges(&ranges, FILL_CONCURRENCY, &mut |i, bytes| {
                    if stop.load(Ordering::Acquire) {
                        return Err(Error::Plan("the fill was stopped".into()));
                    }
                    if let Some(e) = save_failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
                        return Err(Error::io("record the local pages", e));
                    }
                    self.count(&bytes);
                    let (_, range, pgnos) = &reads[i];
                    let pages = self.decode(pgnos, &bytes, range.start)?;
                    paged
                        .write_missing(&pages)
                        .map_err(|e| Error::io("write pages into the database file", e))?;
                    since_save += bytes.len() as u64;
                    if since_save >= SAVE_EVERY_BYTES && !saving.swap(true, Ordering::AcqRel) {
                        since_save = 0;
                        let (saving, save_failed) = (&saving, &save_failed);
                        scope.spawn(move || {
                            if let Err(e) = paged.save() {
                                *save_failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                            }
                            saving.store(false, Ordering::Release);
                        });
                    }
                    Ok(())
                })
        })
    }

    /// Brings every missing page of `paged` in, retrying with backoff
    /// while the replica fails in ways that may pass, until the file is
    /// whole (Ok) or `stop` is set (Ok, not whole). Errors retrying cannot
    /// mend (a plan file gone, a damaged file) end it.
    pub fn fill(&self, paged: &Paged, stop: &AtomicBool) -> Result<()> {
        let mut backoff = FIRST_BACKOFF;
        loop {
            if stop.load(Ordering::Acquire) {
                return Ok(());
            }
            match self.fill_once(paged, stop) {
                Ok(()) => {
                    paged.set_error(None);
                    if paged
                        .complete()
                        .map_err(|e| Error::io("finish the database file", e))?
                    {
                        return Ok(());
                    }
                    backoff = FIRST_BACKOFF;
                }
                Err(_) if stop.load(Ordering::Acquire) => return Ok(()),
                Err(e) if !retryable(&e) => {
                    paged.set_error(Some(e.to_string()));
                    return Err(e);
                }
                Err(e) => {
                    paged.set_error(Some(e.to_string()));
                    // Keep what arrived: a crash now does not fetch it again.
                    let _ = paged.save();
                    sleep_unless(stop, backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

/// Whether an error may pass: the store down, slow or refusing for now (a
/// network error, credentials about to be fixed), as opposed to what the
/// replica holds being wrong or gone, which retrying cannot mend.
fn retryable(e: &Error) -> bool {
    match e {
        Error::Store(e) => !matches!(e.fault, Fault::NotFound | Fault::Config),
        Error::Io { .. } | Error::Panic(_) => true,
        _ => false,
    }
}

fn sleep_unless(stop: &AtomicBool, total: Duration) {
    let step = Duration::from_millis(20);
    let mut slept = Duration::ZERO;
    while slept < total && !stop.load(Ordering::Acquire) {
        std::thread::sleep(step);
        slept += step;
    }
}

impl PageSource for PagedReplica {
    fn read_page(
        &self,
        pgno: u32,
        missing: &dyn Fn(u32) -> bool,
    ) -> std::result::Result<Vec<(u32, Vec<u8>)>, String> {
        let started = std::time::Instant::now();
        let mut backoff = FIRST_BACKOFF;
        loop {
            match self.read_run(pgno, missing) {
                Ok(pages) => return Ok(pages),
                Err(e) if retryable(&e) && started.elapsed() + backoff < READ_PATIENCE => {
                    std::thread::sleep(backoff);
                    backoff *= 2;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}
