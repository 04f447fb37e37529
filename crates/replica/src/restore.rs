//! Restore: rebuild a database file from its replica, at the latest state
//! or at a point in time, and prove the result.
//!
//! # How it reads
//!
//! First every plan file's header and tail (its page index) are read, a
//! few ranged reads per file all at once, and checked before any page is
//! fetched ([`open_plan`]): the header must name the TXIDs its file name
//! does and the database's page size, and the index must name only pages
//! within the header's commit size, every page for a snapshot, and frames
//! laid end to end inside the file. The final commit size must be one the
//! files can fill, so a header claiming 2^32 pages sizes nothing.
//!
//! Then the frames are read in frame-aligned ranges of at most
//! [`RANGE_BYTES`], [`RestoreOptions::fetches`] at once, and each range is
//! decoded by a pool of threads as it arrives, straight into its place in a
//! temporary file. Memory is bounded by the ranges in flight and queued
//! (fetches plus twice the threads, times `RANGE_BYTES`), not by file size:
//! no file is ever held whole (one that fits in the first tail read, at
//! most [`TAIL_FETCH_SIZE`], is decoded from that read). Ranges may arrive
//! and decode in any order: a page is written only by the newest plan file
//! holding it (a per-page owner, under striped locks), so the result is
//! that of applying the files in order.
//!
//! # What is verified before the database exists
//!
//! Every file's checksum is joined from its ranges' CRCs (each range's CRC
//! covers its frames, pages decompressed) and checked against its trailer;
//! when the replica tracks database checksums the finished image must sum
//! to the last file's post-apply checksum. Pages are written into the
//! temporary file (`<output>.tmp`) as they decode, before their file's
//! checksum is known, but that file is not the database: it is renamed
//! over the output only after every file of the plan verified, and removed
//! on any error. So no page of a file that fails its checksum is ever in a
//! database, and a damaged replica leaves the output as it was.
//!
//! The output is the database image and nothing else, as `litestream
//! restore` leaves it: no `-wal`, and the journal mode recorded in the
//! image's header (WAL for a replicated database).

use std::fs::File;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use offloop_file::{PositionedIo, WritableFile};
use offloop_ltx::{decode_frames, verify_file_checksum, Crc64, DatabaseChecksum, Txid};

use crate::error::{Error, Result};
use crate::plan::{plan_restore, Target};
use crate::plan_files::{check_read, open_plan, OpenedFile};
use crate::store::{LtxFile, ReplicaStore, Store};

/// Locks guarding page owners; a page's lock is `pgno % STRIPES`.
const STRIPES: usize = 1024;

#[derive(Clone, Debug)]
pub struct RestoreOptions {
    /// Restore up to this TXID (it must end an LTX file). Not with `timestamp`.
    pub txid: Option<Txid>,
    /// Restore the last state written strictly before this time (ms since
    /// the epoch). Not with `txid`.
    pub timestamp: Option<i64>,
    /// Replace an existing output file (and drop its `-wal` and `-shm`).
    pub overwrite: bool,
    /// Ranged reads in flight at once (each at most [`RANGE_BYTES`]).
    pub fetches: usize,
    /// Threads decoding pages.
    pub threads: usize,
}

impl Default for RestoreOptions {
    fn default() -> Self {
        let cores = offloop_engine::cores();
        RestoreOptions {
            txid: None,
            timestamp: None,
            overwrite: false,
            fetches: 8,
            threads: cores.clamp(2, 8),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreReport {
    /// The TXID the database was restored to (the last file's max TXID).
    pub txid: Txid,
    /// The last file's LTX timestamp, ms since the epoch.
    pub timestamp: i64,
    pub page_size: u32,
    /// The database's size in pages.
    pub pages: u32,
    /// LTX files applied.
    pub files: usize,
    /// Bytes read from the replica.
    pub bytes_fetched: u64,
    /// Whether the database was checked against a post-apply checksum
    /// (only replicas that track database checksums carry one; Litestream's
    /// do not, and their files' own checksums are verified either way).
    pub checksum_verified: bool,
}

/// Restores the replica in `store` to `output`.
pub fn restore(
    store: &ReplicaStore,
    output: &Path,
    opts: &RestoreOptions,
) -> Result<RestoreReport> {
    let target = match (opts.txid, opts.timestamp) {
        (Some(_), Some(_)) => {
            return Err(Error::Config(
                "restore to a txid or a timestamp, not both".into(),
            ))
        }
        (Some(txid), None) => Target::Txid(txid),
        (None, Some(ms)) => Target::Timestamp(ms),
        (None, None) => Target::Latest,
    };
    let wal = sidecar(output, "-wal");
    let shm = sidecar(output, "-shm");
    if output.is_dir() {
        return Err(Error::Config(format!("{} is a folder", output.display())));
    }
    if !opts.overwrite && (output.exists() || wal.exists()) {
        return Err(Error::Exists(output.to_path_buf()));
    }

    let plan = plan_restore(store, target)?;
    let last = *plan
        .last()
        .ok_or_else(|| Error::Plan("the replica holds no LTX files".into()))?;
    let opened = open_plan(store, &plan, opts.fetches, 0)?;
    let final_header = opened[opened.len() - 1].header;

    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
    }
    let tmp = sidecar(output, ".tmp");
    let guard = TempFile(Some(tmp.clone()));
    // Read back too: the post-apply checksum is summed from the file.
    let file = WritableFile::create(&tmp)
        .map_err(|e| Error::io(format!("create {}", tmp.display()), e))?;
    let page_size = final_header.page_size;
    let commit = final_header.commit;
    file.set_len(u64::from(commit) * u64::from(page_size))
        .map_err(|e| Error::io(format!("size {}", tmp.display()), e))?;

    let applied = apply(store, &plan, opened, &file, commit, opts)?;
    let last_trailer = applied.last_trailer;
    let checksum_verified = last_trailer.post_apply_checksum != 0;
    if checksum_verified {
        let sum = database_checksum(&file, page_size, commit, opts.threads)?;
        if sum != last_trailer.post_apply_checksum {
            return Err(Error::Verify(format!(
                "the restored database sums to {sum:016x}, the replica says {:016x}",
                last_trailer.post_apply_checksum
            )));
        }
    }

    file.sync()
        .map_err(|e| Error::io(format!("sync {}", tmp.display()), e))?;
    drop(file);
    for stale in [&wal, &shm] {
        match std::fs::remove_file(stale) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("remove {}", stale.display()), e)),
        }
    }
    std::fs::rename(&tmp, output).map_err(|e| {
        Error::io(
            format!("rename {} to {}", tmp.display(), output.display()),
            e,
        )
    })?;
    guard.keep();
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        offloop_file::sync_dir(dir).map_err(|e| Error::io(format!("sync {}", dir.display()), e))?;
    }

    Ok(RestoreReport {
        txid: last.max_txid,
        timestamp: final_header.timestamp,
        page_size,
        pages: commit,
        files: plan.len(),
        bytes_fetched: applied.bytes_fetched,
        checksum_verified,
    })
}

/// Bytes of frames one ranged read brings in: whole frames, at least one.
/// The paged fill's range size: large enough that a request's round trip
/// is small next to its transfer, small enough that the ranges in flight
/// and queued stay a few MiB (2 MiB ranges doubled a restore's peak memory
/// for no speed on a local folder).
pub const RANGE_BYTES: u64 = 1 << 20;

/// A run of consecutive frames of one file, read and decoded as one.
struct Run {
    file: usize,
    /// Indexes into the file's page index.
    entries: Range<usize>,
    /// Bytes of the file the frames take.
    bytes: Range<u64>,
}

/// Cuts each file's frames into runs of at most `RANGE_BYTES` (a frame
/// larger than that is a run of its own).
fn runs(opened: &[OpenedFile]) -> Vec<Run> {
    let mut out = Vec::new();
    for (i, o) in opened.iter().enumerate() {
        let entries = &o.tail.index.entries;
        let mut start = 0;
        while start < entries.len() {
            let first = entries[start].offset;
            let mut end = start + 1;
            while end < entries.len()
                && entries[end].offset + entries[end].size - first <= RANGE_BYTES
            {
                end += 1;
            }
            let last = &entries[end - 1];
            out.push(Run {
                file: i,
                entries: start..end,
                bytes: first..last.offset + last.size,
            });
            start = end;
        }
    }
    out
}

struct Job {
    run: usize,
    bytes: Bytes,
}

struct Applied {
    bytes_fetched: u64,
    last_trailer: offloop_ltx::Trailer,
}

/// Reads, verifies and writes every frame of the plan into `file`.
fn apply(
    store: &dyn Store,
    plan: &[LtxFile],
    mut opened: Vec<OpenedFile>,
    file: &File,
    commit: u32,
    opts: &RestoreOptions,
) -> Result<Applied> {
    let page_size = opened[opened.len() - 1].header.page_size;
    let mut bytes_fetched: u64 = opened.iter().map(|o| o.read).sum();
    let wholes: Vec<Option<Bytes>> = opened.iter_mut().map(|o| o.whole.take()).collect();
    let runs = runs(&opened);
    let pages = PageOwners::new(commit);
    let abort = AtomicBool::new(false);
    let threads = opts.threads.max(1);
    let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(threads);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, Result<Crc64>)>();
    let mut crcs: Vec<Option<Crc64>> = vec![None; runs.len()];

    let read = std::thread::scope(|s| {
        for n in 0..threads {
            let (jobs, done) = (job_rx.clone(), done_tx.clone());
            let (pages, abort, runs, opened) = (&pages, &abort, &runs, &opened);
            std::thread::Builder::new()
                .name(format!("offloop-restore-{n}"))
                .spawn_scoped(s, move || {
                    for job in jobs {
                        // After an error the queue is drained unread.
                        if abort.load(Ordering::Relaxed) {
                            continue;
                        }
                        let run = &runs[job.run];
                        let result = catch_unwind(AssertUnwindSafe(|| {
                            decode_run(run, &job.bytes, &opened[run.file], file, pages)
                        }))
                        .unwrap_or_else(|p| Err(Error::Panic(panic_message(p))))
                        .map_err(|e| match e {
                            Error::Ltx { source, .. } => Error::Ltx {
                                file: plan[run.file].label(),
                                source,
                            },
                            other => other,
                        });
                        if done.send((job.run, result)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::io("start a restore thread", e))?;
        }
        drop(done_tx);
        drop(job_rx);

        let gone = || Error::Panic("every restore thread is gone".into());
        let mut ranges: Vec<(LtxFile, Range<u64>)> = Vec::new();
        let mut ranged: Vec<usize> = Vec::new();
        let mut queued = Ok(());
        for (k, run) in runs.iter().enumerate() {
            match &wholes[run.file] {
                Some(whole) => {
                    let bytes = whole.slice(run.bytes.start as usize..run.bytes.end as usize);
                    if job_tx.send(Job { run: k, bytes }).is_err() {
                        queued = Err(gone());
                        break;
                    }
                }
                None => {
                    ranges.push((plan[run.file], run.bytes.clone()));
                    ranged.push(k);
                }
            }
        }
        drop(wholes);
        let read = queued.and_then(|()| {
            store.read_ranges(&ranges, opts.fetches, &mut |i, bytes| {
                if abort.load(Ordering::Relaxed) {
                    return Err(Error::Plan("restore stopped after an error".into()));
                }
                let (f, range) = &ranges[i];
                check_read(f, range, &bytes)?;
                bytes_fetched += bytes.len() as u64;
                job_tx
                    .send(Job {
                        run: ranged[i],
                        bytes,
                    })
                    .map_err(|_| gone())
            })
        });
        if read.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        drop(job_tx);
        let mut decode_error = None;
        for (k, result) in done_rx {
            match result {
                Ok(crc) => crcs[k] = Some(crc),
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    decode_error.get_or_insert(e);
                }
            }
        }
        // A decoding error stops the reading too: report the cause.
        decode_error.or(read.err()).map_or(Ok(()), Err)
    });
    read?;

    let mut prev: Option<&OpenedFile> = None;
    let mut runs_of = runs.iter().zip(&crcs).peekable();
    for (i, (info, o)) in plan.iter().zip(&opened).enumerate() {
        let mut file_crcs = Vec::new();
        while let Some((_, crc)) = runs_of.next_if(|(r, _)| r.file == i) {
            file_crcs.push(
                crc.ok_or_else(|| {
                    Error::Verify(format!("{} was not fully decoded", info.label()))
                })?,
            );
        }
        verify_file_checksum(&o.header_bytes, &file_crcs, &o.tail).map_err(|source| {
            Error::Ltx {
                file: info.label(),
                source,
            }
        })?;
        if let Some(p) = prev {
            let chained = p.header.has_checksums()
                && o.header.has_checksums()
                && o.header.min_txid == p.header.max_txid.next();
            if chained && o.header.pre_apply_checksum != p.tail.trailer.post_apply_checksum {
                return Err(Error::Verify(format!(
                    "{} does not follow the file before it (pre-apply checksum)",
                    info.label()
                )));
            }
        }
        prev = Some(o);
    }
    if let Some(missing) = pages.first_missing(page_size) {
        return Err(Error::Verify(format!(
            "page {missing} is in none of the plan's files"
        )));
    }
    let last_trailer = opened[opened.len() - 1].tail.trailer;
    Ok(Applied {
        bytes_fetched,
        last_trailer,
    })
}

/// Decodes one run's frames from `bytes` into `file`, returning their CRC.
fn decode_run(
    run: &Run,
    bytes: &[u8],
    opened: &OpenedFile,
    file: &File,
    pages: &PageOwners,
) -> Result<Crc64> {
    let entries = &opened.tail.index.entries[run.entries.clone()];
    let page_size = opened.header.page_size;
    decode_frames(bytes, run.bytes.start, page_size, entries, |pgno, data| {
        pages
            .write(run.file, pgno, data, file, page_size)
            .map_err(offloop_ltx::Error::Io)
    })
    .map_err(|source| Error::Ltx {
        file: String::new(),
        source,
    })
}

/// Which plan file last wrote each page (index + 1; 0 = none yet).
struct PageOwners {
    owners: Vec<AtomicU32>,
    stripes: Vec<Mutex<()>>,
}

impl PageOwners {
    fn new(commit: u32) -> Self {
        PageOwners {
            owners: (0..=commit).map(|_| AtomicU32::new(0)).collect(),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Writes `data` as page `pgno` unless a newer file already did. Pages
    /// past the database's final size (it shrank) are dropped.
    fn write(
        &self,
        file_index: usize,
        pgno: u32,
        data: &[u8],
        out: &File,
        page_size: u32,
    ) -> std::io::Result<()> {
        let Some(owner) = self.owners.get(pgno as usize) else {
            return Ok(());
        };
        let me = file_index as u32 + 1;
        let _held = self.stripes[pgno as usize % STRIPES]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if owner.load(Ordering::Relaxed) < me {
            out.write_all_at(data, u64::from(pgno - 1) * u64::from(page_size))?;
            owner.store(me, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The first page (lock page aside) no file wrote.
    fn first_missing(&self, page_size: u32) -> Option<u32> {
        let lock = offloop_ltx::lock_pgno(page_size);
        (1..self.owners.len() as u32)
            .find(|&p| p != lock && self.owners[p as usize].load(Ordering::Relaxed) == 0)
    }
}

/// The database checksum of the first `commit` pages of `file`, summed on
/// `threads` threads.
fn database_checksum(file: &File, page_size: u32, commit: u32, threads: usize) -> Result<u64> {
    let lock = offloop_ltx::lock_pgno(page_size);
    let per = commit.div_ceil(threads.max(1) as u32).max(1);
    let parts: Vec<Result<DatabaseChecksum>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=commit)
            .step_by(per as usize)
            .map(|first| {
                s.spawn(move || {
                    let mut sum = DatabaseChecksum::new();
                    let mut page = vec![0u8; page_size as usize];
                    for pgno in first..(first + per).min(commit + 1) {
                        if pgno == lock {
                            continue;
                        }
                        file.read_exact_at(&mut page, u64::from(pgno - 1) * u64::from(page_size))
                            .map_err(|e| Error::io("read back the restored database", e))?;
                        sum.toggle_page(pgno, &page);
                    }
                    Ok(sum)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|p| Err(Error::Panic(panic_message(p))))
            })
            .collect()
    });
    let mut total = DatabaseChecksum::new();
    for part in parts {
        total.merge(part?);
    }
    Ok(total.value())
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Removes the temporary output unless the restore finished.
struct TempFile(Option<PathBuf>);

impl TempFile {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
